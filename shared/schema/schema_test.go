package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/validate"
)

type leg struct {
	From string `json:"from" jsonschema:"ICAO code" pattern:"^[A-Z]{4}$"`
	Pax  int    `json:"pax" mcp:"min=1,max=19"`
}

type args struct {
	Path  string          `json:"path" jsonschema:"file to read, at most {max} bytes" mcp:"minLength=1"`
	Limit *int            `json:"limit,omitempty" mcp:"min=1,max={max},default=100"`
	Mode  string          `json:"mode,omitempty" mcp:"enum=text|base64"`
	Tags  []string        `json:"tags,omitempty" mcp:"maxItems=3,uniqueItems"`
	Legs  []leg           `json:"legs,omitempty" mcp:"minItems=1"`
	When  string          `json:"when,omitempty" mcp:"format=date-time"`
	Extra json.RawMessage `json:"extra,omitempty"`
	Ratio float64         `json:"ratio,omitempty" mcp:"exclusiveMin=0"`
	Flag  bool            `json:"flag,omitempty" mcp:"default=true"`
	//lint:ignore U1000 unexported on purpose: the schema must leave it out
	internal int
	Skipped  string `json:"-"`
}

func TestForShape(t *testing.T) {
	raw, err := For[args](Vars{"max": 4096})
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	path := props["path"].(map[string]any)
	if path["description"] != "file to read, at most 4096 bytes" || path["minLength"] != 1.0 {
		t.Fatalf("path = %v", path)
	}
	limit := props["limit"].(map[string]any)
	if limit["type"] != "integer" || limit["maximum"] != 4096.0 || limit["default"] != 100.0 {
		t.Fatalf("limit = %v", limit)
	}
	if e := props["mode"].(map[string]any)["enum"].([]any); len(e) != 2 || e[1] != "base64" {
		t.Fatalf("mode enum = %v", e)
	}
	legItems := props["legs"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	if legItems["from"].(map[string]any)["pattern"] != "^[A-Z]{4}$" || legItems["pax"].(map[string]any)["maximum"] != 19.0 {
		t.Fatalf("nested leg = %v", legItems)
	}
	if _, ok := props["extra"].(map[string]any)["type"]; ok {
		t.Fatalf("raw JSON should accept anything: %v", props["extra"])
	}
	if req := s["required"].([]any); len(req) != 1 || req[0] != "path" {
		t.Fatalf("required = %v", req)
	}
	if _, ok := props["Skipped"]; ok {
		t.Fatal("json:\"-\" field listed")
	}
	if s["additionalProperties"] != false {
		t.Fatalf("additionalProperties = %v", s["additionalProperties"])
	}
}

func TestValidatesWithTheKitValidator(t *testing.T) {
	sc, err := validate.Compile(MustFor[args](Vars{"max": 10}))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args  string
		field string // "" means valid
	}{
		{`{"path":"a"}`, ""},
		{`{"path":""}`, "path"},
		{`{"path":"a","limit":11}`, "limit"},
		{`{"path":"a","mode":"hex"}`, "mode"},
		{`{"path":"a","legs":[{"from":"eddf","pax":1}]}`, "legs.0.from"},
		{`{"path":"a","legs":[{"from":"EDDF","pax":20}]}`, "legs.0.pax"},
		{`{"path":"a","tags":["x","x"]}`, "tags"},
		{`{"path":"a","limit":null}`, "limit"},
		{`{"path":"a","nope":1}`, "nope"},
	}
	for _, c := range cases {
		v, _ := validate.Decode([]byte(c.args))
		e := sc.CheckValue(v)
		switch {
		case c.field == "" && e != nil:
			t.Errorf("%s: unexpected error %v", c.args, e)
		case c.field != "" && e == nil:
			t.Errorf("%s: accepted", c.args)
		case c.field != "" && !strings.Contains(e.Field, strings.Split(c.field, ".")[0]):
			t.Errorf("%s: field %q, want %q", c.args, e.Field, c.field)
		}
	}
}

func TestTagErrors(t *testing.T) {
	type missingVar struct {
		N int `json:"n" mcp:"max={nope}"`
	}
	type badKey struct {
		N int `json:"n" mcp:"maximum=3"`
	}
	type badNum struct {
		N int `json:"n" mcp:"min=x"`
	}
	type badEnum struct {
		N int `json:"n" mcp:"enum=1|two"`
	}
	type badCount struct {
		S string `json:"s" mcp:"maxLength=-1"`
	}
	type noValue struct {
		S string `json:"s" mcp:"format"`
	}
	for name, f := range map[string]func() error{
		"var":   func() error { _, err := For[missingVar](); return err },
		"key":   func() error { _, err := For[badKey](); return err },
		"num":   func() error { _, err := For[badNum](); return err },
		"enum":  func() error { _, err := For[badEnum](); return err },
		"count": func() error { _, err := For[badCount](); return err },
		"value": func() error { _, err := For[noValue](); return err },
		"type":  func() error { _, err := For[int](); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustFor did not panic")
		}
	}()
	MustFor[missingVar]()
}

func TestExpandLeavesNonPlaceholders(t *testing.T) {
	got, err := expand("a JSON object {\"k\": 1} or {x}", Vars{"x": 2})
	if err != nil || got != "a JSON object {\"k\": 1} or 2" {
		t.Fatalf("expand = %q, %v", got, err)
	}
}

func TestTypeTagAndEmptyStruct(t *testing.T) {
	type withRaw struct {
		Filters json.RawMessage `json:"filters,omitempty" jsonschema:"column filters" mcp:"type=object"`
		Value   json.RawMessage `json:"value,omitempty" mcp:"type=string|number"`
	}
	raw, err := For[withRaw]()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"filters":{"type":"object","description":"column filters"}`) ||
		!strings.Contains(string(raw), `"value":{"anyOf":[{"type":"string"},{"type":"number"}]}`) {
		t.Fatalf("type tag: %s", raw)
	}
	type bad struct {
		V json.RawMessage `json:"v" mcp:"type=thing"`
	}
	if _, err := For[bad](); err == nil {
		t.Fatal("bad type accepted")
	}
	type list struct {
		Values []json.RawMessage `json:"values" mcp:"itemType=string|null,maxItems=3"`
	}
	raw, err = For[list]()
	if err != nil || !strings.Contains(string(raw), `"values":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"null"}]},"maxItems":3}`) {
		t.Fatalf("itemType: %s %v", raw, err)
	}
	if _, err := Advertise(raw); err != nil {
		t.Fatalf("itemType is not portable: %v", err)
	}
	type notList struct {
		V json.RawMessage `json:"v" mcp:"itemType=string"`
	}
	if _, err := For[notList](); err == nil {
		t.Fatal("itemType on a field that is not a list accepted")
	}
	type none struct{}
	raw, err = For[none]()
	if err != nil || !strings.Contains(string(raw), `"properties":{}`) || !json.Valid(raw) {
		t.Fatalf("empty struct: %s %v", raw, err)
	}
}

func TestProjectionMovesUnportableKeywordsToProse(t *testing.T) {
	type upd struct {
		Email string `json:"email,omitempty" jsonschema:"address" mcp:"format=email"`
		When  string `json:"when,omitempty" mcp:"format=date-time"`
	}
	type in struct {
		Updates upd               `json:"updates" mcp:"minProperties=1"`
		Tags    []string          `json:"tags,omitempty" mcp:"uniqueItems"`
		Raw     json.RawMessage   `json:"raw,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		Kinds   json.RawMessage   `json:"kinds,omitempty" mcp:"type=string|array"`
	}
	full := MustFor[in]()
	got, err := Project(full)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	for _, want := range []string{`"description":"address (format email)"`, `"format":"date-time"`, `(at least one member)`, `(no duplicates)`} {
		if !strings.Contains(s, want) {
			t.Errorf("projection lacks %s: %s", want, s)
		}
	}
	if strings.Contains(s, "minProperties") || strings.Contains(s, "uniqueItems") || strings.Contains(s, `"email"`+`,`) {
		t.Errorf("projection keeps an unportable keyword: %s", s)
	}
	// What no projection can save is named, path by path.
	_, err = Advertise(full)
	if err == nil {
		t.Fatal("a typeless property and an open map were advertised")
	}
	for _, want := range []string{".raw: no type", ".env: an object open to any key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Advertise error lacks %q: %v", want, err)
		}
	}
	if !strings.Contains(err.Error(), ".kinds|1: an array without items") || strings.Contains(err.Error(), ".kinds: ") {
		t.Errorf("anyOf of two types is portable, an array branch needs items: %v", err)
	}
	if p := ToolProblems("a/b", strings.Repeat("x", MaxDescription+1)); len(p) != 2 {
		t.Errorf("ToolProblems = %v", p)
	}
	out, err := Output[struct {
		M map[string]any `json:"m"`
		S []string       `json:"s"`
		X any            `json:"x"`
	}]()
	if err != nil || !strings.Contains(string(out), `"m":{"additionalProperties":true,"type":["null","object"]}`) || !strings.Contains(string(out), `"x":{}`) {
		t.Errorf("Output = %s, %v", out, err)
	}
	if _, err := Output[string](); err == nil {
		t.Error("a string result type was accepted")
	}
}

type common struct {
	Kind string   `json:"kind,omitempty" mcp:"enum=html|text"`
	To   []string `json:"to,omitempty" mcp:"maxItems=3"`
}

// The fields of an embedded struct are promoted by encoding/json whether
// its type is exported or not; their tags must not be lost either way.
func TestEmbeddedUnexportedStructKeepsItsTags(t *testing.T) {
	type draft struct {
		common
		Subject string `json:"subject"`
	}
	raw, err := For[draft]()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"enum":["html","text"]`) || !strings.Contains(string(raw), `"maxItems":3`) {
		t.Fatalf("the embedded fields lost their tags: %s", raw)
	}
}
