package postgres_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/postgres"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
)

// TestRowsKeepTheirBytes: rows travel as JSON objects joined by a control
// character; values holding that character, newlines, or json written with
// its own whitespace come back as they went in, through reads and writes,
// and the limit and truncation hold.
func TestRowsKeepTheirBytes(t *testing.T) {
	ctx := context.Background()
	adminURL, app := testenv.PostgresURLs(t)
	admin(t, adminURL, `CREATE TABLE public.odd (id integer PRIMARY KEY, t text, j json, jb jsonb)`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON public.odd TO PUBLIC`)
	db, err := postgres.Open(postgres.Config{URL: app})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	values := []string{`"a\u001eb"`, `"line\nbreak\u001e"`, `"\u001e"`, `""`}
	jsons := []string{`{"a": [1,` + "\n" + ` 2]}`, `"\u001e"`, `[]`, `null`}
	var rows []query.Row
	for i := range values {
		j := json.RawMessage(jsons[i])
		rows = append(rows, query.Row{Keys: []string{"id", "t", "j", "jb"},
			Values: []json.RawMessage{json.RawMessage([]byte{'1' + byte(i)}), json.RawMessage(values[i]), j, j}})
	}
	ins, err := db.Insert(ctx, &query.Insert{Schema: "public", Table: "odd", Rows: rows, Returning: []query.Item{{Star: true}}})
	if err != nil || ins.RowCount != len(values) {
		t.Fatalf("insert: %+v %v", ins, err)
	}
	type row struct {
		ID int             `json:"id"`
		T  string          `json:"t"`
		J  json.RawMessage `json:"j"`
		JB json.RawMessage `json:"jb"`
	}
	check := func(what string, got []json.RawMessage, from int) {
		t.Helper()
		for k, raw := range got {
			i := from + k
			var r row
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Errorf("%s row %d: %v in %q", what, i, err, raw)
				continue
			}
			var want string
			_ = json.Unmarshal([]byte(values[i]), &want)
			var wantJ, gotJ, gotJB any
			_ = json.Unmarshal([]byte(jsons[i]), &wantJ)
			_ = json.Unmarshal(r.J, &gotJ)
			_ = json.Unmarshal(r.JB, &gotJB)
			if r.ID != i+1 || r.T != want || !reflect.DeepEqual(gotJ, wantJ) || !reflect.DeepEqual(gotJB, wantJ) {
				t.Errorf("%s row %d: %s", what, i, raw)
			}
		}
	}
	check("insert", ins.Rows, 0)
	order := []query.Order{{Column: "id"}}
	res, err := db.Select(ctx, &query.Select{Schema: "public", Table: "odd", Items: []query.Item{{Star: true}}, Order: order, Limit: 3, Count: true})
	if err != nil || res.RowCount != 3 || !res.Truncated || res.Count == nil || *res.Count != 4 {
		t.Fatalf("select, limit 3: %+v %v", res, err)
	}
	check("select", res.Rows, 0)
	if !strings.Contains(string(res.Rows[0]), "[1,\n 2]") {
		t.Errorf("the json value lost its own whitespace (the test needs it): %s", res.Rows[0])
	}
	res, err = db.Select(ctx, &query.Select{Schema: "public", Table: "odd", Items: []query.Item{{Star: true}}, Order: order, Offset: 1, Limit: 10})
	if err != nil || res.RowCount != 3 || res.Truncated {
		t.Fatalf("select, offset 1: %+v %v", res, err)
	}
	check("select", res.Rows, 1)
	res, err = db.Select(ctx, &query.Select{Schema: "public", Table: "odd", Items: []query.Item{{Star: true}}, Offset: 9, Limit: 10, Count: true})
	if err != nil || res.RowCount != 0 || res.Rows == nil || *res.Count != 4 {
		t.Fatalf("select past the end: %+v %v", res, err)
	}
	where := query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "id", Op: query.Eq, Value: query.Value{Text: "3"}}}}}
	del, err := db.Delete(ctx, &query.Delete{Schema: "public", Table: "odd", Where: where, Returning: []query.Item{{Star: true}}, MaxAffected: 1})
	if err != nil || del.RowCount != 1 {
		t.Fatalf("delete: %+v %v", del, err)
	}
	check("delete", del.Rows, 2)
}
