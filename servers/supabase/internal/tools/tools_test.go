package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

func TestRowsResultAppendsWhatJSONMarshals(t *testing.T) {
	count, next := int64(1234), 40
	rows := []json.RawMessage{json.RawMessage(`{"id":1,"name":"a"}`), json.RawMessage(`{"id":2,"name":null,"tags":["x","y"]}`)}
	spaced := []json.RawMessage{json.RawMessage(`{"id": 1, "note": "<b>&</b>"}`), json.RawMessage(` {"doc": {"k" : [1, 2]}} `)}
	for name, r := range map[string]rowsResult{
		"empty":        {Table: "t", Rows: []json.RawMessage{}},
		"nil rows":     {Table: "t"},
		"rows":         {Table: "clients", Rows: rows, RowCount: 2},
		"every field":  {Table: `odd "name" \ é`, Rows: rows, RowCount: 2, Count: &count, Truncated: true, NextOffset: &next},
		"spaced, <, &": {Table: "t", Rows: spaced, RowCount: 2},
	} {
		got, err := r.AppendJSON(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: AppendJSON wrote malformed JSON %s: %v", name, got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n AppendJSON %s\n json.Marshal %s", name, got, want)
		}
		if name != "spaced, <, &" && string(got) != string(want) {
			t.Errorf("%s: compact rows differ byte for byte:\n AppendJSON %s\n json.Marshal %s", name, got, want)
		}
	}
}

// TestFitRowsAgreesWithFitItems: the shortcut for rows well within the
// room keeps what kit.FitItems keeps, at every room from too small for one
// row to more than enough, for rows of plain bytes and of bytes that cost
// the most (quotes and backslashes).
func TestFitRowsAgreesWithFitItems(t *testing.T) {
	for name, rows := range map[string][]json.RawMessage{
		"plain":   {json.RawMessage(`{"id":1,"name":"abc"}`), json.RawMessage(`{"id":2,"name":"de"}`), json.RawMessage(`{"id":3}`)},
		"escapes": {json.RawMessage(`{"q":"\"\\\"\\"}`), json.RawMessage(`["\\\\","\"\""]`)},
		"none":    {},
		"nil":     nil,
	} {
		for room := 0; room < maxCost(rows)+8; room++ {
			got, fit, err := fitRows(rows, room)
			if err != nil {
				t.Fatal(err)
			}
			n, err := kit.FitItems(rows, room)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n || fit != (n == len(rows)) || got == nil {
				t.Errorf("%s, room %d: fitRows kept %d (fit %v), FitItems %d of %d", name, room, len(got), fit, n, len(rows))
			}
		}
	}
}
