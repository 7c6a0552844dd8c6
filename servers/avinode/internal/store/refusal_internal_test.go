package store

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestEscapesNULAsJSON: escapesNUL finds a NUL written as \u0000 in a JSON
// text exactly when decoding the text gives a NUL, whatever backslashes
// precede or follow the escape, in keys and values.
func TestEscapesNULAsJSON(t *testing.T) {
	pieces := []string{`\\`, `\u0000`, `u0000`, `\"`, `\u00000`, `a`, `\u0001`, `\n`, `\u1000`, `0000`, `\/`, `é`}
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{`{}`, `{"a":"\u0000"}`, `{"a":"\\u0000"}`, `{"a":"\\\u0000"}`, `{"\u0000":1}`, `{"a":["b","\u0000"]}`,
		`{"a":"u0000"}`, `{"a":"\u00001"}`}
	for range 5000 {
		var k, v strings.Builder
		for range r.IntN(4) {
			k.WriteString(pieces[r.IntN(len(pieces))])
		}
		for range r.IntN(6) {
			v.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, `{"`+k.String()+`":"`+v.String()+`","n":[1,{"x":"`+k.String()+`"}]}`)
	}
	nul := 0
	for _, text := range texts {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		want := holdsNUL(v)
		if want {
			nul++
		}
		if got := escapesNUL([]byte(text)); got != want {
			t.Errorf("escapesNUL(%s) = %v, decoding says %v", text, got, want)
		}
	}
	if nul == 0 || nul == len(texts) {
		t.Errorf("%d of %d texts hold a NUL: the cases do not tell", nul, len(texts))
	}
}

// holdsNUL reports whether a decoded JSON value has a NUL in a key or a
// string.
func holdsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, "\x00")
	case []any:
		for _, e := range v {
			if holdsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, "\x00") || holdsNUL(e) {
				return true
			}
		}
	}
	return false
}
