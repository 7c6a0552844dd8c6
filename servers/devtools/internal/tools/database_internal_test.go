package tools

import (
	"encoding/json"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// TestFitRowsMatchesFitItems: the shortcut for rows that all fit gives
// kit.FitItems' answer at every room.
func TestFitRowsMatchesFitItems(t *testing.T) {
	rows := []json.RawMessage{
		json.RawMessage(`[1,"a\"b",null]`),
		json.RawMessage(`[ 2 , "spaced" , true ]`),
		json.RawMessage(`[3,"\\u00e9\\\\",{"k":[1,2]}]`),
		json.RawMessage(`[]`),
	}
	for room := 0; room < 200; room++ {
		want, werr := kit.FitItems(rows, room)
		got, gerr := fitRows(rows, room)
		if got != want || (werr == nil) != (gerr == nil) {
			t.Errorf("room %d: fitRows %d, %v; FitItems %d, %v", room, got, gerr, want, werr)
		}
	}
	if n, err := fitRows(nil, 4); n != 0 || err != nil {
		t.Errorf("no rows: %d, %v", n, err)
	}
}
