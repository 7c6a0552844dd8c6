package query

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func field(err error) string {
	var e *mcperr.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

func TestIdentifiers(t *testing.T) {
	for _, ok := range []string{"a", "_x", "iso_workflows", "A1", strings.Repeat("a", 63)} {
		if !ValidIdent(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "1a", "a-b", "a.b", `a"`, "a b", "é", strings.Repeat("a", 64), "a;", "a\x00"} {
		if ValidIdent(bad) || CheckIdent("table", "table", bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if QuoteIdent(`we"ird`) != `"we""ird"` || !IsSystemName("PG_sleep") || IsSystemName("page") {
		t.Error("quoting or system names")
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxConditions, lim.MaxInValues, lim.MaxDepth, lim.MaxRows = 3, 2, 2, 2
	tests := []struct {
		filters, field string
	}{
		{`{"a": {"in": [1, 2, 3]}}`, "filters.a.in"},
		{`{"a": 1, "b": 2, "c": 3, "d": 4}`, "filters.d"},
		{`{"or": [{"or": [{"or": [{"a": 1}]}]}]}`, "filters.or[0].or[0]"},
		{`{"a": {"like": 5}}`, "filters.a.like"},
		{`{"a": {"in": [null]}}`, "filters.a.in"},
		{`{"a": {"in": [[1]]}}`, "filters.a.in[0]"},
		{`{"or": [{}]}`, "filters.or"},
		{`{"a": {}}`, "filters.a"},
		{`{"a": 1, "a": 2}`, "filters"},
		{`[1]`, "filters"},
		{`{"a": {"not": {"not": {"eq": 1}}}}`, "filters.a.not"},
	}
	for _, tc := range tests {
		_, err := ParseFilters("filters", json.RawMessage(tc.filters), lim)
		if err == nil || mcperr.Wrap(err).Code != mcperr.Validation || field(err) != tc.field {
			t.Errorf("%s: %v (field %q, want %q)", tc.filters, err, field(err), tc.field)
		}
	}
	if g, err := ParseFilters("filters", nil, lim); err != nil || !g.Empty() {
		t.Errorf("no filters: %v", err)
	}
	if _, err := ParseRows("data", json.RawMessage(`[{"a":1},{"a":2},{"a":3}]`), lim); field(err) != "data" {
		t.Errorf("too many rows: %v", err)
	}
	for _, bad := range []string{`[]`, `{}`, `[1]`, `[{}]`, `"x"`, `[{"a b": 1}]`} {
		if _, err := ParseRows("data", json.RawMessage(bad), lim); err == nil {
			t.Errorf("rows %s accepted", bad)
		}
	}
	for _, bad := range []string{`"rank"`, `{"col": "a"}`, `{"column": "a", "asc": true}`, `[{"column": "a b"}]`, `[1]`} {
		if _, err := ParseOrder("orderBy", json.RawMessage(bad)); err == nil {
			t.Errorf("order %s accepted", bad)
		}
	}
	for _, bad := range []string{"a(b", "a)", "a(b(c))", "a,,b", "a b c"[0:0] + "a;b", "(x)"} {
		if _, err := ParseSelect("select", bad); err == nil {
			t.Errorf("select %q accepted", bad)
		}
	}
	items, err := ParseSelect("select", " id , iso_requests ( id , * ) ,*")
	if err != nil || SelectString(items) != "id,iso_requests(id,*),*" {
		t.Errorf("select: %v %v", SelectString(items), err)
	}
}

// TestPostgRESTRendering pins renderings the cross-check with Supabase's
// client does not cover.
func TestPostgRESTRendering(t *testing.T) {
	lim := DefaultLimits()
	g, err := ParseFilters("f", json.RawMessage(`{"order": "x", "limit": {"gt": 1}, "a": {"is": "UNKNOWN"}}`), lim)
	if err != nil {
		t.Fatal(err)
	}
	r := PostgRESTSelect(&Select{Table: "t", Items: []Item{{Star: true}}, Where: g})
	if got := r.RawQuery(); got != "select=*&a=is.unknown&and=%28order.eq.x%2Climit.gt.1%29" {
		t.Errorf("reserved columns: %s", got)
	}
	if _, err := PostgRESTUpdate(&Update{Table: "t", Set: Row{Keys: []string{"a"}, Values: []json.RawMessage{[]byte("1")}}}); err == nil {
		t.Error("an unfiltered update rendered")
	}
	if _, err := PostgRESTDelete(&Delete{Table: "t"}); err == nil {
		t.Error("an unfiltered delete rendered")
	}
	if _, err := PostgRESTInsert(&Insert{Table: "t"}); err == nil {
		t.Error("an empty insert rendered")
	}
	d, _ := PostgRESTDelete(&Delete{Table: "t", Where: g, Returning: []Item{{Star: true}}})
	if d.Headers["Prefer"] != "return=representation, handling=strict" {
		t.Errorf("delete without a guard: %q", d.Headers["Prefer"])
	}
	for v, want := range map[string]string{"": `""`, "a": "a", "a.b": "a.b", "{x}": "{x}", " a": `" a"`, `"x"`: `"\"x\""`, `a\b`: `a\b`, "a,b": `"a,b"`} {
		if got := listValue(Value{Kind: String, Text: v}); got != want {
			t.Errorf("list value %q = %s, want %s", v, got, want)
		}
	}
	for v, want := range map[string]string{"a.b": `"a.b"`, "a:b": `"a:b"`, "{x}": `"{x}"`, `a\b`: `"a\\b"`, "plain": "plain", "x ": `"x "`} {
		if got := logicValue(Value{Kind: String, Text: v}); got != want {
			t.Errorf("logic value %q = %s, want %s", v, got, want)
		}
	}
}

// TestSQLHasNoValues: whatever the values, SQL text carries placeholders
// only; every value is an argument.
func TestSQLHasNoValues(t *testing.T) {
	tbl := &Table{Schema: "public", Name: "t", Kind: "table", Columns: []Column{{Name: "a", Type: "text"}, {Name: "b", Type: "integer"}, {Name: "j", Type: "jsonb"}, {Name: "f", Type: "boolean"}}}
	cat := catalogOf{tbl}
	hostile := `'; DROP TABLE t; -- ") OR 1=1 $1 ?1`
	filters := json.RawMessage(`{"a": "` + strings.ReplaceAll(hostile, `"`, `\"`) + `", "b": {"in": [1, 2]}, "or": [{"a": {"like": "x*"}}, {"f": {"is": true}}], "j": {"not": {"is": null}}}`)
	where, err := ParseFilters("filters", filters, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	bind := func(_ *Column, v Value) (any, error) { return v.Text, nil }
	bindJSON := func(_ *Column, raw json.RawMessage) (any, error) { return string(raw), nil }
	for _, d := range []*Dialect{{Postgres: true, BindValue: bind, BindJSON: bindJSON}, {BindValue: bind, BindJSON: bindJSON}} {
		q := &Select{Schema: "public", Table: "t", Items: []Item{{Star: true}}, Where: where, Limit: 10, Offset: 5, Count: true,
			Order: []Order{{Column: "b", Desc: true}, {Column: "a", Nulls: "first"}}}
		st := renderSelect(t, cat, d, q)
		set := Row{Keys: []string{"a", "j"}, Values: []json.RawMessage{[]byte(`"` + strings.ReplaceAll(hostile, `"`, `\"`) + `"`), []byte(`{"k": "DROP"}`)}}
		wp, _ := PlanUpdate(cat, &Update{Schema: "public", Table: "t", Set: set, Where: where, Returning: []Item{{Star: true}}})
		up, err := SQLUpdate(d, wp, &Update{Schema: "public", Table: "t", Set: set, Where: where, MaxAffected: 3})
		if err != nil {
			t.Fatal(err)
		}
		ins, err := SQLInsert(d, wp, &Insert{Schema: "public", Table: "t", Rows: []Row{set}, OnConflict: []string{"a"}})
		if err != nil {
			t.Fatal(err)
		}
		del, err := SQLDelete(d, wp, &Delete{Schema: "public", Table: "t", Where: where})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []Statement{st, up, del, ins[0]} {
			if strings.Contains(s.SQL, "DROP") || strings.Contains(s.SQL, "1=1") || strings.Contains(s.SQL, "x%") {
				t.Errorf("postgres=%v: a value reached the SQL: %s", d.Postgres, s.SQL)
			}
			if len(s.Args) == 0 {
				t.Errorf("no arguments: %s", s.SQL)
			}
		}
		if _, err := SQLUpdate(d, wp, &Update{Schema: "public", Table: "t", Set: set}); err == nil {
			t.Error("an unfiltered update rendered")
		}
		if _, err := SQLDelete(d, wp, &Delete{Schema: "public", Table: "t"}); err == nil {
			t.Error("an unfiltered delete rendered")
		}
	}
}

type catalogOf []*Table

func (c catalogOf) Table(schema, name string) (*Table, error) {
	for _, t := range c {
		if t.Schema == schema && t.Name == name {
			return t, nil
		}
	}
	return nil, TableNotFound("table", schema, name)
}

func TestPlans(t *testing.T) {
	view := &Table{Schema: "public", Name: "v", Kind: "view", Columns: []Column{{Name: "a", Type: "text"}}}
	gen := &Table{Schema: "public", Name: "g", Kind: "table", Columns: []Column{{Name: "a", Type: "text"}, {Name: "b", Type: "integer", Generated: true}},
		ForeignKeys: []ForeignKey{{Columns: []string{"a"}, RefSchema: "public", RefTable: "v", RefColumns: []string{"a"}},
			{Columns: []string{"a"}, RefSchema: "public", RefTable: "v", RefColumns: []string{"a"}}}}
	cat := catalogOf{view, gen}
	where := Group{Items: []Node{{Cond: &Cond{Column: "a", Op: Eq, Value: Value{Text: "x"}}}}}
	if _, err := PlanUpdate(cat, &Update{Schema: "public", Table: "v", Set: Row{Keys: []string{"a"}, Values: []json.RawMessage{[]byte("1")}}, Where: where}); err == nil {
		t.Error("a view was written")
	}
	if _, err := PlanInsert(cat, &Insert{Schema: "public", Table: "g", Rows: []Row{{Keys: []string{"b"}, Values: []json.RawMessage{[]byte("1")}}}}); err == nil {
		t.Error("a generated column was written")
	}
	if _, err := PlanInsert(cat, &Insert{Schema: "public", Table: "g", Rows: []Row{{Keys: []string{"a"}, Values: []json.RawMessage{[]byte("1")}}}, OnConflict: []string{"zz"}}); err == nil {
		t.Error("an unknown conflict column passed")
	}
	if _, err := PlanSelect(cat, &Select{Schema: "public", Table: "g", Items: []Item{{Embed: &Embed{Relation: "v", Items: []Item{{Star: true}}}}}}); err == nil {
		t.Error("an ambiguous relation passed")
	}
	if _, err := PlanSelect(cat, &Select{Schema: "public", Table: "g", Items: []Item{{Star: true}}, Order: []Order{{Column: "zz"}}}); err == nil {
		t.Error("an unknown order column passed")
	}
	if _, err := PlanDelete(cat, &Delete{Schema: "public", Table: "g", Where: Group{Items: []Node{{Cond: &Cond{Column: "zz", Op: Eq}}}}}); err == nil {
		t.Error("an unknown filter column passed")
	}
	if r := (Row{Keys: []string{"a"}, Values: []json.RawMessage{[]byte(`1`)}}); string(r.JSON()) != `{"a":1}` {
		t.Errorf("row json %s", r.JSON())
	}
}

// renderSelect plans q in cat and renders it for d.
func renderSelect(t *testing.T, cat Catalog, d *Dialect, q *Select) Statement {
	t.Helper()
	p, err := PlanSelect(cat, q)
	if err != nil {
		t.Fatal(err)
	}
	st, err := SQLSelect(d, p, q)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOffsetIsAParameter: on PostgreSQL every page after the first renders
// the same text (the offset is an argument), so that paging reuses one
// prepared statement; on SQLite too.
func TestOffsetIsAParameter(t *testing.T) {
	cat := catalogOf{{Schema: "public", Name: "t", Kind: "table", Columns: []Column{{Name: "a", Type: "text"}}}}
	bind := func(_ *Column, v Value) (any, error) { return v.Text, nil }
	render := func(d *Dialect, offset int) Statement {
		t.Helper()
		q := &Select{Schema: "public", Table: "t", Items: []Item{{Star: true}}, Limit: 10, Offset: offset, Count: true,
			Order: []Order{{Column: "a"}}}
		return renderSelect(t, cat, d, q)
	}
	pg := &Dialect{Postgres: true, BindValue: bind}
	a, b := render(pg, 10), render(pg, 20)
	if a.SQL != b.SQL || !strings.Contains(a.SQL, " LIMIT 11 OFFSET $1::bigint") {
		t.Errorf("postgres pages differ or the offset is not a parameter:\n%s\n%s", a.SQL, b.SQL)
	}
	if len(b.Args) != 1 || b.Args[0] != "20" {
		t.Errorf("postgres arguments %v, want the offset as text", b.Args)
	}
	if first := render(pg, 0); strings.Contains(first.SQL, "OFFSET") || len(first.Args) != 0 {
		t.Errorf("the first page: %s %v", first.SQL, first.Args)
	}
	lite, lite2 := render(&Dialect{BindValue: bind}, 20), render(&Dialect{BindValue: bind}, 30)
	if lite.SQL != lite2.SQL || !strings.Contains(lite.SQL, " OFFSET ?1") || len(lite.Args) != 1 || lite.Args[0] != 20 {
		t.Errorf("sqlite: %s %v", lite.SQL, lite.Args)
	}
}
