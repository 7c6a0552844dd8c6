package tools_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// bigText is n characters of text with what JSON escapes (quotes,
// angle brackets, line breaks), so escaping is counted too.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Line %d of the \"quote\" <b>&</b> é\n", i)
	}
	return b.String()[:n]
}

func TestGetEmailPagesAHugeBody(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		s.maxResult = mcptest.MinBudget
		c := s.connect(t, nil, "")
		body := bigText(60000)
		out := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Big", "body": body, "body_type": "text"})
		type page struct {
			Body           string `json:"body"`
			BodyOffset     int    `json:"body_offset"`
			BodyTotalChars int    `json:"body_total_chars"`
			Truncated      bool   `json:"truncated"`
			NextOffset     *int   `json:"next_offset"`
		}
		pages := mcptest.Pages(t, c, mcptest.MinBudget, "get_email", map[string]any{"message_id": out.ID, "offset": 0, "max_chars": 100000},
			"offset", func(p page) (any, bool) { return mcptest.Offset(p.NextOffset) }, 100)
		var got strings.Builder
		offset := 0
		for _, p := range pages {
			if p.BodyOffset != offset || p.Truncated != (p.NextOffset != nil) || p.Body == "" {
				t.Fatalf("page at %d: offset %d, truncated %v, next %v, %d chars", offset, p.BodyOffset, p.Truncated, p.NextOffset, len(p.Body))
			}
			got.WriteString(p.Body)
			if p.NextOffset != nil {
				offset = *p.NextOffset
			}
		}
		if last, n := pages[len(pages)-1], utf8.RuneCountInString(got.String()); last.BodyTotalChars != n {
			t.Errorf("total %d, read %d", last.BodyTotalChars, n)
		}
		if strings.TrimSpace(strings.ReplaceAll(got.String(), "\r\n", "\n")) != strings.TrimSpace(body) {
			t.Errorf("the pages do not add up to the body")
		}
		if len(pages) < 5 {
			t.Errorf("a 60000-character body came in %d results of at most %d bytes", len(pages), mcptest.MinBudget)
		}
		t.Logf("%s: 60000 characters in %d results of at most %d bytes", s.name, len(pages), mcptest.MinBudget)
	})
}

func TestThreadHistoryPagesWithinTheBudget(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		s.maxResult = mcptest.MinBudget
		c := s.connect(t, nil, "")
		first := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Trip", "body": bigText(1000), "body_type": "text"})
		ids := []string{first.ID}
		for i := 1; i < 12; i++ {
			r := send(t, c, "send_email", map[string]any{"to": "a@client.example", "reply_to_message_id": first.ID,
				"body": fmt.Sprintf("reply %d\n%s", i, bigText(1000)), "body_type": "text"})
			ids = append(ids, r.ID)
		}
		type page struct {
			MessageCount   int  `json:"message_count"`
			EarlierOmitted int  `json:"earlier_omitted"`
			Truncated      bool `json:"truncated"`
			NextOffset     *int `json:"next_offset"`
			Messages       []struct {
				ID string `json:"id"`
			} `json:"messages"`
		}
		pages := mcptest.Pages(t, c, mcptest.MinBudget, "get_thread_history", map[string]any{"thread_id": first.ThreadID, "max_messages": 50, "offset": 0},
			"offset", func(p page) (any, bool) { return mcptest.Offset(p.NextOffset) }, 12)
		var seen []string
		offset := 0
		for _, p := range pages {
			if p.MessageCount != 12 || len(p.Messages) == 0 {
				t.Fatalf("page at %d: %+v", offset, p)
			}
			var ids []string
			for _, m := range p.Messages {
				ids = append(ids, m.ID)
			}
			seen = append(ids, seen...) // older pages come before
			if p.EarlierOmitted != 12-len(seen) {
				t.Errorf("earlier_omitted %d after %d messages", p.EarlierOmitted, len(seen))
			}
			if p.NextOffset == nil {
				break
			}
			if !p.Truncated || *p.NextOffset != len(seen) {
				t.Fatalf("truncated %v, next_offset %d after %d messages", p.Truncated, *p.NextOffset, len(seen))
			}
			offset = *p.NextOffset
		}
		if strings.Join(seen, ",") != strings.Join(ids, ",") {
			t.Errorf("pages gave %v, the thread is %v", seen, ids)
		}
		if len(pages) < 3 {
			t.Errorf("12 messages of 1000 characters came in %d results", len(pages))
		}
		t.Logf("%s: 12 messages of 1000 characters in %d results of at most %d bytes", s.name, len(pages), mcptest.MinBudget)
	})
}

func TestSearchPagesWithinTheBudget(t *testing.T) {
	onEveryBackend(t, func(t *testing.T, s *server) {
		s.maxResult = mcptest.MinBudget
		c := s.connect(t, nil, "")
		want := map[string]bool{}
		for i := range 30 {
			subject := fmt.Sprintf("Quote %d %s", i, strings.Repeat("<long & \"quoted\"> subject ", 30))
			want[send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": subject, "body": "b", "body_type": "text"}).ID] = true
		}
		type page struct {
			Messages []struct {
				ID string `json:"id"`
			} `json:"messages"`
			NextPageToken string `json:"next_page_token"`
			Truncated     bool   `json:"truncated"`
		}
		pages := mcptest.Pages(t, c, mcptest.MinBudget, "search_emails", map[string]any{"query": "Quote", "max_results": 50},
			"page_token", func(p page) (any, bool) { return mcptest.Token(p.NextPageToken) }, 31)
		got, cut := map[string]bool{}, false
		for _, p := range pages {
			cut = cut || p.Truncated
			for _, m := range p.Messages {
				if got[m.ID] {
					t.Errorf("%s came twice", m.ID)
				}
				got[m.ID] = true
			}
		}
		if len(got) != len(want) || !cut {
			t.Errorf("%d of %d messages found in %d pages (cut %v)", len(got), len(want), len(pages), cut)
		}
		t.Logf("%s: 30 results of 1 KB in %d pages of at most %d bytes", s.name, len(pages), mcptest.MinBudget)
	})
}

func TestBase64AttachmentOverTheBudget(t *testing.T) {
	s := localServer(t)
	s.maxResult = mcptest.MinBudget
	c := s.connect(t, nil, "")
	data := []byte(strings.Repeat("x", 20000))
	out := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "File", "body": "b", "body_type": "text",
		"attachments": []map[string]any{{"filename": "big.txt", "content": base64.StdEncoding.EncodeToString(data)}}})
	var msg struct {
		Attachments []struct {
			AttachmentID string `json:"attachment_id"`
		} `json:"attachments"`
	}
	mcptest.Structured(t, c.Call("get_email", map[string]any{"message_id": out.ID}), &msg)
	b := mcptest.FailCode(t, c.Call("get_attachment", map[string]any{"message_id": out.ID, "attachment_id": msg.Attachments[0].AttachmentID,
		"mode": "base64"}), mcperr.Validation)
	if b.Data.Field != "mode" || !strings.Contains(b.Message, "mode file") {
		t.Errorf("%+v", b)
	}
	var saved struct {
		Path string `json:"path"`
		Size int    `json:"size"`
	}
	mcptest.Structured(t, c.Call("get_attachment", map[string]any{"message_id": out.ID, "attachment_id": msg.Attachments[0].AttachmentID}), &saved)
	if saved.Size != len(data) || saved.Path == "" {
		t.Errorf("mode file: %+v", saved)
	}
}

// A message too large for the budget on its own comes with as much of its
// body as fits.
func TestThreadHistoryClipsAMessageOverTheBudget(t *testing.T) {
	s := localServer(t)
	s.maxResult = mcptest.MinBudget
	c := s.connect(t, nil, "")
	first := send(t, c, "send_email", map[string]any{"to": "a@client.example", "subject": "Huge", "body": bigText(20000), "body_type": "text"})
	var page struct {
		Truncated bool `json:"truncated"`
		Messages  []struct {
			BodyText      string `json:"body_text"`
			BodyTruncated bool   `json:"body_truncated"`
		} `json:"messages"`
		NextOffset *int `json:"next_offset"`
	}
	mcptest.Sized(t, c, mcptest.MinBudget, "get_thread_history", map[string]any{"thread_id": first.ThreadID, "max_body_chars": 20000}, &page)
	if !page.Truncated || len(page.Messages) != 1 || !page.Messages[0].BodyTruncated || len(page.Messages[0].BodyText) < 1000 || page.NextOffset != nil {
		t.Errorf("truncated %v, %d messages, next %v", page.Truncated, len(page.Messages), page.NextOffset)
	}
}

// The rules between arguments are the same on every sending tool.
func TestSendingRulesAreShared(t *testing.T) {
	c := localServer(t).connect(t, nil, "")
	for _, tool := range []string{"send_email", "create_draft"} {
		b := mcptest.FailCode(t, c.Call(tool, map[string]any{"to": "a@client.example", "body": "b"}), mcperr.Validation)
		if b.Data.Field != "subject" {
			t.Errorf("%s without subject: %+v", tool, b)
		}
		b = mcptest.FailCode(t, c.Call(tool, map[string]any{"to": "a@client.example", "subject": "s", "body": "b", "body_type": "markdown"}), mcperr.Validation)
		if b.Data.Field != "body_type" {
			t.Errorf("%s body_type markdown: %+v", tool, b)
		}
	}
	for _, tool := range []string{"send_email", "create_draft", "send_template_email"} {
		for att, field := range map[string]string{`{"content":"eA==","path":"a.txt","filename":"a.txt"}`: "attachments[0]",
			`{"content":"eA=="}`: "attachments[0].filename", `{"filename":"a.txt"}`: "attachments[0]"} {
			var a map[string]any
			_ = json.Unmarshal([]byte(att), &a)
			args := map[string]any{"to": "a@client.example", "subject": "s", "body": "b", "attachments": []any{a}}
			if tool == "send_template_email" {
				args = map[string]any{"to": "a@client.example", "template_name": "follow_up", "attachments": []any{a},
					"template_data": pairs(map[string]any{"client_name": "A", "message": "m"})}
			}
			if b := mcptest.FailCode(t, c.Call(tool, args), mcperr.Validation); b.Data.Field != field {
				t.Errorf("%s %s: field %q, want %q", tool, att, b.Data.Field, field)
			}
		}
	}
}
