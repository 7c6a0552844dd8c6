package tools_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/scoring"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// outcome is what a call came to, in a form comparable across backends:
// the error code, or "ok" and the result with values that differ by
// nature (generated ids, the time of the call) masked.
func outcome(res *mcp.CallToolResult) string {
	if res.IsError {
		var b struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal([]byte(mcptest.Text(res)), &b)
		out := "error " + b.Code
		if m := sqlstate.FindStringSubmatch(b.Message); m != nil {
			out += " " + m[1]
		}
		return out
	}
	raw, _ := json.Marshal(res.StructuredContent)
	out := volatile.ReplaceAllString(string(raw), `"<generated>"`)
	// Row estimates are each database's own statistics, and a column's
	// default is an expression in its own SQL.
	out = estimate.ReplaceAllString(out, "rows")
	out = rowEstimate.ReplaceAllString(out, `"row_estimate":"?"`)
	return "ok " + defaultExpr.ReplaceAllString(out, `"default":"<expression>"`)
}

// notCompared stands for an outcome a backend cannot give by its nature:
// the PostgREST client describes a table from the OpenAPI document, which
// names no unique constraints or foreign keys and lists as required only
// the NOT NULL columns without a default.
const notCompared = "not compared"

var (
	estimate    = regexp.MustCompile(`~[0-9]+ rows|rows unknown`)
	rowEstimate = regexp.MustCompile(`"row_estimate":-?[0-9]+`)
	defaultExpr = regexp.MustCompile(`"default":"(?:[^"\\]|\\.)*"`)
)

// sameOutcome compares two outcomes; an error's SQLSTATE counts when both
// have one (a check made before the database, by the tool, has none).
func sameOutcome(a, b string) bool {
	if a == b || strings.HasSuffix(a, notCompared) || strings.HasSuffix(b, notCompared) {
		return true
	}
	strip := func(s string) string {
		if f := strings.Fields(s); len(f) == 4 && f[1] == "error" {
			return strings.Join(f[:3], " ")
		}
		return s
	}
	return strings.HasPrefix(a, strings.SplitN(b, ": ", 2)[0]) && strip(a) == strip(b) && (a == strip(a) || b == strip(b))
}

// sqlstate finds the SQLSTATE a database error's message ends with.
var sqlstate = regexp.MustCompile(`\[(?:SQLSTATE )?([0-9A-Z]{5})\]$`)

// volatile matches generated UUIDs and timestamps of the current year and
// later (rows written during the test); sample data is older.
var volatile = regexp.MustCompile(`"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"|"20(2[6-9]|[3-9][0-9])-[0-9-]+T[0-9:.]+(Z|[+-]00:00)"`)

// agreeCases are the places where an embedded database is looser than
// PostgreSQL; each must come to the same outcome on every backend.
var agreeCases = []struct {
	name string
	tool string
	args map[string]any
}{
	{"integer above int4", "supabase_insert", map[string]any{"table": "agent_errors", "select": "retry_count",
		"data": rowList(cells("agent_type", "t", "error_type", "e", "retry_count", 3000000000))}},
	{"integer below int4", "supabase_insert", map[string]any{"table": "agent_errors", "select": "retry_count",
		"data": rowList(cells("agent_type", "t", "error_type", "e", "retry_count", -2147483649))}},
	{"integer at int4 max", "supabase_insert", map[string]any{"table": "agent_errors", "select": "retry_count",
		"data": rowList(cells("agent_type", "t", "error_type", "e", "retry_count", 2147483647))}},
	{"integer as a fraction", "supabase_insert", map[string]any{"table": "agent_errors", "select": "retry_count",
		"data": rowList(cells("agent_type", "t", "error_type", "e", "retry_count", 1.5))}},
	{"integer filter above int4", "supabase_query", map[string]any{"table": "agent_errors", "select": "id",
		"filters": where(cond("retry_count", "gt", 3000000000))}},
	{"NUL in text", "supabase_insert", map[string]any{"table": "agent_errors", "select": "error_type",
		"data": rowList(cells("agent_type", "t", "error_type", "a\x00b"))}},
	{"NUL in a text filter", "supabase_query", map[string]any{"table": "agent_errors", "select": "id",
		"filters": where(eq("error_type", "a\x00b"))}},
	{"timestamp yesterday", "supabase_insert", map[string]any{"table": "agent_errors", "select": "resolved_at",
		"data": rowList(cells("agent_type", "t", "error_type", "e", "resolved_at", "yesterday"))}},
	{"timestamp epoch", "supabase_insert", map[string]any{"table": "agent_errors", "select": "resolved_at",
		"data": rowList(cells("agent_type", "t", "error_type", "e", "resolved_at", "epoch"))}},
	{"timestamp nonsense", "supabase_insert", map[string]any{"table": "agent_errors", "select": "resolved_at",
		"data": rowList(cells("agent_type", "t", "error_type", "e", "resolved_at", "next tuesday"))}},
	{"timestamp filter epoch", "supabase_query", map[string]any{"table": "quotes", "select": "id",
		"filters": where(cond("created_at", "gt", "epoch")), "orderBy": asc("id")}},
	{"is true on text", "supabase_query", map[string]any{"table": "agent_errors", "select": "id",
		"filters": where(cond("error_type", "is", true))}},
	{"is null on text", "supabase_query", map[string]any{"table": "agent_errors", "select": "id",
		"filters": where(cond("error_type", "is", nil))}},
	{"jsonb equals a bare string", "supabase_query", map[string]any{"table": "iso_requests", "select": "id",
		"filters": where(eq("details", "budget"))}},
	{"jsonb equals an object in another key order", "supabase_query", map[string]any{"table": "iso_workflows", "select": "id",
		"filters": where(eq("metadata", `{}`)), "orderBy": asc("id")}},
	{"jsonb greater than a string", "supabase_query", map[string]any{"table": "iso_requests", "select": "id",
		"filters": where(cond("details", "gt", "x"))}},
	{"jsonb values of every kind", "supabase_insert", map[string]any{"table": "iso_workflows", "select": "metadata",
		"data": rowList(
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `"b"`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `"a"`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `"ab"`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `1`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `2.5`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `-3`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `true`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `false`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `[]`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `[1]`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `[1, 2]`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `["a"]`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `{}`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `{"a": 1}`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `{"b": 1}`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `{"aa": 0}`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `{"a": 1, "b": 2}`}},
			[]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `{"a": 2}`}})}},
	{"jsonb ordered", "supabase_query", map[string]any{"table": "iso_workflows", "select": "metadata", "orderBy": asc("metadata")}},
	{"jsonb ordered descending", "supabase_query", map[string]any{"table": "iso_workflows", "select": "metadata", "orderBy": desc("metadata")}},
	{"jsonb greater than a number", "supabase_query", map[string]any{"table": "iso_workflows", "select": "metadata",
		"filters": where(cond("metadata", "gt", 1)), "orderBy": asc("metadata")}},
	{"jsonb less than a string", "supabase_query", map[string]any{"table": "iso_workflows", "select": "metadata",
		"filters": where(cond("metadata", "lt", `"b"`)), "orderBy": asc("metadata")}},
	{"jsonb at least an array", "supabase_query", map[string]any{"table": "iso_workflows", "select": "metadata",
		"filters": where(cond("metadata", "gte", `[1]`)), "orderBy": asc("metadata")}},
	{"jsonb below an object", "supabase_query", map[string]any{"table": "iso_workflows", "select": "metadata",
		"filters": where(cond("metadata", "lt", `{"b": 1}`), cond("metadata", "gte", `{}`)), "orderBy": asc("metadata")}},
	// Paging: OFFSET is a bind parameter, so the pages of one shape share
	// one statement; the count is of every matching row, the embedded
	// parent comes with each row of the page.
	{"first page with a count and an embedded parent", "supabase_query", map[string]any{"table": "quotes",
		"select": "id,total_price_usd,iso_requests(id,passengers)", "limit": 2, "offset": 0, "count": true, "orderBy": desc("total_price_usd")}},
	{"last page with a count and an embedded parent", "supabase_query", map[string]any{"table": "quotes",
		"select": "id,total_price_usd,iso_requests(id,passengers)", "limit": 2, "offset": 2, "count": true, "orderBy": desc("total_price_usd")}},
	{"page past the end with a count", "supabase_query", map[string]any{"table": "quotes",
		"select": "id,total_price_usd,iso_requests(id,passengers)", "limit": 2, "offset": 5, "count": true, "orderBy": desc("total_price_usd")}},
	{"filtered middle page with a count and an embedded parent", "supabase_query", map[string]any{"table": "quotes",
		"select": "id,iso_requests(client_email)", "filters": where(eq("request_id", "req-123")), "limit": 1, "offset": 1,
		"count": true, "orderBy": asc("id")}},
	{"page of parents with embedded children", "supabase_query", map[string]any{"table": "iso_requests",
		"select": "id,quotes(id)", "limit": 1, "offset": 0, "count": true, "orderBy": asc("id")}},
	{"page past the parents with a count", "supabase_query", map[string]any{"table": "iso_requests",
		"select": "id,quotes(id)", "limit": 1, "offset": 1, "count": true, "orderBy": asc("id")}},
	{"upsert on a non-unique column", "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "name",
		"data": rowList(cells("email", "new@example.com", "name", "John Smith"))}},
	{"upsert on the primary key", "supabase_insert", map[string]any{"table": "client_cache", "onConflict": "id", "select": "id,email",
		"data": rowList(cells("id", "cc-1", "email", "john@example.com"))}},
	{"jsonb from JSON text", "supabase_insert", map[string]any{"table": "iso_workflows", "select": "metadata",
		"data": rowList([]any{map[string]any{"column": "request_id", "value": "req-123"},
			map[string]any{"column": "metadata", "json": `{"b": [1, 2.50, "x"], "a": {"nested": null}}`}})}},
	{"jsonb from a string value", "supabase_insert", map[string]any{"table": "iso_workflows", "select": "metadata",
		"data": rowList(cells("request_id", "req-123", "metadata", `{"a": 1}`))}},
	{"jsonb from JSON text of a string", "supabase_insert", map[string]any{"table": "iso_workflows", "select": "metadata",
		"data": rowList([]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `"text"`}})}},
	{"jsonb from JSON text null", "supabase_insert", map[string]any{"table": "iso_workflows", "select": "metadata",
		"data": rowList([]any{map[string]any{"column": "request_id", "value": "req-123"}, map[string]any{"column": "metadata", "json": `null`}})}},
	{"JSON text for a text column", "supabase_insert", map[string]any{"table": "agent_errors", "select": "error_type",
		"data": rowList([]any{map[string]any{"column": "agent_type", "value": "t"}, map[string]any{"column": "error_type", "json": `{"a": 1}`}})}},
	{"jsonb set from JSON text", "supabase_update", map[string]any{"table": "iso_workflows", "select": "metadata",
		"filters": where(eq("request_id", "req-123")), "data": []any{map[string]any{"column": "metadata", "json": `[1, {"k": true}]`}}}},
	{"function argument as a string value", "supabase_rpc", map[string]any{"function": "calculate_quote_scores",
		"params": []any{map[string]any{"name": "quotes", "value": `[{"id": "a", "total_price_usd": 1}]`}}}},
	{"scores with extreme numbers", "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "total_price_usd": 1e300, "safety_rating": 1e300, "flight_time_minutes": 1e300},
		map[string]any{"id": "b", "total_price_usd": 0.001, "safety_rating": -1e300, "flight_time_minutes": 1}})}},
	{"scores with a huge budget", "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "total_price_usd": 50000, "safety_rating": 4.5}}, "client_preferences", map[string]any{"max_budget": 1e300})}},
	{"scores with tiny weights", "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "total_price_usd": 50000, "safety_rating": 4.5}}, "weights", map[string]any{"price": 1e-300, "safety": 0, "speed": 0, "comfort": 0})}},
	{"scores with safety certifications", "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", certificationQuotes())}},
	{"scores with an unknown safety certification", "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "safety_rating": "ARGUS Gold"}, map[string]any{"id": "b", "safety_rating": "ARGUS Bronze"}})}},
	{"scores with a safety rating that is neither", "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "safety_rating": true}})}},
	{"scores with a safety rating that is not a number", "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", []any{map[string]any{"id": "a", "safety_rating": "NaN"}})}},
}

// certificationQuotes is a quote for every accepted certification, and for
// looser spellings of some, beside a number and a numeric string.
func certificationQuotes() []any {
	var qs []any
	add := func(rating any) {
		qs = append(qs, map[string]any{"id": fmt.Sprintf("q%02d", len(qs)), "total_price_usd": 40000 + 1000*len(qs), "safety_rating": rating})
	}
	for _, c := range scoring.Certifications() {
		add(c.Name)
	}
	for _, r := range []any{"argus gold plus", "ISBAO", "is-bao stage 2", " Wyvern-Wingman ", "argus_silver", 4.2, " 3.5 "} {
		add(r)
	}
	return qs
}

// TestBackendsAgree runs each case on every backend and requires the
// outcome PostgreSQL gives.
func TestBackendsAgree(t *testing.T) {
	got := map[string][]string{}
	testenv.ForEach(t, func(t *testing.T, e *testenv.Env) {
		c := client(t, e)
		for _, tc := range agreeCases {
			got[e.Name] = append(got[e.Name], outcome(c.Call(tc.tool, tc.args)))
		}
	})
	want := got["postgres"]
	if len(want) != len(agreeCases) {
		t.Fatalf("postgres ran %d cases", len(want))
	}
	for name, outs := range got {
		for i, o := range outs {
			if !sameOutcome(o, want[i]) {
				t.Errorf("%s: %s: %s", agreeCases[i].name, name, diff(o, want[i]))
			}
		}
	}
}

// diff shows where two outcomes part: a little before, and what follows
// in each.
func diff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	end := func(s string) string { return s[min(from, len(s)):min(i+160, len(s))] }
	return "…" + end(a) + "…\n  postgres: …" + end(b) + "…"
}
