package tools_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/scoring"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// The behavioural suite: every test runs on the embedded database,
// PostgreSQL, and the PostgREST client against its fake, and expects the
// same answers.

func TestQuery(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		r := call(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": map[string]any{"rfp_id": "rfp-123"},
			"select": "id, total_price_usd, operator_name", "orderBy": map[string]any{"column": "total_price_usd", "ascending": false}})
		rows := rowsOf(t, r)
		if got := column(rows, "id"); !reflect.DeepEqual(got, strs("quote-458", "quote-456", "quote-457")) {
			t.Errorf("ids %v", got)
		}
		if len(rows[0]) != 3 || rows[0]["total_price_usd"] != 65100.0 || rows[0]["operator_name"] != "Skyline Private" {
			t.Errorf("row %v", rows[0])
		}
		if r["row_count"] != 3.0 || r["truncated"] != nil || r["table"] != "quotes" {
			t.Errorf("result %v", r)
		}

		// limit, truncation, next page, exact count
		r = call(t, c, "supabase_query", map[string]any{"table": "quotes", "select": "id", "limit": 2, "count": true,
			"orderBy": []any{map[string]any{"column": "id"}}})
		if got := column(rowsOf(t, r), "id"); !reflect.DeepEqual(got, strs("quote-456", "quote-457")) || r["truncated"] != true ||
			r["next_offset"] != 2.0 || r["count"] != 3.0 {
			t.Errorf("page 1: %v", r)
		}
		r = call(t, c, "supabase_query", map[string]any{"table": "quotes", "select": "id", "limit": 2, "offset": 2,
			"orderBy": map[string]any{"column": "id"}})
		if got := column(rowsOf(t, r), "id"); !reflect.DeepEqual(got, strs("quote-458")) || r["truncated"] != nil {
			t.Errorf("page 2: %v", r)
		}

		// types come back as JSON: numbers, objects, timestamps
		r = call(t, c, "supabase_query", map[string]any{"table": "iso_requests", "filters": map[string]any{"id": "req-123"}})
		row := rowsOf(t, r)[0]
		details, _ := row["details"].(map[string]any)
		if row["passengers"] != 4.0 || details["max_budget"] != 50000.0 || row["departure_date"] != "2025-11-15" {
			t.Errorf("request row %v", row)
		}
		if ts, err := time.Parse(time.RFC3339, fmt.Sprint(row["created_at"])); err != nil || !ts.Equal(time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)) {
			t.Errorf("created_at %v (%v)", row["created_at"], err)
		}

		// a view
		r = call(t, c, "supabase_query", map[string]any{"table": "ranked_proposals"})
		if len(rowsOf(t, r)) != 0 {
			t.Errorf("ranked_proposals before scoring: %v", r)
		}
	})
}

// tricky are values that PostgREST needs quoted in lists and logic trees.
var tricky = []string{"a,b", "(paren)", `say "hi"`, "dot.ted.value", `back\slash`, " lead", "trail ", "{brace}", "", "emoji ✈", "x)y", `"quoted"`}

func TestFilterOperators(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		var data []any
		for i, v := range tricky {
			data = append(data, map[string]any{"agent_type": "test", "error_type": v, "task_id": fmt.Sprintf("t%02d", i), "retry_count": i})
		}
		r := call(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": data, "select": "task_id"})
		if r["row_count"] != float64(len(tricky)) {
			t.Fatalf("insert %v", r)
		}
		find := func(filters any) []any {
			t.Helper()
			r := call(t, c, "supabase_query", map[string]any{"table": "agent_errors", "select": "task_id", "filters": filters,
				"orderBy": map[string]any{"column": "task_id"}})
			return column(rowsOf(t, r), "task_id")
		}
		for i, v := range tricky {
			id := fmt.Sprintf("t%02d", i)
			if got := find(map[string]any{"error_type": v}); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("eq %q: %v", v, got)
			}
			if got := find(map[string]any{"error_type": map[string]any{"in": []any{v, "nothing"}}}); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("in %q: %v", v, got)
			}
			if got := find(map[string]any{"or": []any{map[string]any{"error_type": v}, map[string]any{"task_id": "none"}}}); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("or eq %q: %v", v, got)
			}
			if got := find(map[string]any{"or": []any{map[string]any{"error_type": map[string]any{"in": []any{v}}}, map[string]any{"task_id": "none"}}}); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("or in %q: %v", v, got)
			}
		}
		cases := []struct {
			name    string
			filters any
			want    []any
		}{
			{"gt", map[string]any{"retry_count": map[string]any{"gt": 9}}, strs("t10", "t11")},
			{"gte lte", map[string]any{"retry_count": map[string]any{"gte": 2, "lte": 3}}, strs("t02", "t03")},
			{"lt", map[string]any{"retry_count": map[string]any{"lt": 1}}, strs("t00")},
			{"neq", map[string]any{"agent_type": "test", "retry_count": map[string]any{"neq": 0}, "task_id": map[string]any{"lt": "t03"}}, strs("t01", "t02")},
			{"like", map[string]any{"error_type": map[string]any{"like": "%.ted.%"}}, strs("t03")},
			{"like star", map[string]any{"error_type": map[string]any{"like": "dot*"}}, strs("t03")},
			{"like case", map[string]any{"error_type": map[string]any{"like": "SAY%"}}, strs()},
			{"ilike", map[string]any{"error_type": map[string]any{"ilike": "SAY%"}}, strs("t02")},
			{"like underscore", map[string]any{"error_type": map[string]any{"like": "x_y"}}, strs("t10")},
			{"in numbers", map[string]any{"retry_count": map[string]any{"in": []any{1, 4}}}, strs("t01", "t04")},
			{"not in", map[string]any{"agent_type": "test", "retry_count": map[string]any{"not": map[string]any{"in": []any{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}}}, strs("t10", "t11")},
			{"not eq", map[string]any{"task_id": map[string]any{"lt": "t02", "not": map[string]any{"eq": "t00"}}}, strs("t01")},
			{"is null", map[string]any{"agent_type": "test", "stack_trace": nil, "retry_count": map[string]any{"lt": 1}}, strs("t00")},
			{"is null op", map[string]any{"resolved_at": map[string]any{"is": nil}, "retry_count": 11}, strs("t11")},
			{"not is null", map[string]any{"error_type": map[string]any{"not": map[string]any{"is": nil}}, "retry_count": 11}, strs("t11")},
			{"or with nested and", map[string]any{"or": []any{
				map[string]any{"retry_count": 0},
				map[string]any{"and": []any{map[string]any{"retry_count": map[string]any{"gte": 5}}, map[string]any{"retry_count": map[string]any{"lte": 6}}}},
			}}, strs("t00", "t05", "t06")},
			{"or of groups", map[string]any{"or": []any{
				map[string]any{"retry_count": 1, "agent_type": "test"},
				map[string]any{"error_type": map[string]any{"like": `"%`}},
			}}, strs("t01", "t11")},
		}
		for _, tc := range cases {
			if got := find(tc.filters); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	})
}

func TestInsertUpsertAndErrors(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		// defaults fill what is left out; rows come back
		r := call(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": map[string]any{"request_id": "req-123"}})
		row := rowsOf(t, r)[0]
		if row["state"] != "CREATED" || row["priority"] != "normal" || row["id"] == "" || row["created_at"] == nil {
			t.Errorf("defaults: %v", row)
		}
		if m, ok := row["metadata"].(map[string]any); !ok || len(m) != 0 {
			t.Errorf("metadata default %v", row["metadata"])
		}
		// many rows, a column missing in one takes its default
		r = call(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "select": "id,state,priority", "data": []any{
			map[string]any{"id": "wf-a", "request_id": "req-123", "priority": "high"},
			map[string]any{"id": "wf-b", "request_id": "req-123", "state": "ANALYZING"},
		}})
		rows := rowsOf(t, r)
		if len(rows) != 2 || rows[0]["priority"] != "high" || rows[0]["state"] != "CREATED" || rows[1]["priority"] != "normal" ||
			rows[1]["state"] != "ANALYZING" || len(rows[0]) != 3 {
			t.Errorf("bulk insert %v", rows)
		}
		// upsert on a unique column
		r = call(t, c, "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "email",
			"data": map[string]any{"email": "john@example.com", "name": "John Q. Smith", "vip_status": "platinum"}})
		if row := rowsOf(t, r)[0]; row["id"] != "cc-1" || row["name"] != "John Q. Smith" || row["vip_status"] != "platinum" || row["company"] != "Smith Holdings" {
			t.Errorf("upsert merged %v", row)
		}
		r = call(t, c, "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "email", "ignoreDuplicates": true,
			"data": map[string]any{"email": "john@example.com", "name": "ignored"}})
		if len(rowsOf(t, r)) != 0 {
			t.Errorf("ignored duplicate returned %v", r)
		}
		if n := count(t, c, "client_cache", map[string]any{"name": "John Q. Smith"}); n != 1 {
			t.Errorf("after ignore: %d", n)
		}
		failCode(t, c, "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "email",
			"data": []any{map[string]any{"email": "a@x"}, map[string]any{"email": "b@x", "name": "B"}}}, mcperr.Validation)

		// errors carry the database's meaning on every backend
		b := failCode(t, c, "supabase_insert", map[string]any{"table": "client_cache", "data": map[string]any{"email": "john@example.com"}}, mcperr.Conflict)
		if !strings.Contains(b.Message, "23505") {
			t.Errorf("duplicate: %s", b.Message)
		}
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": map[string]any{"request_id": "req-missing"}}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": map[string]any{"agent_type": "x"}}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": map[string]any{"request_id": "req-123", "priority": "whenever"}}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_requests", "data": map[string]any{"passengers": "four"}}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_requests", "data": map[string]any{"no_such_column": 1}}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "no_such_table", "data": map[string]any{"a": 1}}, mcperr.NotFound)
		failCode(t, c, "supabase_query", map[string]any{"table": "no_such_table"}, mcperr.NotFound)
		// a failed bulk insert writes nothing
		failCode(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": []any{
			map[string]any{"agent_type": "x", "error_type": "half", "task_id": "half-1"}, map[string]any{"agent_type": "x"}}}, mcperr.Validation)
		if n := count(t, c, "agent_errors", map[string]any{"task_id": "half-1"}); n != 0 {
			t.Errorf("half a failed insert was written")
		}
	})
}

func TestUpdateDeleteGuards(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		d := deps(t, e)
		d.Limits.MaxAffected = 2
		c := serve(t, d, nil, "")
		r := call(t, c, "supabase_update", map[string]any{"table": "quotes", "filters": map[string]any{"id": "quote-456"},
			"data": map[string]any{"status": "shortlisted", "notes": "call back"}, "select": "id,status,notes"})
		if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["status"] != "shortlisted" || rows[0]["notes"] != "call back" {
			t.Errorf("update %v", r)
		}
		// no filter: refused before anything is sent, nothing changes
		for _, f := range []any{nil, map[string]any{}} {
			args := map[string]any{"table": "quotes", "data": map[string]any{"status": "gone"}}
			if f != nil {
				args["filters"] = f
			}
			b := failCode(t, c, "supabase_update", args, mcperr.Validation)
			if b.Data.Field != "filters" && b.Data.Field != "" {
				t.Errorf("field %q", b.Data.Field)
			}
			delete(args, "data")
			failCode(t, c, "supabase_delete", args, mcperr.Validation)
		}
		// more rows than allowed: refused, rolled back
		b := failCode(t, c, "supabase_update", map[string]any{"table": "quotes", "filters": map[string]any{"rfp_id": "rfp-123"},
			"data": map[string]any{"status": "expired"}}, mcperr.Validation)
		if !strings.Contains(b.Message, "3 rows") {
			t.Errorf("guard message %q", b.Message)
		}
		failCode(t, c, "supabase_delete", map[string]any{"table": "quotes", "filters": map[string]any{"rfp_id": "rfp-123"}}, mcperr.Validation)
		if n := count(t, c, "quotes", map[string]any{"status": "expired"}); n != 0 {
			t.Errorf("a refused update changed %d rows", n)
		}
		if n := count(t, c, "quotes", nil); n != 3 {
			t.Errorf("a refused delete removed rows: %d left", n)
		}
		// within the limit
		call(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": []any{
			map[string]any{"agent_type": "x", "error_type": "a", "task_id": "del"}, map[string]any{"agent_type": "x", "error_type": "b", "task_id": "del"}}})
		r = call(t, c, "supabase_delete", map[string]any{"table": "agent_errors", "filters": map[string]any{"task_id": "del"}, "select": "error_type"})
		if got := column(rowsOf(t, r), "error_type"); len(got) != 2 {
			t.Errorf("delete returned %v", got)
		}
		if n := count(t, c, "agent_errors", map[string]any{"task_id": "del"}); n != 0 {
			t.Errorf("delete left %d", n)
		}
		// views are not written
		failCode(t, c, "supabase_update", map[string]any{"table": "ranked_proposals", "filters": map[string]any{"rank": 1}, "data": map[string]any{"rank": 2}}, mcperr.Validation)
	})
}

// TestRPCSafetyCertifications checks on every backend that a
// certification scores its documented rating and that an unknown one is a
// validation error naming the field and the accepted names.
func TestRPCSafetyCertifications(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		for _, cert := range scoring.Certifications() {
			rating, _ := strconv.ParseFloat(cert.Rating, 64)
			for _, name := range []string{cert.Name, strings.ToLower(strings.ReplaceAll(cert.Name, "-", " "))} {
				r := call(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": map[string]any{
					"quotes": []any{map[string]any{"id": "a", "safety_rating": name}}}})
				if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["safety_score"] != rating*20 {
					t.Errorf("%s: %v, want safety_score %v", name, rows, rating*20)
				}
			}
		}
		b := failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": map[string]any{
			"quotes": []any{map[string]any{"id": "a", "safety_rating": 4}, map[string]any{"id": "b", "safety_rating": "ARGUS Bronze"}}}}, mcperr.Validation)
		if !strings.Contains(b.Message, "quotes[1].safety_rating") || !strings.Contains(b.Message, scoring.AcceptedCertifications()) {
			t.Errorf("unknown certification: %s", b.Message)
		}
	})
}

func TestRPCScores(t *testing.T) {
	quotes := []any{
		map[string]any{"id": "quote-456", "total_price_usd": 48200, "safety_rating": 4.6, "comfort_rating": 4.4, "flight_time_minutes": 165},
		map[string]any{"id": "quote-457", "total_price_usd": "38600.50", "safety_rating": 4.2, "comfort_rating": 3.8, "flight_time_minutes": 175},
		map[string]any{"quote_id": "quote-458", "price": 65100, "safety_rating": 4.9, "comfort_rating": 4.9, "flight_time_minutes": 155},
		map[string]any{"id": "quote-459", "safety_rating": 5, "comfort_rating": 5},
	}
	prefs := map[string]any{"max_budget": 60000}
	weights := map[string]any{"price": 0.30, "safety": 0.35, "speed": 0.15, "comfort": 0.20}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	want, err := scoring.Calculate(raw(quotes), raw(prefs), raw(weights))
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	var wantRows []any
	_ = json.Unmarshal(wantJSON, &wantRows)
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		r := call(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores",
			"params": map[string]any{"quotes": quotes, "client_preferences": prefs, "weights": weights}})
		if got := r["rows"]; !reflect.DeepEqual(got, wantRows) {
			t.Errorf("scores\n got %v\nwant %v", got, wantRows)
		}
		// defaults for the optional arguments
		r = call(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": map[string]any{"quotes": quotes[:2]}})
		if rows := rowsOf(t, r); len(rows) != 2 || rows[0]["rank"] != 1.0 {
			t.Errorf("default weights: %v", r)
		}
		for _, bad := range []map[string]any{
			{"quotes": "not an array"},
			{"quotes": quotes, "weights": map[string]any{"price": 1, "luck": 2}},
			{"quotes": quotes, "weights": map[string]any{"price": 0}},
			{"quotes": []any{map[string]any{"total_price_usd": 1}}},
		} {
			failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": bad}, mcperr.Validation)
		}
		failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": map[string]any{"quotes": quotes, "bogus": 1}}, mcperr.Validation)
		failCode(t, c, "supabase_rpc", map[string]any{"function": "no_such_function"}, mcperr.NotFound)
		// the database's own functions are out of reach, whatever the spelling
		for _, fn := range []string{"pg_read_file", "pg_sleep", "PG_SLEEP", "pg_ls_dir"} {
			failCode(t, c, "supabase_rpc", map[string]any{"function": fn, "params": map[string]any{"filename": "/etc/passwd"}}, mcperr.PermissionDeny)
		}
		for _, fn := range []string{"pg_catalog.pg_read_file", "public.calculate_quote_scores", "version()", "now; select 1", ""} {
			failCode(t, c, "supabase_rpc", map[string]any{"function": fn}, mcperr.Validation)
		}
		for _, s := range []string{"pg_catalog", "information_schema", "auth"} {
			failCode(t, c, "supabase_rpc", map[string]any{"function": "version", "schema": s}, mcperr.Validation)
		}
	})
}

func TestDiscovery(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		r := call(t, c, "supabase_list_tables", nil)
		tables, _ := r["tables"].([]any)
		var names []string
		for _, x := range tables {
			line := fmt.Sprint(x)
			names = append(names, strings.Fields(line)[0])
			if strings.HasPrefix(line, "quotes ") && !strings.Contains(line, "table") {
				t.Errorf("line %q", line)
			}
		}
		want := []string{"agent_errors", "avinode_webhook_events", "client_cache", "flight_options", "iso_requests", "iso_workflows",
			"quote_scores", "quotes", "ranked_proposals"}
		if !slices.Equal(names, want) || r["schema"] != "public" {
			t.Errorf("tables %v", tables)
		}
		d := call(t, c, "supabase_describe_table", map[string]any{"table": "quote_scores"})
		cols, _ := d["columns"].([]any)
		first, _ := cols[0].(map[string]any)
		if len(cols) != 10 || first["name"] != "id" || first["primary_key"] != 1.0 || !reflect.DeepEqual(d["primary_key"], strs("id")) {
			t.Errorf("describe %v", d)
		}
		fks, _ := d["foreign_keys"].([]any)
		fk, _ := fks[0].(map[string]any)
		if len(fks) != 1 || fk["references_table"] != "quotes" || !reflect.DeepEqual(fk["columns"], strs("quote_id")) {
			t.Errorf("foreign keys %v", d["foreign_keys"])
		}
		failCode(t, c, "supabase_describe_table", map[string]any{"table": "nope"}, mcperr.NotFound)
	})
}

func TestEmbeddedRelations(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		r := call(t, c, "supabase_query", map[string]any{"table": "quotes", "select": "id, iso_requests(client_email, passengers)",
			"filters": map[string]any{"id": "quote-456"}})
		row := rowsOf(t, r)[0]
		parent, _ := row["iso_requests"].(map[string]any)
		if parent["client_email"] != "john@example.com" || parent["passengers"] != 4.0 || len(parent) != 2 {
			t.Errorf("to-one embed %v", row)
		}
		r = call(t, c, "supabase_query", map[string]any{"table": "iso_requests", "select": "id,quotes(id)", "filters": map[string]any{"id": "req-123"}})
		children, _ := rowsOf(t, r)[0]["quotes"].([]any)
		if len(children) != 3 {
			t.Errorf("to-many embed %v", r)
		}
		failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "select": "id,client_cache(email)"}, mcperr.Validation)
	})
}

// TestInjection: hostile names are refused before anything reaches the
// database, hostile values are only values, and nothing changes.
func TestInjection(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		names := []string{`quotes; DROP TABLE quotes`, `quotes"--`, `quotes where 1=1`, "quotes\x00", "public.quotes", "quotes)", "../quotes", "quötes"}
		for _, n := range names {
			failCode(t, c, "supabase_query", map[string]any{"table": n}, mcperr.Validation)
			failCode(t, c, "supabase_update", map[string]any{"table": n, "filters": map[string]any{"id": "x"}, "data": map[string]any{"status": "x"}}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "select": n}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": map[string]any{n: "x"}}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "orderBy": map[string]any{"column": n}}, mcperr.Validation)
			failCode(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": map[string]any{n: "x", "agent_type": "a", "error_type": "b"}}, mcperr.Validation)
			failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": map[string]any{n: 1}}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "schema": n}, mcperr.Validation)
		}
		for _, v := range []string{"'; DROP TABLE quotes; --", `x' OR '1'='1`, `") OR 1=1 --`, "a,b),id.neq.(x", "eq.quote-456", "*"} {
			r := call(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": map[string]any{"id": v}})
			if len(rowsOf(t, r)) != 0 {
				t.Errorf("value %q matched rows", v)
			}
			r = call(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": map[string]any{"or": []any{map[string]any{"id": v}, map[string]any{"id": map[string]any{"in": []any{v}}}}}})
			if len(rowsOf(t, r)) != 0 {
				t.Errorf("value %q in or/in matched rows", v)
			}
			r = call(t, c, "supabase_update", map[string]any{"table": "quotes", "filters": map[string]any{"id": v}, "data": map[string]any{"status": v}})
			if len(rowsOf(t, r)) != 0 {
				t.Errorf("update by %q changed rows", v)
			}
		}
		if n := count(t, c, "quotes", map[string]any{"status": "received"}); n != 3 {
			t.Errorf("quotes after the attempts: %d", n)
		}
		// operators and shapes that are not in the language
		for _, f := range []any{
			map[string]any{"id": map[string]any{"regex": ".*"}},
			map[string]any{"id": []any{"a"}},
			map[string]any{"id": map[string]any{"eq": nil}},
			map[string]any{"id": map[string]any{"in": []any{}}},
			map[string]any{"id": map[string]any{"eq": map[string]any{"a": 1}}},
			map[string]any{"id": map[string]any{"is": "maybe"}},
			map[string]any{"id": map[string]any{"not": map[string]any{"eq": 1, "neq": 2}}},
			map[string]any{"or": []any{}},
			map[string]any{"or": "id.eq.1"},
			map[string]any{"total_price_usd": map[string]any{"like": "4%"}},
		} {
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": f}, mcperr.Validation)
		}
	})
}

func TestPolicy(t *testing.T) {
	e := testenv.Embedded(t)
	d := deps(t, e)
	d.Policy.DenyTables = []string{"agent_errors", "public.client_*", "iso_req*"}
	d.Policy.AllowFunctions = []string{"calculate_quote_scores"}
	d.Policy.DenyFunctions = []string{"calculate_*"}
	c := serve(t, d, nil, "")
	failCode(t, c, "supabase_query", map[string]any{"table": "agent_errors"}, mcperr.PermissionDeny)
	failCode(t, c, "supabase_insert", map[string]any{"table": "client_cache", "data": map[string]any{"email": "x"}}, mcperr.PermissionDeny)
	failCode(t, c, "supabase_describe_table", map[string]any{"table": "client_cache"}, mcperr.PermissionDeny)
	failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": map[string]any{"quotes": []any{}}}, mcperr.PermissionDeny)
	r := call(t, c, "supabase_list_tables", nil)
	for _, x := range r["tables"].([]any) {
		if s := fmt.Sprint(x); strings.HasPrefix(s, "agent_errors") || strings.HasPrefix(s, "client_cache") {
			t.Errorf("denied table listed: %s", s)
		}
	}
	call(t, c, "supabase_query", map[string]any{"table": "quotes"})
	failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "select": "id,iso_requests(id)", "schema": "public"}, mcperr.PermissionDeny)
	// An allow list that admits everything still never admits the
	// database's own functions.
	open := deps(t, e)
	open.Policy.AllowFunctions = []string{"*", "pg_*", "public.*"}
	oc := serve(t, open, nil, "")
	for _, fn := range []string{"pg_read_file", "pg_sleep", "Pg_Terminate_Backend"} {
		failCode(t, oc, "supabase_rpc", map[string]any{"function": fn}, mcperr.PermissionDeny)
	}
	d2 := call(t, c, "supabase_describe_table", map[string]any{"table": "quotes"})
	if d2["foreign_keys"] != nil {
		t.Errorf("a relation to a denied table is shown: %v", d2["foreign_keys"])
	}
}
