package query_test

import (
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestMatch(t *testing.T) {
	now := time.Date(2025, 11, 20, 12, 0, 0, 0, time.Local)
	doc := &query.Doc{From: "Priya Raman <priya@client.example>", To: "desk@jetvision.example", Cc: "ops@client.example", Bcc: "archive@jetvision.example",
		Subject: "Re: Your flight options", Body: "The Challenger 350 works for us.", Date: time.Date(2025, 11, 14, 9, 0, 0, 0, time.Local),
		Labels: []string{"INBOX", "inbox"}, MessageID: "<m1@client.example>", Filenames: []string{"passports.pdf"}, Me: "desk@jetvision.example"}
	for q, want := range map[string]bool{
		"":                                   true,
		"challenger":                         true,
		"\"challenger 350\"":                 true,
		"\"350 challenger\"":                 false,
		"from:priya":                         true,
		"from:desk":                          false,
		"to:ops@client.example":              true,
		"cc:ops":                             true,
		"bcc:archive":                        true,
		"subject:\"flight options\"":         true,
		"has:attachment":                     true,
		"filename:pdf":                       true,
		"-has:attachment":                    false,
		"after:2025/11/01 before:2025/11/15": true,
		"after:2025-11-15":                   false,
		"newer_than:7d":                      true,
		"newer_than:3d":                      false,
		"older_than:1m":                      false,
		"older_than:1y":                      false,
		"in:inbox":                           true,
		"label:sent":                         false,
		"in:anywhere":                        true,
		"rfc822msgid:m1@client.example":      true,
		"rfc822msgid:<other@x>":              false,
		"challenger -works":                  false,
		"passports":                          true,
		"after:1731000000":                   true,
		"challeng":                           false,
		"350":                                true,
		"challenger OR nothing":              true,
		"nothing | challenger":               true,
		"nothing OR nowhere":                 false,
		"{nothing challenger}":               true,
		"{nothing nowhere}":                  false,
		"(challenger works)":                 true,
		"subject:(flight options)":           true,
		"subject:(flight challenger)":        false,
		"subject:{nothing flight}":           true,
		"-{nothing nowhere}":                 true,
		"nothing challenger OR works":        false,
		"challenger nothing OR works":        true,
		"from:me":                            false,
		"to:me":                              true,
		"-from:me":                           true,
		"from:client.example":                true,
		"from:client.exam":                   false,
		"challenger AND works":               true,
	} {
		p, err := query.Parse(q, now)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		d := *doc
		if got := p.Match(&d); got != want {
			t.Errorf("%q matched %v, want %v", q, got, want)
		}
	}
	for _, bad := range []string{"is:unread", "a AROUND 3 b", "(a b", "a b)", "{}", "a OR", "OR a", "a | -", "subject:&", "subject:(from:x)", "label:(a b", "has:drive", "after:yesterday", "newer_than:7w", "newer_than:d", "\"open", "from:"} {
		_, err := query.Parse(bad, now)
		if me, ok := err.(*mcperr.Error); !ok || me.Field != "query" {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
