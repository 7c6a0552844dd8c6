package tools

import (
	"encoding/json"
	"testing"
)

func TestWithProperties(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"object","additionalProperties":false}`, `{"additionalProperties":false,"properties":{},"type":"object"}`},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{`not json`, `not json`},
		{`[1]`, `[1]`},
	} {
		if got := string(withProperties(json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("withProperties(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := string(noArgsSchema); got != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("noArgsSchema = %s", got)
	}
}
