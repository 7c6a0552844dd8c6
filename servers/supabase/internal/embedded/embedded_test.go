package embedded

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestLike(t *testing.T) {
	for _, tc := range []struct {
		s, p string
		want bool
	}{
		{"abc", "abc", true}, {"abc", "a%", true}, {"abc", "%c", true}, {"abc", "a_c", true}, {"abc", "%", true},
		{"", "%", true}, {"", "_", false}, {"abc", "ab", false}, {"a%c", `a\%c`, true}, {"abc", `a\%c`, false},
		{"ééx", "__x", true}, {"abc", "%%b%", true}, {"ABC", "abc", false}, {"a_b", `a\_b`, true}, {"axb", `a\_b`, false},
	} {
		if got := like(tc.s, tc.p); got != tc.want {
			t.Errorf("%q LIKE %q = %v", tc.s, tc.p, got)
		}
	}
}

func TestValues(t *testing.T) {
	ts := &query.Column{Name: "t", Type: typeTimestamp}
	for in, want := range map[string]string{
		`"2025-11-15T10:00:00.000Z"`:     "2025-11-15T10:00:00+00:00",
		`"2025-11-15T12:00:00.5+02:00"`:  "2025-11-15T10:00:00.5+00:00",
		`"2025-11-15 10:00:00"`:          "2025-11-15T10:00:00+00:00",
		`"2025-11-15"`:                   "2025-11-15T00:00:00+00:00",
		`"2025-11-15T10:00:00.1234567Z"`: "2025-11-15T10:00:00.123457+00:00",
	} {
		got, err := bindJSON(ts, json.RawMessage(in))
		if err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, tc := range []struct {
		typ, in string
		want    any
	}{
		{"boolean", `true`, int64(1)}, {"boolean", `"off"`, int64(0)}, {"integer", `7`, int64(7)}, {"numeric", `"2.5"`, 2.5},
		{"numeric", `3`, int64(3)}, {"date", `"2025-11-15T23:00:00Z"`, "2025-11-15"}, {"text", `5`, "5"}, {"text", `{"a":1}`, `{"a":1}`},
		{"jsonb", "{ \"a\" : 1 }", `{"a":1}`}, {"jsonb", `null`, nil},
	} {
		got, err := bindJSON(&query.Column{Type: tc.typ}, json.RawMessage(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("%s %s: %#v %v", tc.typ, tc.in, got, err)
		}
	}
	for _, tc := range []struct{ typ, in string }{{"boolean", `"maybe"`}, {"integer", `1.5`}, {"numeric", `"x"`}, {"date", `"soon"`},
		{typeTimestamp, `"later"`}, {"integer", `[1]`}, {"jsonb", `{`}} {
		if _, err := bindJSON(&query.Column{Type: tc.typ}, json.RawMessage(tc.in)); mcperr.Wrap(err).Code != mcperr.Validation {
			t.Errorf("%s %s accepted: %v", tc.typ, tc.in, err)
		}
	}
	if v, err := bindValue(&query.Column{Type: "boolean"}, query.Value{Kind: query.Bool, Text: "true"}); err != nil || v != int64(1) {
		t.Errorf("filter bool %v %v", v, err)
	}
}

// TestSampleOnlyOnCreation: the sample rows are loaded into a new database
// only, and a reopened database keeps its rows.
func TestSampleOnlyOnCreation(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(ctx, Config{Path: path, Sample: true})
	if err != nil {
		t.Fatal(err)
	}
	where := query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "id", Op: query.Eq, Value: query.Value{Text: "quote-456"}}}}}
	if res, err := db.Delete(ctx, &query.Delete{Schema: Schema, Table: "quotes", Where: where, MaxAffected: 1}); err != nil || res.RowCount != 1 {
		t.Fatalf("delete: %v %v", res, err)
	}
	// Foreign keys are enforced: the request is still referenced.
	req := query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "id", Op: query.Eq, Value: query.Value{Text: "req-123"}}}}}
	if _, err := db.Delete(ctx, &query.Delete{Schema: Schema, Table: "iso_requests", Where: req, MaxAffected: 1}); !strings.Contains(mcperr.Wrap(err).Message, "23503") {
		t.Fatalf("delete of a referenced row: %v", err)
	}
	db.Close()
	db, err = Open(ctx, Config{Path: path, Sample: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Select(ctx, &query.Select{Schema: Schema, Table: "quotes", Items: []query.Item{{Column: "id"}}, Count: true, Limit: 10})
	if err != nil || *res.Count != 2 {
		t.Errorf("after reopening: %v %v", res, err)
	}
	if db.Path() != path || db.Kind() != "embedded" {
		t.Errorf("path %s", db.Path())
	}
	if _, err := db.Call(ctx, &query.Call{Schema: Schema, Function: "calculate_quote_scores"}); mcperr.Wrap(err).Code != mcperr.Validation {
		t.Errorf("missing argument: %v", err)
	}
	if _, err := db.Tables(ctx, "other"); err != nil {
		t.Error(err)
	}
}
