package tools

import (
	"encoding/json"
	"reflect"
	"testing"
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
