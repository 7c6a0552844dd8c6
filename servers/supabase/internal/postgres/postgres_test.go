package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/postgres"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/scoring"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func admin(t *testing.T, url string, sql ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range sql {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func code(err error) mcperr.Code {
	if err == nil {
		return ""
	}
	return mcperr.Wrap(err).Code
}

// TestSchemasAgree: the PostgreSQL and SQLite schemas describe the same
// tables, columns (order, type, nullability, presence of a default), keys
// and relations.
func TestSchemasAgree(t *testing.T) {
	ctx := context.Background()
	pg, lite := testenv.Postgres(t), testenv.Embedded(t)
	pgTables, err := pg.Backend.Tables(ctx, "public")
	if err != nil {
		t.Fatal(err)
	}
	liteTables, err := lite.Backend.Tables(ctx, "public")
	if err != nil {
		t.Fatal(err)
	}
	var pn, ln []string
	for _, x := range pgTables {
		pn = append(pn, x.Name+"/"+x.Kind)
	}
	for _, x := range liteTables {
		ln = append(ln, x.Name+"/"+x.Kind)
	}
	if !slices.Equal(pn, ln) || len(pn) != 9 {
		t.Fatalf("tables differ:\npostgres %v\nsqlite   %v", pn, ln)
	}
	shape := func(tb *query.Table) string {
		var b strings.Builder
		for _, c := range tb.Columns {
			fmt.Fprintf(&b, "%s %s null=%v default=%v pk=%d\n", c.Name, c.Type, c.Nullable, c.Default != "", c.PrimaryKey)
		}
		fmt.Fprintf(&b, "pk %v unique %v\n", tb.PrimaryKey, tb.Unique)
		for _, fk := range tb.ForeignKeys {
			fmt.Fprintf(&b, "fk %v -> %s.%s %v\n", fk.Columns, fk.RefSchema, fk.RefTable, fk.RefColumns)
		}
		return b.String()
	}
	for _, x := range pgTables {
		a, err := pg.Backend.Describe(ctx, "public", x.Name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := lite.Backend.Describe(ctx, "public", x.Name)
		if err != nil {
			t.Fatal(err)
		}
		if sa, sb := shape(a), shape(b); sa != sb {
			t.Errorf("%s differs:\npostgres:\n%s\nsqlite:\n%s", x.Name, sa, sb)
		}
	}
}

// genQuotes makes varied scoring inputs: decimal and string prices,
// missing fields, ties, budgets, odd weights.
func genQuotes(r *rand.Rand) (quotes, prefs, weights json.RawMessage) {
	n := 1 + r.IntN(6)
	var qs []map[string]any
	for i := range n {
		q := map[string]any{}
		if r.IntN(2) == 0 {
			q["id"] = fmt.Sprintf("q%d", r.IntN(4)*10+i)
		} else {
			q["quote_id"] = fmt.Sprintf("Q-%02d", n-i)
		}
		price := float64(10000+r.IntN(90000)) + float64(r.IntN(1000))/1000
		switch r.IntN(6) {
		case 0:
		case 1:
			q["price"] = price
		case 2:
			q["total_price_usd"] = fmt.Sprintf("%.3f", price)
		case 3:
			q["total_price_usd"] = 50000 // ties
		default:
			q["total_price_usd"] = price
		}
		if r.IntN(5) > 0 {
			q["safety_rating"] = float64(r.IntN(60)) / 12
		}
		if r.IntN(5) > 0 {
			q["comfort_rating"] = fmt.Sprintf("%.2f", float64(r.IntN(500))/100)
		}
		if r.IntN(4) > 0 {
			q["flight_time_minutes"] = 60 + r.IntN(300)
		}
		qs = append(qs, q)
	}
	quotes, _ = json.Marshal(qs)
	p := map[string]any{}
	if r.IntN(2) == 0 {
		p["max_budget"] = 40000 + r.IntN(50000)
	}
	prefs, _ = json.Marshal(p)
	if r.IntN(3) > 0 {
		w := map[string]any{}
		for _, k := range []string{"price", "safety", "speed", "comfort"} {
			if r.IntN(5) > 0 {
				w[k] = float64(r.IntN(10000)) / 10000
			}
		}
		weights, _ = json.Marshal(w)
	}
	return quotes, prefs, weights
}

// TestScoringAgrees: the SQL function and the Go function give the same
// scores and ranks, and refuse the same bad inputs.
func TestScoringAgrees(t *testing.T) {
	ctx := context.Background()
	e := testenv.Postgres(t)
	conn, err := pgx.Connect(ctx, e.AdminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	sqlScores := func(q, p, w json.RawMessage) (string, error) {
		var out string
		var wa any
		if w != nil {
			wa = string(w)
		}
		err := conn.QueryRow(ctx, `SELECT coalesce(json_agg(s), '[]'::json)::text FROM calculate_quote_scores($1::jsonb, $2::jsonb,
			coalesce($3::jsonb, '{"price": 0.30, "safety": 0.35, "speed": 0.15, "comfort": 0.20}'::jsonb)) s`, string(q), string(p), wa).Scan(&out)
		return out, err
	}
	r := rand.New(rand.NewPCG(12, 34))
	for i := range 300 {
		q, p, w := genQuotes(r)
		want, goErr := scoring.Calculate(q, p, w)
		got, sqlErr := sqlScores(q, p, w)
		if (goErr != nil) != (sqlErr != nil) {
			t.Fatalf("case %d %s %s %s: Go error %v, SQL error %v", i, q, p, w, goErr, sqlErr)
		}
		if goErr != nil {
			continue
		}
		var gotRows []scoring.Score
		if err := json.Unmarshal([]byte(got), &gotRows); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotRows, want) {
			t.Fatalf("case %d differs\nquotes %s prefs %s weights %s\nSQL %v\nGo  %v", i, q, p, w, gotRows, want)
		}
	}
	for _, bad := range [][3]string{
		{`{}`, `{}`, `{}`},
		{`[1]`, `{}`, `{}`},
		{`[{"price": 1}]`, `{}`, `{}`},
		{`[{"id": "a", "price": "abc"}]`, `{}`, `{}`},
		{`[{"id": "a", "price": true}]`, `{}`, `{}`},
		{`[{"id": "a"}]`, `[]`, `{}`},
		{`[{"id": "a"}]`, `{}`, `{"price": -1}`},
		{`[{"id": "a"}]`, `{}`, `{"price": 0}`},
		{`[{"id": "a"}]`, `{}`, `{"fun": 1}`},
		{`[{"id": "a", "price": 1e20}]`, `{}`, `{"price": 1}`},
		{`[{"id": "a", "flight_time_minutes": 1e20}]`, `{}`, `{"price": 1}`},
	} {
		_, goErr := scoring.Calculate(json.RawMessage(bad[0]), json.RawMessage(bad[1]), json.RawMessage(bad[2]))
		_, sqlErr := sqlScores(json.RawMessage(bad[0]), json.RawMessage(bad[1]), json.RawMessage(bad[2]))
		if goErr == nil || sqlErr == nil {
			t.Errorf("%v: Go error %v, SQL error %v", bad, goErr, sqlErr)
		}
	}
}

// TestReadOnly: a read-only server's transactions are READ ONLY in the
// database itself.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	adminURL, app := testenv.PostgresURLs(t)
	admin(t, adminURL, `CREATE FUNCTION public.touch_quotes() RETURNS integer LANGUAGE sql AS $$ UPDATE quotes SET notes = 'touched' RETURNING 1 $$`,
		`GRANT EXECUTE ON FUNCTION public.touch_quotes() TO PUBLIC`)
	db, err := postgres.Open(postgres.Config{URL: app, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	where := query.Group{Items: []query.Node{{Cond: &query.Cond{Column: "id", Op: query.Eq, Value: query.Value{Text: "quote-456"}}}}}
	_, err = db.Update(ctx, &query.Update{Schema: "public", Table: "quotes", Set: query.Row{Keys: []string{"notes"}, Values: []json.RawMessage{[]byte(`"x"`)}},
		Where: where, Returning: []query.Item{{Star: true}}, MaxAffected: 10})
	if code(err) != mcperr.PermissionDeny {
		t.Errorf("update on a read-only server: %v", err)
	}
	_, err = db.Call(ctx, &query.Call{Schema: "public", Function: "touch_quotes"})
	if code(err) != mcperr.PermissionDeny {
		t.Errorf("a writing function on a read-only server: %v", err)
	}
	res, err := db.Select(ctx, &query.Select{Schema: "public", Table: "quotes", Items: []query.Item{{Column: "notes"}}, Where: where, Limit: 5})
	if err != nil || string(backend.RowsJSON(res.Rows)) != `[{"notes":null}]` {
		t.Errorf("after the refused writes: %s %v", backend.RowsJSON(res.Rows), err)
	}
}

// TestFunctions: what supabase_rpc may and may not reach on PostgreSQL.
func TestFunctions(t *testing.T) {
	ctx := context.Background()
	adminURL, app := testenv.PostgresURLs(t)
	admin(t, adminURL,
		`CREATE EXTENSION IF NOT EXISTS pgcrypto SCHEMA public`,
		`CREATE FUNCTION public.set_flag() RETURNS text LANGUAGE sql AS $$ SELECT set_config('app.flag', 'leaked', false) $$`,
		`CREATE FUNCTION public.get_flag() RETURNS text LANGUAGE sql STABLE AS $$ SELECT current_setting('app.flag', true) $$`,
		`CREATE FUNCTION public.add(a integer, b integer DEFAULT 1) RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT a + b $$`,
		`CREATE FUNCTION public.add(a text, c text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT a || c $$`,
		`CREATE FUNCTION public.pair(x text) RETURNS TABLE (k text, v integer) LANGUAGE sql AS $$ VALUES (x, 1), (x || x, 2) $$`,
		`CREATE FUNCTION public.nothing() RETURNS void LANGUAGE sql AS $$ SELECT $$`,
		`CREATE FUNCTION public.unnamed(integer) RETURNS integer LANGUAGE sql AS $$ SELECT $1 $$`,
		`CREATE FUNCTION public.secret() RETURNS text LANGUAGE sql AS $$ SELECT 's' $$`,
		`REVOKE EXECUTE ON FUNCTION public.secret() FROM PUBLIC`,
		`CREATE FUNCTION public.slow() RETURNS integer LANGUAGE sql AS $$ SELECT 1 FROM pg_sleep(3) $$`,
		`CREATE PROCEDURE public.proc() LANGUAGE sql AS $$ SELECT 1 $$`,
		`CREATE FUNCTION public.many(VARIADIC xs integer[]) RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$`,
		`CREATE FUNCTION public.jsonish(doc jsonb, label text) RETURNS jsonb LANGUAGE sql AS $$ SELECT doc || jsonb_build_object('label', label) $$`,
	)
	// One connection, so a leak would show on the next call.
	db, err := postgres.Open(postgres.Config{URL: app, MaxConns: 1, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	callFn := func(fn string, args string) (string, error) {
		q := &query.Call{Schema: "public", Function: fn, Limit: 10}
		if args != "" {
			row, err := query.ParseObject("params", json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			q.Args = row
		}
		res, err := db.Call(ctx, q)
		if err != nil {
			return "", err
		}
		if res.Scalar {
			return string(res.Value), nil
		}
		return string(backend.RowsJSON(res.Rows)), nil
	}
	for _, tc := range []struct{ fn, args, want string }{
		{"set_flag", "", `"leaked"`},
		{"get_flag", "", `""`}, // reset by DISCARD ALL, not "leaked"
		{"add", `{"a": 2}`, `3`},
		{"add", `{"a": 2, "b": 5}`, `7`},
		{"add", `{"a": "x", "c": "y"}`, `"xy"`},
		{"pair", `{"x": "ab"}`, `[{"k":"ab","v":1},{"k":"abab","v":2}]`},
		{"nothing", "", `null`},
		{"jsonish", `{"doc": {"a": [1, "two"]}, "label": "l,(x)"}`, `{"a": [1, "two"], "label": "l,(x)"}`},
	} {
		got, err := callFn(tc.fn, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("%s(%s) = %s, %v; want %s", tc.fn, tc.args, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		fn, args string
		code     mcperr.Code
	}{
		{"gen_random_bytes", `{"n": 4}`, mcperr.PermissionDeny}, // belongs to an extension
		{"secret", "", mcperr.PermissionDeny},
		{"proc", "", mcperr.PermissionDeny},
		{"many", `{"xs": [1]}`, mcperr.Validation},
		{"unnamed", "", mcperr.Validation},
		{"add", `{"b": 1}`, mcperr.Validation},
		{"add", `{"a": 1, "z": 1}`, mcperr.Validation},
		{"pair", `{"x": {"not": "text"}}`, mcperr.Validation},
		{"pg_sleep", `{"seconds": 1}`, mcperr.NotFound},
		{"nope", "", mcperr.NotFound},
		{"slow", "", mcperr.Timeout},
	} {
		_, err := callFn(tc.fn, tc.args)
		if code(err) != tc.code {
			t.Errorf("%s(%s): %v, want %s", tc.fn, tc.args, err, tc.code)
		}
	}
	// The connection survived the timeout and the refusals.
	if got, err := callFn("add", `{"a": 1}`); err != nil || got != "2" {
		t.Errorf("after: %s %v", got, err)
	}
	var de interface{ Error() string }
	if _, err := callFn("nope", ""); !errors.As(err, &de) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing function: %v", err)
	}
}
