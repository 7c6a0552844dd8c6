package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

const testSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["query"],
  "properties": {
    "query":  {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
    "note":   {"type": "string"},
    "limit":  {"type": "integer", "minimum": 1, "maximum": 100},
    "ratio":  {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "mode":   {"type": "string", "enum": ["fast", "slow"]},
    "email":  {"type": "string", "format": "email"},
    "tags":   {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
    "filters": {
      "type": "object",
      "additionalProperties": false,
      "required": ["status"],
      "properties": {
        "limit":  {"type": "integer", "maximum": 10},
        "status": {"type": "string"}
      }
    }
  }
}`

func mustCompile(t *testing.T, raw string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

// jsonValue renders an error's Value the way a client will see it.
func jsonValue(t *testing.T, e *mcperr.Error) string {
	t.Helper()
	var body struct {
		Data struct {
			Value json.RawMessage `json:"value"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.JSON(), &body); err != nil {
		t.Fatalf("error JSON: %v", err)
	}
	if body.Data.Value == nil {
		return "<absent>"
	}
	return string(body.Data.Value)
}

func TestCheckValid(t *testing.T) {
	s := mustCompile(t, testSchema)
	for _, args := range []string{
		`{"query":"ab"}`,
		`{"query":"abcde","limit":1,"ratio":0.5,"mode":"slow","email":"a@b.example","tags":["x","y"],"filters":{"status":"open","limit":10}}`,
		`{"query":"ab","limit":100}`,
		` {"query":"ab"} `,
	} {
		if e := s.Check(json.RawMessage(args)); e != nil {
			t.Errorf("Check(%s) = %v, want nil", args, e)
		}
	}
}

func TestCheckErrors(t *testing.T) {
	s := mustCompile(t, testSchema)
	long := strings.Repeat("x", 300)
	tests := []struct {
		name         string
		args         string
		wantField    string
		wantValue    string // as JSON in the client body; "<absent>" when omitted
		wantExpected string
		wantMsg      []string // substrings of Message
	}{
		{"required", `{}`, "query", "<absent>", "a value (required)", []string{"query is required"}},
		{"additional property", `{"query":"ab","querry":"x"}`, "querry", "<absent>", "no such property", []string{"querry is not a known argument"}},
		{"type string", `{"query":5}`, "query", "5", "string", []string{"query: ", "Expected: string", "given: integer"}},
		{"type integer", `{"query":"ab","limit":1.5}`, "limit", "1.5", "integer", []string{"limit: "}},
		{"type object value not echoed", `{"query":{"a":"secret-ish"}}`, "query", "<absent>", "string", []string{"query"}},
		{"type array value not echoed", `{"query":["a"]}`, "query", "<absent>", "string", nil},
		{"enum", `{"query":"ab","mode":"turbo"}`, "mode", `"turbo"`, `one of "fast", "slow"`, []string{"mode", "fast"}},
		{"minimum", `{"query":"ab","limit":0}`, "limit", "0", ">= 1", []string{"limit: "}},
		{"maximum", `{"query":"ab","limit":101}`, "limit", "101", "<= 100", []string{"limit: "}},
		{"exclusive minimum", `{"query":"ab","ratio":0}`, "ratio", "0", "> 0", nil},
		{"exclusive maximum", `{"query":"ab","ratio":1}`, "ratio", "1", "< 1", nil},
		{"minLength", `{"query":"a"}`, "query", `"a"`, "at least 2 characters", nil},
		{"maxLength", `{"query":"abcdef"}`, "query", `"abcdef"`, "at most 5 characters", []string{"query: too long: 6 characters > 5"}},
		{"pattern", `{"query":"AB"}`, "query", `"AB"`, "matching ^[a-z]+$", []string{"pattern"}},
		{"format", `{"query":"ab","email":"nope"}`, "email", `"nope"`, "format email", nil},
		{"nested maximum", `{"query":"ab","filters":{"status":"x","limit":11}}`, "filters.limit", "11", "<= 10", []string{"filters.limit"}},
		{"nested required", `{"query":"ab","filters":{}}`, "filters.status", "<absent>", "a value (required)", []string{"filters.status is required"}},
		{"nested additional", `{"query":"ab","filters":{"status":"x","extra":1}}`, "filters.extra", "<absent>", "no such property", []string{"filters.extra is not a known argument"}},
		{"nested wrong type", `{"query":"ab","filters":[]}`, "filters", "<absent>", "object", nil},
		{"array item", `{"query":"ab","tags":["ok",7]}`, "tags.1", "7", "string", []string{"tags.1"}},
		{"minItems", `{"query":"ab","tags":[]}`, "tags", "<absent>", "at least 1 items", nil},
		{"maxItems", `{"query":"ab","tags":["a","b","c"]}`, "tags", "<absent>", "at most 2 items", []string{"tags: too many items: 3 > 2"}},
		{"root not an object", `[1,2]`, "arguments", "<absent>", "object", []string{"arguments"}},
		{"root a string", `"hello"`, "arguments", `"hello"`, "object", nil},
		{"invalid JSON", `{"query":`, "arguments", "<absent>", "a JSON object", []string{"not valid JSON"}},
		{"not JSON at all", `query=ab`, "arguments", "<absent>", "a JSON object", []string{"not valid JSON"}},
		{"long value truncated", `{"query":"ab","mode":"` + long + `"}`, "mode", `"` + strings.Repeat("x", 200) + `…"`, `one of "fast", "slow"`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := s.Check(json.RawMessage(tc.args))
			if e == nil {
				t.Fatalf("Check(%s) = nil, want an error", tc.args)
			}
			if e.Code != mcperr.Validation {
				t.Errorf("Code = %s, want %s", e.Code, mcperr.Validation)
			}
			if e.Retryable() {
				t.Error("a validation error must not be retryable as is")
			}
			if e.Field != tc.wantField {
				t.Errorf("Field = %q, want %q (message %q)", e.Field, tc.wantField, e.Message)
			}
			if got := jsonValue(t, e); got != tc.wantValue {
				t.Errorf("Value = %s, want %s", got, tc.wantValue)
			}
			if e.Expected != tc.wantExpected {
				t.Errorf("Expected = %q, want %q", e.Expected, tc.wantExpected)
			}
			for _, sub := range tc.wantMsg {
				if !strings.Contains(e.Message, sub) {
					t.Errorf("Message %q does not contain %q", e.Message, sub)
				}
			}
			if strings.Contains(e.Message, "; also:") {
				t.Errorf("single error reported as several: %q", e.Message)
			}
		})
	}
}

func TestCheckMultipleErrors(t *testing.T) {
	s := mustCompile(t, testSchema)
	// Four problems; the first by field name is reported in the fields, all of
	// them in the message, in field order, whatever order they come in.
	args := `{"zeta":1,"mode":"turbo","limit":0,"alpha":true}`
	var first string
	for i := 0; i < 20; i++ { // gojsonschema walks maps; the result must not vary
		e := s.Check(json.RawMessage(args))
		if e == nil {
			t.Fatal("Check = nil")
		}
		if e.Field != "alpha" || e.Expected != "no such property" {
			t.Fatalf("first error: field %q expected %q, want alpha / no such property", e.Field, e.Expected)
		}
		want := []string{"alpha is not a known argument", "limit: ", "mode ", "query is required", "zeta is not a known argument"}
		pos := -1
		for _, w := range want {
			p := strings.Index(e.Message, w)
			if p < 0 {
				t.Fatalf("message %q lacks %q", e.Message, w)
			}
			if p < pos {
				t.Fatalf("message %q does not list %q in field order", e.Message, w)
			}
			pos = p
		}
		if n := strings.Count(e.Message, "; also: "); n != 1 {
			t.Errorf("message has %d '; also: ' separators, want 1: %q", n, e.Message)
		}
		if n := strings.Count(e.Message, "; "); n != len(want)-1 {
			t.Errorf("message lists %d errors, want %d: %q", n+1, len(want), e.Message)
		}
		if i == 0 {
			first = e.Message
		} else if e.Message != first {
			t.Fatalf("message varies between runs:\n%q\n%q", first, e.Message)
		}
	}
}

func TestCheckEmptyArgumentsAreAnEmptyObject(t *testing.T) {
	optional := mustCompile(t, `{"type":"object","properties":{"x":{"type":"string"}}}`)
	required := mustCompile(t, `{"type":"object","required":["x"],"properties":{"x":{"type":"string"}}}`)
	for _, raw := range []json.RawMessage{nil, json.RawMessage(""), json.RawMessage("   "), json.RawMessage("null"), json.RawMessage(" null\n"), json.RawMessage("{}")} {
		if e := optional.Check(raw); e != nil {
			t.Errorf("optional.Check(%q) = %v, want nil", raw, e)
		}
		e := required.Check(raw)
		if e == nil {
			t.Errorf("required.Check(%q) = nil, want required error", raw)
			continue
		}
		if e.Field != "x" || e.Expected != "a value (required)" {
			t.Errorf("required.Check(%q): field %q expected %q; want the missing x, not a type error", raw, e.Field, e.Expected)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{"empty", ``, "empty schema"},
		{"not JSON", `{"type":`, "compile schema"},
		{"bad type keyword", `{"type":"objekt"}`, "compile schema"},
		{"type not a string", `{"type":5}`, "compile schema"},
		{"bad pattern", `{"type":"string","pattern":"(["}`, "compile schema"},
		{"minLength negative", `{"type":"string","minLength":-1}`, "compile schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile(json.RawMessage(tc.raw))
			if err == nil {
				t.Fatalf("Compile(%s) succeeded", tc.raw)
			}
			if s != nil {
				t.Error("Compile returned a schema with its error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestExpectedFallsBackToDescription(t *testing.T) {
	// "const" has no special case: Expected is gojsonschema's own wording.
	s := mustCompile(t, `{"type":"object","properties":{"v":{"const":"x"}}}`)
	e := s.Check(json.RawMessage(`{"v":"y"}`))
	if e == nil {
		t.Fatal("Check = nil")
	}
	if e.Field != "v" || e.Expected == "" {
		t.Fatalf("field %q expected %q", e.Field, e.Expected)
	}
	if !strings.Contains(e.Message, "v") {
		t.Errorf("message %q does not name the field", e.Message)
	}
}

func TestRootLevelNonPropertyErrors(t *testing.T) {
	s := mustCompile(t, `{"type":"object","minProperties":2}`)
	e := s.Check(json.RawMessage(`{"a":1}`))
	if e == nil {
		t.Fatal("Check = nil")
	}
	if e.Field != "arguments" {
		t.Errorf("Field = %q, want arguments for a root-level failure", e.Field)
	}
	if !strings.HasPrefix(e.Message, "arguments: ") {
		t.Errorf("Message = %q, want it to start with the field", e.Message)
	}
}

func TestDecodeRefusesAmbiguousAndHostileInput(t *testing.T) {
	cases := map[string]string{
		"duplicate key":        `{"path":"/etc/passwd","path":"a.txt"}`,
		"nested duplicate key": `{"a":{"b":1,"b":2}}`,
		"trailing data":        `{"a":1} x`,
		"too deep":             strings.Repeat("[", 100) + strings.Repeat("]", 100),
		"not JSON":             `{"a":`,
	}
	for name, in := range cases {
		if _, err := Decode(json.RawMessage(in)); err == nil {
			t.Errorf("%s: Decode(%q) accepted", name, in)
		}
	}
	_, err := Decode(json.RawMessage(`{"k":1,"k":2}`))
	if e := DecodeError(err); e.Code != mcperr.Validation || !strings.Contains(e.Message, `duplicate key "k"`) {
		t.Fatalf("duplicate key error: %+v", e)
	}
	if e := DecodeError(errors.New("boom")); !strings.Contains(e.Message, "not valid JSON") {
		t.Fatalf("plain decode error: %+v", e)
	}
	v, err := Decode(json.RawMessage(`{"a":[1,"x",true,null,{"b":12345678901234567890}]}`))
	if err != nil {
		t.Fatal(err)
	}
	arr := v.(map[string]any)["a"].([]any)
	if arr[4].(map[string]any)["b"] != json.Number("12345678901234567890") || arr[2] != true || arr[3] != nil {
		t.Fatalf("decoded %#v", v)
	}
}

func TestHostileArgumentsCostLittle(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`{"path":"a"`)
	for i := 0; i < 50_000; i++ {
		fmt.Fprintf(&b, `,"k%d":%d`, i, i)
	}
	b.WriteString("}")
	v, err := Decode(json.RawMessage(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	e := s.CheckValue(v)
	if e == nil || len(e.Message) > 300 || !strings.Contains(e.Message, "50000 unknown arguments") || !strings.Contains(e.Message, "and 49995 more") {
		t.Fatalf("error not capped: %v", e)
	}
	// Over the value budget, decoding stops.
	b.Reset()
	b.WriteString("[")
	for i := 0; i < DefaultLimits.MaxValues+1; i++ {
		b.WriteString("0,")
	}
	b.WriteString("0]")
	if _, err := Decode(json.RawMessage(b.String())); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("value budget: %v", err)
	}
	if e := DecodeError(fmt.Errorf("wrap: %w", ErrTooLarge)); e.Expected != "smaller arguments" {
		t.Fatalf("DecodeError(too large) = %v", e)
	}
	if _, err := Decode(json.RawMessage(strings.Repeat("[", 100) + strings.Repeat("]", 100))); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("depth: %v", err)
	}
}

func TestManyProblemsAreCapped(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	items := make([]string, 1000)
	for i := range items {
		items[i] = `"x"`
	}
	v, _ := Decode(json.RawMessage(`{"a":[` + strings.Join(items, ",") + `]}`))
	e := s.CheckValue(v)
	if e == nil || strings.Count(e.Message, "Invalid type") > maxReported || !strings.Contains(e.Message, "and 995 more problems") {
		t.Fatalf("problems not capped: %v", e)
	}
}

func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5e-3,-0,"x\u00e9",true,false,null]}`, `{"a":}`, `[1,]`, `"\ud83d\ude00"`, `"\ud800x"`, `{"a":"\\"}`, "\"a\xffb\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Limits{MaxDepth: 1000, MaxValues: 1 << 30}.Decode(b)
		var w any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		werr := dec.Decode(&w)
		if !json.Valid(b) {
			werr = errors.New("invalid")
		}
		trimmed := strings.TrimSpace(string(b))
		if trimmed == "" || trimmed == "null" {
			return
		}
		if errors.Is(err, ErrDuplicateKey) {
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("Decode(%q) err=%v, encoding/json err=%v", b, err, werr)
		}
		if err == nil {
			a, _ := json.Marshal(v)
			c, _ := json.Marshal(w)
			if string(a) != string(c) {
				t.Fatalf("Decode(%q) = %s, encoding/json = %s", b, a, c)
			}
		}
	})
}
