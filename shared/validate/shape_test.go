package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/xeipuuv/gojsonschema"
)

// shapeSchemas are schemas of the subset, as schemas derived from Go result
// types look, and a few of its corners.
var shapeSchemas = []string{
	`{"type":"object","properties":{"path":{"type":"string"},"size":{"type":"integer","minimum":0},
	  "lines":{"type":["null","array"],"items":{"type":"string"}},"ratio":{"type":"number"},
	  "meta":{"type":["null","object"],"additionalProperties":{"type":"string"}},"ok":{"type":"boolean"}},
	  "required":["path","size"],"additionalProperties":false}`,
	`{"type":"object","properties":{"rows":{"type":["null","array"],"items":{"type":"object","properties":{
	  "id":{"type":"integer"},"name":{"type":["null","string"]},"score":{"type":["null","number"],"maximum":10}},
	  "required":["id"],"additionalProperties":false}},"next":{"type":"integer","minimum":1}},"required":["rows"]}`,
	`{"type":"object","properties":{"any":{},"open":{"type":"object","additionalProperties":true}},"required":["any","zzz"]}`,
	`{"type":"object","description":"free","title":"t","properties":{"a":{"type":"array"}}}`,
	`{"type":"object","properties":{"data":{"type":"object","additionalProperties":{"type":"integer","minimum":0}}}}`,
	// As argument schemas look: string rules, counts, enums, anyOf.
	`{"type":"object","properties":{"path":{"type":"string","minLength":1,"maxLength":8,"pattern":"^[a-z/é]+$"},
	  "mode":{"type":"string","enum":["utf-8","base64"]},"tags":{"type":"array","items":{"type":"string","maxLength":3},"minItems":1,"maxItems":2},
	  "value":{"anyOf":[{"type":"string","maxLength":2},{"type":"integer","maximum":5},{"type":"null"}]},"size":{"type":"integer","minimum":1}},
	  "required":["path"],"additionalProperties":false}`,
}

// shapeDocs are documents that fit some of the schemas and not others.
var shapeDocs = []string{
	`{"path":"a","size":1}`,
	`{"path":"a","size":-1}`,
	`{"path":"a","size":1.5}`,
	`{"path":"a","size":2.0}`,
	`{"path":"a","size":1e2}`,
	`{"path":"a"}`,
	`{"path":"a","size":1,"extra":true}`,
	`{"path":"a","size":1,"lines":null,"ratio":3,"meta":{"k":"v"},"ok":false}`,
	`{"path":"a","size":1,"lines":["x",2]}`,
	`{"path":"a","size":1,"meta":{"k":1}}`,
	`{"path":"\u0061","size":1, "lines" : [ "x" , "y" ] }`,
	`{"p\u0061th":"a","size":1}`,
	`{"rows":[{"id":1,"name":null,"score":9.5},{"id":2,"score":11}]}`,
	`{"rows":[{"id":1,"name":"n"},{"name":"no id"}]}`,
	`{"rows":null,"next":0}`,
	`{"rows":[],"next":3}`,
	`{"any":[1,{"x":null}],"zzz":"q","open":{"a":[true]}}`,
	`{"any":1}`,
	`{"a":[1,"two",null,{"x":[]}]}`,
	`{"a":{}}`,
	`{"data":{"x":1,"y":0}}`,
	`{"data":{"x":-1}}`,
	`{}`,
	`[]`,
	`"text"`,
	`null`,
	`{"path":"a","size":1e400}`,
	`{"path":"a","size":-0}`,
	`{"path":"ab/é"}`,
	`{"path":""}`,
	`{"path":"abcdéfghi"}`,
	`{"path":"abcdéfgh"}`,
	`{"path":"A"}`,
	`{"path":"a","mode":"base64"}`,
	`{"path":"a","mode":"hex"}`,
	`{"path":"a","tags":[]}`,
	`{"path":"a","tags":["x","yz"]}`,
	`{"path":"a","tags":["x","y","z"]}`,
	`{"path":"a","tags":["long"]}`,
	`{"path":"a","value":"ab"}`,
	`{"path":"a","value":"abc"}`,
	`{"path":"a","value":5}`,
	`{"path":"a","value":6}`,
	`{"path":"a","value":5.0}`,
	`{"path":"a","value":null}`,
	`{"path":"a","value":true}`,
	`{"path":"a","size":1.5}`,
	`{"path":"a","size":12345678901234567890}`,
	`{"path":"a","size":0.5e1}`,
}

// fullValid is what the full validator says of doc.
func fullValid(t testing.TB, schema, doc string) bool {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return fullValidValue(t, schema, v)
}

// fullValidValue is what the full validator says of a decoded document.
func fullValidValue(t testing.TB, schema string, v any) bool {
	t.Helper()
	s, err := gojsonschema.NewSchema(gojsonschema.NewStringLoader(schema))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Validate(gojsonschema.NewGoLoader(v))
	if err != nil {
		t.Fatal(err)
	}
	return res.Valid()
}

// TestShapeAgreesWithFullValidator holds both walks of a shape — over an
// encoded document (results) and over a decoded one (arguments) — to the
// full validator's verdicts. The decoded walk may refuse what it is not
// sure of (the full validator then decides), never accept what it refuses.
func TestShapeAgreesWithFullValidator(t *testing.T) {
	for si, schema := range shapeSchemas {
		sh := compileShape(json.RawMessage(schema))
		if sh == nil {
			t.Fatalf("schema %d has no shape", si)
		}
		for _, doc := range shapeDocs {
			err := sh.check([]byte(doc))
			want := fullValid(t, schema, doc)
			if (err == nil) != want {
				t.Errorf("schema %d, %s: shape says %v, full validator valid=%v", si, doc, err, want)
			}
			v, derr := Decode(json.RawMessage(doc))
			if derr != nil {
				continue // not arguments (Decode wants an object)
			}
			// Decode reads null as no arguments: {}.
			want = fullValidValue(t, schema, v)
			if got := sh.accepts(v); got && !want {
				t.Errorf("schema %d, %s: the decoded walk accepts what the full validator refuses", si, doc)
			} else if !got && want && !strings.Contains(doc, "12345678901234567890") && !strings.Contains(doc, "1e400") {
				t.Errorf("schema %d, %s: the decoded walk refuses a valid document", si, doc)
			}
		}
	}
}

func TestShapeErrorsNameThePlace(t *testing.T) {
	sh := compileShape(json.RawMessage(shapeSchemas[1]))
	for doc, want := range map[string]string{
		`{"rows":[{"id":1},{"id":"2"}]}`:  `rows.1.id: string is not allowed (want integer)`,
		`{"rows":[{"id":1,"x":0}]}`:       `rows.0.x: this property is not allowed`,
		`{"rows":[{"name":"n"}]}`:         `rows.0: required properties are missing: "id"`,
		`{"rows":[{"id":1,"score":12}]}`:  `rows.0.score: 12 is greater than the maximum 10`,
		`{"rows":[],"next":0}`:            `next: 0 is less than the minimum 1`,
		`{"rows":[]} x`:                   `unexpected data after the document at offset 12`,
		`{"rows":[{"id":1}`:               `rows.0: want ',' or ']' at offset 17`,
		`{"rows":[{"id":1,"x\q":0}]}`:     `rows.0: invalid escape at offset 19`,
		`{"rows":[{"id":1,"x\u000a":0}]}`: "rows.0.x\n: this property is not allowed",
	} {
		err := sh.check([]byte(doc))
		if err == nil {
			t.Errorf("%s: no error, want %q", doc, want)
			continue
		}
		if err.Error() != want {
			t.Errorf("%s: %q, want %q", doc, err, want)
		}
	}
	// Values nothing constrains are passed over by the lean pass; one that
	// is not well-formed is walked again, so its error names the place too.
	free := compileShape(json.RawMessage(`{"type":"object","properties":{"rows":{"type":"array","items":{}},"meta":{"type":"object"}}}`))
	if !free.props["rows"].s.items.free || !free.props["meta"].s.free || free.free {
		t.Fatal("free shapes not marked")
	}
	for doc, want := range map[string]string{
		`{"rows":[{"a":1},{"b":tru}]}`:     `rows.1.b: invalid JSON at offset 22`,
		`{"rows":[{"a":[1,2}]}`:            `rows.0.a.1: want ',' or ']' at offset 18`,
		`{"meta":{"k":"v" "w"}}`:           `meta: want ',' or '}' at offset 17`,
		`{"meta":[1]}`:                     `meta: array is not allowed (want object)`,
		`{"rows":[{"a":"\x"}]}`:            `rows.0.a: invalid escape at offset 15`,
		`{"rows":[{"a":1}, 2, "s", null]}`: "",
	} {
		err := free.check([]byte(doc))
		if got := fmt.Sprint(err); (err == nil) != (want == "") || (err != nil && got != want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
	// The lean pass keeps nothing of what it passes over: the walk of
	// every member cost an allocation for each fractional number.
	rows := []byte(`{"rows":[` + strings.TrimSuffix(strings.Repeat(`{"a":9.5,"b":"x"},`, 50), ",") + `]}`)
	if n := testing.AllocsPerRun(10, func() { _ = free.check(rows) }); n > 2 {
		t.Errorf("checking 50 free rows allocated %v times", n)
	}
}

func TestOutsideTheSubsetHasNoShape(t *testing.T) {
	for _, schema := range []string{
		`{"type":"string","enum":["a",1]}`,
		`{"type":"string","enum":["a",null]}`,
		`{"anyOf":[{"type":"string"},{"type":"integer","exclusiveMinimum":0}]}`,
		`{"type":"object","properties":{"s":{"type":"string","format":"date-time"}}}`,
		`{"type":"array","uniqueItems":true}`,
		`{"type":"string","pattern":"(?<=a)b"}`,
		`{"type":"array","items":[{"type":"string"}]}`,
		`{"type":"object","required":["x"],"additionalProperties":false}`,
		`{"type":"bogus"}`,
		`{"$ref":"#/definitions/x"}`,
	} {
		if compileShape(json.RawMessage(schema)) != nil {
			t.Errorf("%s: has a shape", schema)
		}
	}
}

func TestCheckDocumentFallsBackToTheFullValidator(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"s":{"type":"string","enum":["a","b",3]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.shape != nil {
		t.Fatal("an enum with a number has a shape")
	}
	if err := s.CheckDocument([]byte(`{"s":"a"}`)); err != nil {
		t.Errorf("valid document refused: %v", err)
	}
	if err := s.CheckDocument([]byte(`{"s":"c"}`)); err == nil {
		t.Error("a value outside the enum passed")
	}
	if err := s.CheckDocument([]byte(`{"s":"a"} {}`)); err == nil {
		t.Error("data after the document passed")
	}
	s, err = Compile(json.RawMessage(shapeSchemas[0]))
	if err != nil || s.shape == nil {
		t.Fatalf("schema 0: shape %v, %v", s.shape, err)
	}
	if err := s.CheckDocument([]byte(`{"path":"a"}`)); err == nil || !strings.Contains(err.Error(), `"size"`) {
		t.Errorf("missing size: %v", err)
	}
}

// FuzzShape holds the one-pass check to the full validator on any well-formed
// document, and to refusing any malformed one.
func FuzzShape(f *testing.F) {
	for i := range shapeSchemas {
		for _, d := range shapeDocs {
			f.Add(uint8(i), []byte(d))
		}
	}
	shapes := make([]*shape, len(shapeSchemas))
	for i, s := range shapeSchemas {
		shapes[i] = compileShape(json.RawMessage(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, doc []byte) {
		i := int(which) % len(shapes)
		err := shapes[i].check(doc)
		if !json.Valid(doc) {
			if err == nil {
				t.Fatalf("malformed %q passed", doc)
			}
			return
		}
		if bytes.Contains(doc, []byte(`\u0000`)) || !validUTF8Keys(doc) {
			return // the two parsers differ on these, not the schemas
		}
		want := fullValid(t, shapeSchemas[i], string(doc))
		if (err == nil) != want {
			t.Fatalf("schema %d, %q: shape says %v, full validator valid=%v", i, doc, err, want)
		}
		if v, derr := Decode(doc); derr == nil && shapes[i].accepts(v) && !fullValidValue(t, shapeSchemas[i], v) {
			t.Fatalf("schema %d, %q: the decoded walk accepts what the full validator refuses", i, doc)
		}
	})
}

func validUTF8Keys(doc []byte) bool { return strings.ToValidUTF8(string(doc), "\uFFFD") == string(doc) }

// BenchmarkResultCheck compares the one-pass check of a tool result (100
// rows) with decoding it for the full validator, as results were checked
// before.
func BenchmarkResultCheck(b *testing.B) {
	var rows []string
	for i := 0; i < 100; i++ {
		rows = append(rows, `{"id":`+strings.Repeat("7", 1+i%6)+`,"name":"client `+strings.Repeat("x", i%40)+`","score":9.5}`)
	}
	doc := []byte(`{"rows":[` + strings.Join(rows, ",") + `],"next":2}`)
	s, err := Compile(json.RawMessage(shapeSchemas[1]))
	if err != nil || s.shape == nil {
		b.Fatal(err)
	}
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for i := 0; i < b.N; i++ {
			if err := s.CheckDocument(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Rows of any members, as a database's rows are declared (items: {}):
	// each is passed over by the lean pass.
	free, err := Compile(json.RawMessage(`{"type":"object","properties":{"rows":{"type":["null","array"],"items":{}},"next":{"type":"integer"}},"required":["rows"]}`))
	if err != nil || free.shape == nil {
		b.Fatal(err)
	}
	b.Run("one-pass-free-rows", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for i := 0; i < b.N; i++ {
			if err := free.CheckDocument(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	full := &Schema{s: s.s, nulls: s.nulls}
	b.Run("decode+full", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for i := 0; i < b.N; i++ {
			if err := full.CheckDocument(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// admitsCases are arguments a quick walk must leave to the decoding path
// (schema 0), each for a reason of its own, beside one it admits.
var admitsCases = []struct {
	doc  string
	want bool
}{
	{`{"path":"a","size":1}`, true},
	{` {"path":"a","size":1,"lines":["x"],"meta":{"k":"v"}} `, true},
	{`{"path":"a","path":"b","size":1}`, false},
	{`{"path":"a","p\u0061th":"b","size":1}`, false},
	{`{"path":"a","size":1,"meta":{"k":"v","k":"w"}}`, false},
	{`{"path":"a","size":1,"lines":null}`, false},
	{`{"path":"a","size":1}x`, false},
	{`{"path":"a","size":-1}`, false},
	{`{"path":"a"}`, false},
	{`[{"path":"a","size":1}]`, false},
	{``, false},
	{`null`, false},
	{`{"path":"a","size":12345678901234567}`, false},
	{`{"path":"a","size":1,"ratio":12345678901234567}`, true},
	{`{"path":"a","size":1,"ratio":1.00000000000000001}`, false},
	{`{"path":"a","size":1,"meta":{` + manyMembers(maxQuickKeys+1) + `}}`, false},
	{`{"path":"a","size":1,"meta":{` + manyMembers(maxQuickKeys) + `}}`, true},
}

func manyMembers(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return strings.Join(parts, ",")
}

// TestAdmitsOnlyWhatDecodeAndCheckAccept: arguments the quick walk admits
// are ones the decoding path accepts; the rest it leaves to that path,
// which writes the error.
func TestAdmitsOnlyWhatDecodeAndCheckAccept(t *testing.T) {
	s := mustCompile(t, shapeSchemas[0])
	for _, c := range admitsCases {
		if got := s.Admits([]byte(c.doc)); got != c.want {
			t.Errorf("Admits(%.80q) = %v, want %v", c.doc, got, c.want)
		}
		assertAdmitsImpliesAccepted(t, s, []byte(c.doc))
	}
	deep := strings.Repeat(`{"k":`, DefaultLimits.MaxDepth) + `1` + strings.Repeat(`}`, DefaultLimits.MaxDepth)
	open := mustCompile(t, `{"type":"object"}`)
	if !open.Admits([]byte(deep)) {
		t.Errorf("nesting of %d levels not admitted", DefaultLimits.MaxDepth)
	}
	if deeper := `{"k":` + deep + `}`; open.Admits([]byte(deeper)) {
		t.Errorf("nesting of %d levels admitted", DefaultLimits.MaxDepth+1)
	}
	if outside := mustCompile(t, testSchema); outside.Admits([]byte(`{"query":"ab"}`)) {
		t.Error("a schema outside the shape subset admitted arguments without the full validator")
	}
}

func assertAdmitsImpliesAccepted(t testing.TB, s *Schema, doc []byte) {
	t.Helper()
	if !s.Admits(doc) {
		return
	}
	v, err := Decode(doc)
	if err != nil {
		t.Fatalf("admitted %.200q, which Decode refuses: %v", doc, err)
	}
	if verr := s.CheckValue(v); verr != nil {
		t.Fatalf("admitted %.200q, which CheckValue refuses: %v", doc, verr.Message)
	}
}

// FuzzAdmits holds the quick walk over arguments to the decoding path: it
// never admits what Decode or CheckValue refuses.
func FuzzAdmits(f *testing.F) {
	for i := range shapeSchemas {
		for _, d := range shapeDocs {
			f.Add(uint8(i), []byte(d))
		}
		for _, c := range admitsCases {
			f.Add(uint8(i), []byte(c.doc))
		}
	}
	schemas := make([]*Schema, len(shapeSchemas))
	for i, raw := range shapeSchemas {
		s, err := Compile(json.RawMessage(raw))
		if err != nil {
			f.Fatal(err)
		}
		schemas[i] = s
	}
	f.Fuzz(func(t *testing.T, which uint8, doc []byte) {
		assertAdmitsImpliesAccepted(t, schemas[int(which)%len(schemas)], doc)
	})
}

// TestAdmitsRefusesHostileArgumentsEarly: arguments built to make a walk
// expensive are refused where that shows, not after walking them — a
// container where the schema (or every alternative of its anyOf) wants a
// scalar is refused at its first byte, and a long member name with escapes
// is left to Decode instead of being decoded and compared with every other.
func TestAdmitsRefusesHostileArgumentsEarly(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"value":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"null"}]},
	  "name":{"type":"string"},"open":{"type":"object"}},"additionalProperties":false}`)
	walk := func(doc string) error {
		w := walker{b: []byte(doc), args: &argWalk{}}
		_, err := w.value(s.shape, 0)
		return err
	}
	// Not well-formed past the opening byte: an error about the type, not
	// about the JSON, shows the walk stopped there.
	for _, doc := range []string{`{"value":{"a":1,"b" 2`, `{"name":[1,2,`, `{"value":[{"x"`} {
		if s.Admits([]byte(doc)) {
			t.Errorf("admitted %s", doc)
		}
		if err := walk(doc); err == nil || !strings.Contains(err.Error(), "is not allowed") && !strings.Contains(err.Error(), "fits none") {
			t.Errorf("%s: %v, want a refusal of its type", doc, err)
		}
	}
	long := `"` + strings.Repeat(`\u0041`, maxQuickEscapedKey) + `"`
	doc := `{"open":{` + long + `:1,"b":2}}`
	if err := walk(doc); err == nil || !strings.Contains(err.Error(), "long member name") {
		t.Errorf("a long escaped name: %v", err)
	}
	assertAdmitsImpliesAccepted(t, s, []byte(doc))
	short := `{"open":{"\u0041b":1,"Ab":2}}`
	if s.Admits([]byte(short)) {
		t.Errorf("admitted %s, which names a key twice", short)
	}
	// A member name with invalid UTF-8 is the property whose name holds
	// U+FFFD, as Decode reads it, and its value is checked by that schema.
	odd := mustCompile(t, `{"type":"object","properties":{"\ufffd":{"type":"string"}}}`)
	for _, doc := range []string{"{\"\xff\":1}", "{\"\xff\":\"s\"}"} {
		assertAdmitsImpliesAccepted(t, odd, []byte(doc))
	}
	if !odd.Admits([]byte("{\"\xff\":\"s\"}")) {
		t.Error("did not admit a string for the property named U+FFFD")
	}
	if ok := `{"open":{"\u0041b":1,"Ac":2},"value":"v"}`; !s.Admits([]byte(ok)) {
		t.Errorf("did not admit %s", ok)
	}
}
