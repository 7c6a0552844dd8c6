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
		s.audit(&log, nil, []byte(raw), args, time.Millisecond, nil)
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
