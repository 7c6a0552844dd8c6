package tools_test

import (
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestToolSchemas compares every tool's definition (name, title,
// description, inputSchema, annotations) with its snapshot in
// testdata/schemas, so a change to what clients see is deliberate: rerun
// with -update and review the diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSnapshots(t, "sheets", tools.All(localServer(t).deps))
}

// TestToolAnnotations: every tool states all four hints, has a title and a
// closed object schema; the effects are what the tools do, and on the
// local backend no tool is open world.
func TestToolAnnotations(t *testing.T) {
	readOnly := mcptest.Hints{ReadOnly: true, Idempotent: true}
	effects := map[string]mcptest.Hints{
		"list_clients": readOnly, "search_clients": readOnly, "get_client": readOnly,
		"read_sheet": readOnly, "create_client": {}, "update_client": {Destructive: true, Idempotent: true},
		"add_flight_history": {Idempotent: true},
	}
	mcptest.CheckAnnotations(t, mcptest.ListedTools(t, "sheets", tools.All(localServer(t).deps)), mcptest.HintsTable(effects))
	// With Google Sheets behind them, every tool reaches a shared spreadsheet.
	for _, tool := range tools.All(googleServer(t).deps) {
		if !mcptest.OpenWorld(tool) {
			t.Errorf("%s: not open world on Google Sheets", tool.Name)
		}
	}
}

// TestAgentReady: every tool, on either backend, is one every LLM host
// accepts: portable arguments, limits on name and description, and an
// outputSchema its results are checked against.
func TestAgentReady(t *testing.T) {
	for name, open := range backends() {
		mcptest.CheckAgentReady(t, name, tools.All(open(t).deps), 0)
	}
}
