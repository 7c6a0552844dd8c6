package validate

import (
	"encoding/json"
	"testing"
)

func TestDropOptionalNulls(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","required":["id"],"properties":{
		"id":{"type":"string"},
		"note":{"type":"string"},
		"maybe":{"type":["string","null"]},
		"value":{"anyOf":[{"type":"string"},{"type":"null"}]},
		"rows":{"type":"array","items":{"type":"object","required":["column"],"properties":{"column":{"type":"string"},"dir":{"type":"string"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	args, err := Decode(json.RawMessage(`{"id":null,"note":null,"maybe":null,"value":null,"rows":[{"column":"a","dir":null},{"column":null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.DropOptionalNulls(args) {
		t.Fatal("nothing dropped")
	}
	got, _ := json.Marshal(args)
	want := `{"id":null,"maybe":null,"rows":[{"column":"a"},{"column":null}],"value":null}`
	if string(got) != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if s.DropOptionalNulls(map[string]any{"id": "x"}) {
		t.Fatal("dropped from arguments without nulls")
	}
}
