package engine

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/validate"
	"github.com/rs/zerolog"
)

// TestAuditArgsCompact: the audit line carries small arguments as one
// compact JSON value, whether the client sent them compact (taken as they
// are) or spread over lines with white space (compacted); a call without
// arguments has no args field, and the line is JSON either way.
func TestAuditArgsCompact(t *testing.T) {
	s := &Server{}
	for _, raw := range []string{
		`{"path":"a b.txt","head":3}`,
		"{\n  \"path\": \"a b.txt\",\r\n\t\"head\": 3\n}",
		`{"path":"a\tb\nc","head":3}`,
		``,
		`{}`,
	} {
		var out bytes.Buffer
		log := zerolog.New(&out)
		args, err := validate.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		s.audit(&log, nil, []byte(raw), args, false, time.Millisecond, nil)
		line := strings.TrimSuffix(out.String(), "\n")
		if strings.Contains(line, "\n") {
			t.Fatalf("audit line spans lines: %q", line)
		}
		var got struct {
			Args json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		var want bytes.Buffer
		if raw != "" {
			if err := json.Compact(&want, []byte(raw)); err != nil {
				t.Fatal(err)
			}
		}
		if string(got.Args) != want.String() {
			t.Errorf("args of %q logged as %s, want %s", raw, got.Args, want.String())
		}
	}
}

// TestAuditAdmittedArgsAsDecoded: arguments admitted without decoding are
// logged exactly as the same arguments decoded would be — as sent when
// nothing needs hiding, rewritten when a key is secret-named (at any depth,
// escaped or not), an argument is omitted, a string is long or a URL holds
// credentials, or the document is large.
func TestAuditAdmittedArgsAsDecoded(t *testing.T) {
	s := &Server{}
	omit := []string{"content"}
	long := strings.Repeat("x", auditArgLimit+1)
	for _, c := range []struct {
		raw     string
		rewrite bool
	}{
		{`{"path":"a b.txt","head":3}`, false},
		{"{\n  \"path\": \"a\",\n\t\"head\": 3\n}", false},
		{`{"filters":[{"column":"id","op":"eq","value":42}]}`, false},
		{`{"url":"https://example.com/a?q=1"}`, false},
		{`{"nested":{"content":"kept below the top"}}`, false},
		{`{"api_key":"k"}`, true},
		{`{"outer":[{"Password":"p"}]}`, true},
		{`{"p\u0061ssword":"p"}`, true},
		{`{"content":"omitted"}`, true},
		{`{"url":"https://user:pw@example.com/"}`, true},
		{`{"url":"https:\/\/alice:hunter2@db.example.com/x"}`, true},
		{`{"url":"https\u003a//h/?token=SECRET"}`, true},
		{`{"url":"https:\/\/example.com\/a"}`, false},
		{`{"text":"` + strings.Repeat("\xff", 200) + `"}`, true},
		{`{"text":"` + strings.Repeat("\xff", 80) + `"}`, false},
		{`{"url":"https://example.com/?token=t"}`, true},
		{`{"text":"` + long + `"}`, true},
		{`{"items":[` + strings.Repeat(`"abcdefgh",`, 120) + `"z"]}`, true},
	} {
		raw := []byte(c.raw)
		if got := rawNeedsRewrite(raw, omit) || len(raw) > 4*auditArgLimit; got != c.rewrite {
			t.Errorf("%.60s: rewrite %v, want %v", c.raw, got, c.rewrite)
		}
		args, err := validate.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		line := func(args any, admitted bool) string {
			var out bytes.Buffer
			log := zerolog.New(&out)
			s.audit(&log, omit, raw, args, admitted, time.Millisecond, nil)
			return out.String()
		}
		if decoded, quick := line(args, false), line(nil, true); decoded != quick {
			t.Errorf("%.60s:\ndecoded  %s\nadmitted %s", c.raw, decoded, quick)
		}
	}
}
