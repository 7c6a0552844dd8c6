package tools_test

import (
	"encoding/json"
	"flag"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas/*.json from the current tool definitions")

const schemaDir = "testdata/schemas"

// listedTools returns each tool's definition exactly as tools/list sends it
// on the wire, by tool name, for the local backend (the defaults: no
// credentials, read_sheet's default cap).
func listedTools(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	all := tools.All(localServer(t).deps)
	return mcptest.ListedTools(t, "sheets", all)
}

// TestToolSchemas compares every tool's definition (name, title,
// description, inputSchema, annotations) with its snapshot in
// testdata/schemas, so a change to what clients see is deliberate: rerun
// with -update and review the diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSchemas(t, listedTools(t), schemaDir, *update)
}

// TestToolAnnotations: every tool states all four hints, has a title and a
// closed object schema; the effects are what the tools do.
func TestToolAnnotations(t *testing.T) {
	effects := map[string][3]bool{ // readOnly, destructive, idempotent
		"list_clients": {true, false, true}, "search_clients": {true, false, true}, "get_client": {true, false, true},
		"read_sheet": {true, false, true}, "create_client": {false, false, false}, "update_client": {false, true, true},
		"add_flight_history": {false, false, true},
	}
	for name, raw := range listedTools(t) {
		t.Run(name, func(t *testing.T) {
			var def struct {
				Title       string                     `json:"title"`
				Description string                     `json:"description"`
				InputSchema map[string]any             `json:"inputSchema"`
				Annotations map[string]json.RawMessage `json:"annotations"`
			}
			if err := json.Unmarshal(raw, &def); err != nil {
				t.Fatal(err)
			}
			hints := map[string]bool{}
			for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				var b bool
				if v, ok := def.Annotations[h]; !ok || json.Unmarshal(v, &b) != nil {
					t.Errorf("annotation %s is not set to a boolean", h)
				}
				hints[h] = b
			}
			want, ok := effects[name]
			if !ok {
				t.Fatalf("no expected effect for %s", name)
			}
			if hints["readOnlyHint"] != want[0] || hints["destructiveHint"] != want[1] || hints["idempotentHint"] != want[2] || hints["openWorldHint"] {
				t.Errorf("hints %v, want readOnly/destructive/idempotent %v and not open world (local backend)", hints, want)
			}
			if def.Title == "" || def.Description == "" || def.InputSchema["type"] != "object" || def.InputSchema["additionalProperties"] != false {
				t.Errorf("title %q, description %q, schema %v", def.Title, def.Description, def.InputSchema)
			}
		})
	}
	// With Google Sheets behind them, every tool reaches a shared spreadsheet.
	s := googleServer(t)
	for _, tool := range tools.All(s.deps) {
		if a := tool.Annotations(); a.OpenWorldHint == nil || !*a.OpenWorldHint {
			t.Errorf("%s: not open world on Google Sheets", tool.Name)
		}
	}
}

// TestAgentReady: every tool, on either backend, is one every LLM host
// accepts: portable arguments, limits on name and description, and an
// outputSchema its results are checked against.
func TestAgentReady(t *testing.T) {
	for name, open := range backends() {
		for _, tool := range tools.All(open(t).deps) {
			if err := kit.AgentReady(tool); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}
