package tools_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

const aclPath = "../../../../configs/acl.yaml"

var supabaseTools = []string{"supabase_delete", "supabase_describe_table", "supabase_insert", "supabase_list_tables",
	"supabase_query", "supabase_rpc", "supabase_update"}

// agentTools are the Supabase tools each agent is granted.
var agentTools = map[string][]string{
	"orchestrator":      {"supabase_describe_table", "supabase_insert", "supabase_list_tables", "supabase_query", "supabase_update"},
	"client_data":       {"supabase_describe_table", "supabase_insert", "supabase_list_tables", "supabase_query", "supabase_update"},
	"flight_search":     {"supabase_describe_table", "supabase_insert", "supabase_list_tables", "supabase_query", "supabase_update"},
	"proposal_analysis": {"supabase_describe_table", "supabase_insert", "supabase_list_tables", "supabase_query", "supabase_rpc", "supabase_update"},
	"communication":     {"supabase_describe_table", "supabase_list_tables", "supabase_query", "supabase_update"},
	"error_monitor":     {"supabase_describe_table", "supabase_insert", "supabase_list_tables", "supabase_query", "supabase_update"},
	"developer":         nil,
}

// TestAgentFlows runs every agent's documented calls, in the order of a
// charter request's life, as that agent under the shipped policy, on every
// backend; each agent sees exactly its tools and is refused the others.
func TestAgentFlows(t *testing.T) {
	policy, err := acl.Load(aclPath)
	if err != nil {
		t.Fatal(err)
	}
	forEach(t, func(t *testing.T, e *testenv.Env) {
		d := deps(t, e)
		as := func(agent string) *mcptest.Client { return serve(t, d, policy, agent) }

		// In a fixed order: the suite compares the calls' outcomes across
		// backends call by call.
		for _, agent := range slices.Sorted(maps.Keys(agentTools)) {
			want := agentTools[agent]
			c := as(agent)
			got := c.ToolNames()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s sees %v, want %v", agent, got, want)
			}
			for _, tool := range supabaseTools {
				if slices.Contains(want, tool) {
					continue
				}
				b := failCode(t, c, tool, map[string]any{"table": "iso_workflows", "filters": where(eq("id", "x")),
					"data": rowList(cells("state", "x")), "function": "calculate_quote_scores"}, mcperr.PermissionDeny)
				if b.Message == "" {
					t.Errorf("%s/%s: empty refusal", agent, tool)
				}
			}
		}
		if n := count(t, client(t, e), "iso_workflows", nil); n != 0 {
			t.Fatalf("a refused call wrote: %d workflows", n)
		}

		t.Run("orchestrator", func(t *testing.T) {
			c := as("orchestrator")
			r := call(t, c, "supabase_query", map[string]any{"table": "iso_workflows", "filters": where(eq("request_id", "req-123")), "select": "id, state, created_at"})
			if len(rowsOf(t, r)) != 0 {
				t.Errorf("existing workflows %v", r)
			}
			r = call(t, c, "supabase_query", map[string]any{"table": "iso_requests", "filters": where(eq("id", "req-123")), "select": "*"})
			if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["departure_airport"] != "KTEB" {
				t.Errorf("request %v", r)
			}
			r = call(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": rowList(cells("request_id", "req-123", "state", "CREATED", "priority", "high", "metadata", map[string]any{"urgency": "urgent"}))})
			row := rowsOf(t, r)[0]
			if meta, _ := row["metadata"].(map[string]any); row["state"] != "CREATED" || meta["urgency"] != "urgent" {
				t.Errorf("created %v", row)
			}
			call(t, c, "supabase_insert", map[string]any{"table": "iso_workflows", "data": rowList(cells("id", "wf-123", "request_id", "req-123"))})
			r = call(t, c, "supabase_update", map[string]any{"table": "iso_workflows", "filters": where(eq("request_id", "req-123")), "data": cells("state", "ANALYZING")})
			if rows := rowsOf(t, r); len(rows) != 2 || rows[0]["state"] != "ANALYZING" {
				t.Errorf("transition %v", r)
			}
		})

		t.Run("client_data", func(t *testing.T) {
			c := as("client_data")
			r := call(t, c, "supabase_query", map[string]any{"table": "client_cache", "filters": where(eq("email", "john@example.com"))})
			if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["vip_status"] != "gold" {
				t.Errorf("cache %v", r)
			}
			profile := cells("client_id", "client-789", "name", "Jane Doe", "email", "jane@example.com", "company", "Doe Aviation",
				"vip_status", "silver", "preferences", map[string]any{"catering": "vegan"}, "cached_at", "2025-11-14T12:00:00.000Z")
			r = call(t, c, "supabase_insert", map[string]any{"table": "client_cache", "data": rowList(profile)})
			if row := rowsOf(t, r)[0]; row["name"] != "Jane Doe" || row["client_id"] != "client-789" {
				t.Errorf("cached %v", row)
			}
		})

		t.Run("flight_search", func(t *testing.T) {
			c := as("flight_search")
			flights := []any{map[string]any{"aircraft": "Citation X", "price": 48200}, map[string]any{"aircraft": "Phenom 300", "price": 38600}}
			legs := []any{map[string]any{"from": "KTEB", "to": "KOPF", "date": "2025-11-15", "price": 21000}}
			r := call(t, c, "supabase_insert", map[string]any{"table": "flight_options", "data": rowList(cells("request_id", "req-123", "rfp_id", "rfp-456", "flights", flights, "empty_legs", legs))})
			if row := rowsOf(t, r)[0]; row["rfp_id"] != "rfp-456" || len(row["flights"].([]any)) != 2 {
				t.Errorf("saved %v", row)
			}
			r = call(t, c, "supabase_query", map[string]any{"table": "flight_options", "filters": where(eq("request_id", "req-123")), "select": "rfp_id, empty_legs"})
			if rows := rowsOf(t, r); len(rows) != 1 || len(rows[0]["empty_legs"].([]any)) != 1 {
				t.Errorf("history %v", r)
			}
		})

		t.Run("proposal_analysis", func(t *testing.T) {
			c := as("proposal_analysis")
			r := call(t, c, "supabase_query", map[string]any{"table": "quotes", "filters": where(eq("rfp_id", "rfp-123")), "select": "*"})
			quotes := r["rows"].([]any)
			if len(quotes) != 3 {
				t.Fatalf("quotes %v", r)
			}
			r = call(t, c, "supabase_rpc", map[string]any{"function": "calculate_quote_scores", "params": params("quotes", quotes, "client_preferences", map[string]any{"max_budget": 70000}, "weights", map[string]any{"price": 0.30, "safety": 0.35, "speed": 0.15, "comfort": 0.20})})
			scores := rowsOf(t, r)
			if len(scores) != 3 || scores[0]["rank"] != 1.0 {
				t.Errorf("scores %v", scores)
			}
			r = call(t, c, "supabase_insert", map[string]any{"table": "quote_scores", "data": rowList(cells("rfp_id", "rfp-123", "quote_id", "quote-456", "price_score", 85, "safety_score", 92, "speed_score", 78, "comfort_score", 88, "total_score", 87, "rank", 1))})
			if row := rowsOf(t, r)[0]; row["total_score"] != 87.0 || row["rank"] != 1.0 {
				t.Errorf("saved score %v", row)
			}
		})

		t.Run("communication", func(t *testing.T) {
			c := as("communication")
			r := call(t, c, "supabase_query", map[string]any{"table": "ranked_proposals", "filters": where(eq("request_id", "req-123")),
				"orderBy": asc("rank"), "limit": 3})
			if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["quote_id"] != "quote-456" || rows[0]["operator_name"] != "Executive Jet Management" {
				t.Errorf("proposals %v", r)
			}
			r = call(t, c, "supabase_update", map[string]any{"table": "iso_workflows", "filters": where(eq("request_id", "req-123")),
				"data": cells("state", "COMPLETED", "email_sent_at", "2025-11-14T15:30:00.000Z", "email_message_id", "msg-789")})
			if rows := rowsOf(t, r); len(rows) != 2 || rows[1]["email_message_id"] != "msg-789" {
				t.Errorf("sent %v", r)
			}
		})

		t.Run("error_monitor", func(t *testing.T) {
			c := as("error_monitor")
			call(t, c, "supabase_insert", map[string]any{"table": "agent_errors", "data": rowList(cells("workflow_id", "wf-123", "agent_type", "flight_search", "task_id", "task-456", "error_type", "avinode_timeout", "error_message", "API request timed out after 30s", "retry_count", 1, "stack_trace", "Error: timeout\n    at search (avinode.ts:42)", "occurred_at", "2025-11-14T15:31:00.000Z"))})
			r := call(t, c, "supabase_query", map[string]any{"table": "agent_errors", "filters": where(eq("task_id", "task-456")), "select": "retry_count"})
			if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["retry_count"] != 1.0 || len(rows[0]) != 1 {
				t.Errorf("retries %v", r)
			}
			r = call(t, c, "supabase_update", map[string]any{"table": "iso_workflows", "filters": where(eq("id", "wf-123")), "data": cells("state", "FAILED", "failed_at", "2025-11-14T15:32:00.000Z", "failure_reason", "Max retries exceeded (3) for Avinode API")})
			if rows := rowsOf(t, r); len(rows) != 1 || rows[0]["state"] != "FAILED" {
				t.Errorf("failed %v", r)
			}
		})
	})
}
