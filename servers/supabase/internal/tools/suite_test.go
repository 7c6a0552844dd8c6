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
		r := call(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": where(eq("rfp_id", "rfp-123")),
			"select": "id, total_price_usd, operator_name", "orderBy": desc("total_price_usd")})
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
			"orderBy": asc("id")})
		if got := column(rowsOf(t, r), "id"); !reflect.DeepEqual(got, strs("quote-456", "quote-457")) || r["truncated"] != true ||
			r["next_offset"] != 2.0 || r["count"] != 3.0 {
			t.Errorf("page 1: %v", r)
		}
		r = call(t, c, "supabase_query", map[string]any{"table": "quotes", "select": "id", "limit": 2, "offset": 2,
			"orderBy": asc("id")})
		if got := column(rowsOf(t, r), "id"); !reflect.DeepEqual(got, strs("quote-458")) || r["truncated"] != nil {
			t.Errorf("page 2: %v", r)
		}

		// types come back as JSON: numbers, objects, timestamps
		r = call(t, c, "supabase_query", map[string]any{"table": "iso_requests", "filters": where(eq("id", "req-123"))})
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
			data = append(data, cells("agent_type", "test", "error_type", v, "task_id", fmt.Sprintf("t%02d", i), "retry_count", i))
		}
		r := call(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": data, "select": "task_id"})
		if r["row_count"] != float64(len(tricky)) {
			t.Fatalf("insert %v", r)
		}
		find := func(filters, or []any) []any {
			t.Helper()
			args := map[string]any{"table": "agent_errors", "select": "task_id", "orderBy": asc("task_id")}
			if filters != nil {
				args["filters"] = filters
			}
			if or != nil {
				args["or"] = or
			}
			r := call(t, c, "supabase_query", args)
			return column(rowsOf(t, r), "task_id")
		}
		for i, v := range tricky {
			id := fmt.Sprintf("t%02d", i)
			if got := find(where(eq("error_type", v)), nil); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("eq %q: %v", v, got)
			}
			if got := find(where(cond("error_type", "in", []any{v, "nothing"})), nil); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("in %q: %v", v, got)
			}
			if got := find(nil, anyOf(where(eq("error_type", v)), where(eq("task_id", "none")))); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("or eq %q: %v", v, got)
			}
			if got := find(nil, anyOf(where(cond("error_type", "in", []any{v})), where(eq("task_id", "none")))); !reflect.DeepEqual(got, strs(id)) {
				t.Errorf("or in %q: %v", v, got)
			}
		}
		cases := []struct {
			name        string
			filters, or []any
			want        []any
		}{
			{"gt", where(cond("retry_count", "gt", 9)), nil, strs("t10", "t11")},
			{"gte lte", where(cond("retry_count", "gte", 2), cond("retry_count", "lte", 3)), nil, strs("t02", "t03")},
			{"lt", where(cond("retry_count", "lt", 1)), nil, strs("t00")},
			{"neq", where(eq("agent_type", "test"), cond("retry_count", "neq", 0), cond("task_id", "lt", "t03")), nil, strs("t01", "t02")},
			{"like", where(cond("error_type", "like", "%.ted.%")), nil, strs("t03")},
			{"like star", where(cond("error_type", "like", "dot*")), nil, strs("t03")},
			{"like case", where(cond("error_type", "like", "SAY%")), nil, strs()},
			{"ilike", where(cond("error_type", "ilike", "SAY%")), nil, strs("t02")},
			{"like underscore", where(cond("error_type", "like", "x_y")), nil, strs("t10")},
			{"in numbers", where(cond("retry_count", "in", []any{1, 4})), nil, strs("t01", "t04")},
			{"in numbers as strings", where(cond("retry_count", "in", []any{"1", "4"})), nil, strs("t01", "t04")},
			{"not in", where(eq("agent_type", "test"), negate(cond("retry_count", "in", []any{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}))), nil, strs("t10", "t11")},
			{"not eq", where(cond("task_id", "lt", "t02"), negate(eq("task_id", "t00"))), nil, strs("t01")},
			{"is null", where(eq("agent_type", "test"), cond("stack_trace", "is", nil), cond("retry_count", "lt", 1)), nil, strs("t00")},
			{"is null op", where(cond("resolved_at", "is", nil), eq("retry_count", 11)), nil, strs("t11")},
			{"not is null", where(negate(cond("error_type", "is", nil)), eq("retry_count", 11)), nil, strs("t11")},
			{"or with a group", nil, anyOf(where(eq("retry_count", 0)), where(cond("retry_count", "gte", 5), cond("retry_count", "lte", 6))),
				strs("t00", "t05", "t06")},
			{"or of groups", nil, anyOf(where(eq("retry_count", 1), eq("agent_type", "test")), where(cond("error_type", "like", `"%`))),
				strs("t01", "t11")},
			{"filters and or", where(cond("retry_count", "lt", 6)), anyOf(where(eq("retry_count", 0)), where(cond("retry_count", "gte", 5))),
				strs("t00", "t05")},
		}
		for _, tc := range cases {
			if got := find(tc.filters, tc.or); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	})
}

func TestInsertUpsertAndErrors(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		// defaults fill what is left out; rows come back
		r := call(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": rowList(cells("request_id", "req-123"))})
		row := rowsOf(t, r)[0]
		if row["state"] != "CREATED" || row["priority"] != "normal" || row["id"] == "" || row["created_at"] == nil {
			t.Errorf("defaults: %v", row)
		}
		if m, ok := row["metadata"].(map[string]any); !ok || len(m) != 0 {
			t.Errorf("metadata default %v", row["metadata"])
		}
		// many rows, a column missing in one takes its default
		r = call(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "select": "id,state,priority", "data": rowList(cells("id", "wf-a", "request_id", "req-123", "priority", "high"), cells("id", "wf-b", "request_id", "req-123", "state", "ANALYZING"))})
		rows := rowsOf(t, r)
		if len(rows) != 2 || rows[0]["priority"] != "high" || rows[0]["state"] != "CREATED" || rows[1]["priority"] != "normal" ||
			rows[1]["state"] != "ANALYZING" || len(rows[0]) != 3 {
			t.Errorf("bulk insert %v", rows)
		}
		// upsert on a unique column
		r = call(t, c, "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "email",
			"data": rowList(cells("email", "john@example.com", "name", "John Q. Smith", "vip_status", "platinum"))})
		if row := rowsOf(t, r)[0]; row["id"] != "cc-1" || row["name"] != "John Q. Smith" || row["vip_status"] != "platinum" || row["company"] != "Smith Holdings" {
			t.Errorf("upsert merged %v", row)
		}
		r = call(t, c, "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "email", "ignoreDuplicates": true,
			"data": rowList(cells("email", "john@example.com", "name", "ignored"))})
		if len(rowsOf(t, r)) != 0 {
			t.Errorf("ignored duplicate returned %v", r)
		}
		if n := count(t, c, "client_cache", where(eq("name", "John Q. Smith"))); n != 1 {
			t.Errorf("after ignore: %d", n)
		}
		failCode(t, c, "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "email",
			"data": rowList(cells("email", "a@x"), cells("email", "b@x", "name", "B"))}, mcperr.Validation)

		// errors carry the database's meaning on every backend
		b := failCode(t, c, "supabase_insert", map[string]any{"table": "client_cache", "data": rowList(cells("email", "john@example.com"))}, mcperr.Conflict)
		if !strings.Contains(b.Message, "23505") {
			t.Errorf("duplicate: %s", b.Message)
		}
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": rowList(cells("request_id", "req-missing"))}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(cells("agent_type", "x"))}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": rowList(cells("request_id", "req-123", "priority", "whenever"))}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_requests", "data": rowList(cells("passengers", "four"))}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "iso_requests", "data": rowList(cells("no_such_column", 1))}, mcperr.Validation)
		failCode(t, c, "supabase_insert", map[string]any{"table": "no_such_table", "data": rowList(cells("a", 1))}, mcperr.NotFound)
		failCode(t, c, "supabase_query", map[string]any{"table": "no_such_table"}, mcperr.NotFound)
		// a failed bulk insert writes nothing
		failCode(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(cells("agent_type", "x", "error_type", "half", "task_id", "half-1"), cells("agent_type", "x"))}, mcperr.Validation)
		if n := count(t, c, "agent_errors", where(eq("task_id", "half-1"))); n != 0 {
			t.Errorf("half a failed insert was written")
		}
	})
}

func TestUpdateDeleteGuards(t *testing.T) {
	forEach(t, func(t *testing.T, e *testenv.Env) {
		d := deps(t, e)
		d.Limits.MaxAffected = 2
		c := serve(t, d, nil, "")
		r := call(t, c, "supabase_update", map[string]any{"table": "quotes", "filters": where(eq("id", "quote-456")),
			"data": cells("status", "shortlisted", "notes", "call back"), "select": "id,status,notes"})
		if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["status"] != "shortlisted" || rows[0]["notes"] != "call back" {
			t.Errorf("update %v", r)
		}
		// no filter: refused before anything is sent, nothing changes
		for _, f := range []any{nil, []any{}} {
			args := map[string]any{"table": "quotes", "data": cells("status", "gone")}
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
		b := failCode(t, c, "supabase_update", map[string]any{"table": "quotes", "filters": where(eq("rfp_id", "rfp-123")),
			"data": cells("status", "expired")}, mcperr.Validation)
		if !strings.Contains(b.Message, "3 rows") {
			t.Errorf("guard message %q", b.Message)
		}
		failCode(t, c, "supabase_delete", map[string]any{"table": "quotes", "filters": where(eq("rfp_id", "rfp-123"))}, mcperr.Validation)
		if n := count(t, c, "quotes", where(eq("status", "expired"))); n != 0 {
			t.Errorf("a refused update changed %d rows", n)
		}
		if n := count(t, c, "quotes", nil); n != 3 {
			t.Errorf("a refused delete removed rows: %d left", n)
		}
		// within the limit
		call(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(cells("agent_type", "x", "error_type", "a", "task_id", "del"), cells("agent_type", "x", "error_type", "b", "task_id", "del"))})
		r = call(t, c, "supabase_delete", map[string]any{"table": "agent_errors", "filters": where(eq("task_id", "del")), "select": "error_type"})
		if got := column(rowsOf(t, r), "error_type"); len(got) != 2 {
			t.Errorf("delete returned %v", got)
		}
		if n := count(t, c, "agent_errors", where(eq("task_id", "del"))); n != 0 {
			t.Errorf("delete left %d", n)
		}
		// views are not written
		failCode(t, c, "supabase_update", map[string]any{"table": "ranked_proposals", "filters": where(eq("rank", 1)), "data": cells("rank", 2)}, mcperr.Validation)
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
				r := call(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "safety_rating": name}})})
				if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["safety_score"] != rating*20 {
					t.Errorf("%s: %v, want safety_score %v", name, rows, rating*20)
				}
			}
		}
		b := failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "safety_rating": 4}, map[string]any{"id": "b", "safety_rating": "ARGUS Bronze"}})}, mcperr.Validation)
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
			"params": params("quotes", quotes, "client_preferences", prefs, "weights", weights)})
		if got := r["rows"]; !reflect.DeepEqual(got, wantRows) {
			t.Errorf("scores\n got %v\nwant %v", got, wantRows)
		}
		// defaults for the optional arguments
		r = call(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", quotes[:2])})
		if rows := rowsOf(t, r); len(rows) != 2 || rows[0]["rank"] != 1.0 {
			t.Errorf("default weights: %v", r)
		}
		for _, bad := range [][]any{
			params("quotes", "not an array"),
			params("quotes", quotes, "weights", map[string]any{"price": 1, "luck": 2}),
			params("quotes", quotes, "weights", map[string]any{"price": 0}),
			params("quotes", []any{map[string]any{"total_price_usd": 1}}),
		} {
			failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": bad}, mcperr.Validation)
		}
		failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", quotes, "bogus", 1)}, mcperr.Validation)
		failCode(t, c, "supabase_rpc", map[string]any{"function": "no_such_function"}, mcperr.NotFound)
		// the database's own functions are out of reach, whatever the spelling
		for _, fn := range []string{"pg_read_file", "pg_sleep", "PG_SLEEP", "pg_ls_dir"} {
			failCode(t, c, "supabase_rpc", map[string]any{"function": fn, "params": params("filename", "/etc/passwd")}, mcperr.PermissionDeny)
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
			"filters": where(eq("id", "quote-456"))})
		row := rowsOf(t, r)[0]
		parent, _ := row["iso_requests"].(map[string]any)
		if parent["client_email"] != "john@example.com" || parent["passengers"] != 4.0 || len(parent) != 2 {
			t.Errorf("to-one embed %v", row)
		}
		r = call(t, c, "supabase_query", map[string]any{"table": "iso_requests", "select": "id,quotes(id)", "filters": where(eq("id", "req-123"))})
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
			failCode(t, c, "supabase_update", map[string]any{"table": n, "filters": where(eq("id", "x")), "data": cells("status", "x")}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "select": n}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": where(eq(n, "x"))}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "orderBy": asc(n)}, mcperr.Validation)
			failCode(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(cells(n, "x", "agent_type", "a", "error_type", "b"))}, mcperr.Validation)
			failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params(n, 1)}, mcperr.Validation)
			failCode(t, c, "supabase_query", map[string]any{"table": "quotes", "schema": n}, mcperr.Validation)
		}
		for _, v := range []string{"'; DROP TABLE quotes; --", `x' OR '1'='1`, `") OR 1=1 --`, "a,b),id.neq.(x", "eq.quote-456", "*"} {
			r := call(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": where(eq("id", v))})
			if len(rowsOf(t, r)) != 0 {
				t.Errorf("value %q matched rows", v)
			}
			r = call(t, c, "supabase_query", map[string]any{"table": "quotes", "or": anyOf(where(eq("id", v)), where(cond("id", "in", []any{v})))})
			if len(rowsOf(t, r)) != 0 {
				t.Errorf("value %q in or/in matched rows", v)
			}
			r = call(t, c, "supabase_update", map[string]any{"table": "quotes", "filters": where(eq("id", v)), "data": cells("status", v)})
			if len(rowsOf(t, r)) != 0 {
				t.Errorf("update by %q changed rows", v)
			}
		}
		if n := count(t, c, "quotes", where(eq("status", "received"))); n != 3 {
			t.Errorf("quotes after the attempts: %d", n)
		}
		// operators and shapes that are not in the language, each refused
		// with an error naming the field
		for _, tc := range []struct {
			args  map[string]any
			field string
		}{
			{map[string]any{"filters": where(cond("id", "regex", ".*"))}, "filters.0.op"},
			{map[string]any{"filters": where(cond("id", "eq", []any{"a"}))}, "filters.0.value"},
			{map[string]any{"filters": where(cond("id", "eq", nil))}, "filters.0.value"},
			{map[string]any{"filters": where(cond("id", "in", []any{}))}, "filters.0.values"},
			{map[string]any{"filters": where(cond("id", "in", []any{nil}))}, "filters.0.values.0"},
			{map[string]any{"filters": where(cond("id", "eq", map[string]any{"a": 1}))}, "filters.0.value"},
			{map[string]any{"filters": where(cond("id", "is", "maybe"))}, "filters.0.value"},
			{map[string]any{"filters": where(map[string]any{"column": "id", "op": "eq"})}, "filters.0.value"},
			{map[string]any{"filters": where(map[string]any{"column": "id", "op": "eq", "value": "a", "values": []any{"b"}})}, "filters.0.values"},
			{map[string]any{"filters": where(map[string]any{"column": "id", "op": "in", "value": "a", "values": []any{"b"}})}, "filters.0.value"},
			{map[string]any{"filters": where(map[string]any{"column": "id", "op": "eq", "value": "a", "and": "b"})}, "filters.0.and"},
			{map[string]any{"or": anyOf(where(eq("id", "a")), where())}, "or.1"},
			{map[string]any{"or": "id.eq.1"}, "or"},
			{map[string]any{"filters": map[string]any{"id": "x"}}, "filters"},
			{map[string]any{"filters": where(cond("total_price_usd", "like", 4))}, "filters.0.value"},
			{map[string]any{"orderBy": []any{map[string]any{"column": "id", "direction": "up"}}}, "orderBy.0.direction"},
		} {
			tc.args["table"] = "quotes"
			b := failCode(t, c, "supabase_query", tc.args, mcperr.Validation)
			if b.Data.Field != tc.field {
				t.Errorf("%v: field %q, want %q (%s)", tc.args, b.Data.Field, tc.field, b.Message)
			}
		}
		// a column or argument named twice, and values given two ways
		for _, tc := range []struct {
			tool  string
			args  map[string]any
			field string
		}{
			{"supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(cells("agent_type", "a", "error_type", "b", "agent_type", "c"))}, "data.0.2.column"},
			{"supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(cells("agent_type", "a"), []any{})}, "data.1"},
			{"supabase_insert", map[string]any{"table": "agent_errors", "data": []any{}}, "data"},
			{"supabase_update", map[string]any{"table": "quotes", "filters": where(eq("id", "x")), "data": cells("status", "a", "status", "b")}, "data.1.column"},
			{"supabase_update", map[string]any{"table": "quotes", "filters": where(eq("id", "x")), "data": []any{map[string]any{"column": "status"}}}, "data.0.value"},
			{"supabase_update", map[string]any{"table": "quotes", "filters": where(eq("id", "x")), "data": []any{map[string]any{"column": "notes", "value": "a", "json": `"b"`}}}, "data.0.json"},
			{"supabase_update", map[string]any{"table": "quotes", "filters": where(eq("id", "x")), "data": []any{map[string]any{"column": "notes", "json": `{"a":`}}}, "data.0.json"},
			{"supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{}, "quotes", []any{})}, "params.1.name"},
		} {
			b := failCode(t, c, tc.tool, tc.args, mcperr.Validation)
			if b.Data.Field != tc.field {
				t.Errorf("%s %v: field %q, want %q (%s)", tc.tool, tc.args, b.Data.Field, tc.field, b.Message)
			}
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
	failCode(t, c, "supabase_insert", map[string]any{"table": "client_cache", "data": rowList(cells("email", "x"))}, mcperr.PermissionDeny)
	failCode(t, c, "supabase_describe_table", map[string]any{"table": "client_cache"}, mcperr.PermissionDeny)
	failCode(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{})}, mcperr.PermissionDeny)
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
