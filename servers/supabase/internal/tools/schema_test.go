package tools_test

import (
	"encoding/json"
	"flag"
	"slices"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas/*.json from the current tool definitions")

const schemaDir = "testdata/schemas"

// definitions are the tools as an embedded-database server defines them
// with the default limits: descriptions name the backend and the limits, so
// the snapshot is of one fixed configuration. To accept a change, run
//
//	go test ./servers/supabase/internal/tools/ -run 'TestToolSchemas|TestToolAnnotations' -update
//
// and review the testdata/schemas/<tool>.json diff before committing.
func definitions(t *testing.T) []kit.Tool {
	return tools.All(deps(t, testenv.Embedded(t)))
}

// listedTools returns each tool's definition exactly as tools/list sends it
// on the wire, by tool name.
func listedTools(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	all := definitions(t)
	return mcptest.ListedTools(t, "supabase", all)
}

// TestToolSchemas compares every tool's definition (name, title, description,
// inputSchema, annotations) with its snapshot in testdata/schemas. A change
// to what clients see must be deliberate: rerun with -update and review the
// diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSchemas(t, listedTools(t), schemaDir, *update)
}

// TestToolAnnotations: every tool states all four hints explicitly (mcp-go's
// defaults would call a tool destructive and open-world), has a title, and a
// read-only tool never claims to be destructive.
func TestToolAnnotations(t *testing.T) {
	for name, raw := range listedTools(t) {
		t.Run(name, func(t *testing.T) {
			var def struct {
				Name        string                     `json:"name"`
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
				v, ok := def.Annotations[h]
				var b bool
				if !ok || json.Unmarshal(v, &b) != nil {
					t.Errorf("annotation %s is not set to a boolean: %s", h, v)
				}
				hints[h] = b
			}
			if hints["readOnlyHint"] && (hints["destructiveHint"] || !hints["idempotentHint"]) {
				t.Errorf("read-only tool with destructiveHint=%v idempotentHint=%v", hints["destructiveHint"], hints["idempotentHint"])
			}
			if def.Title == "" || string(def.Annotations["title"]) != jsonString(def.Title) {
				t.Errorf("title %q, annotations.title %s", def.Title, def.Annotations["title"])
			}
			if def.Description == "" || def.InputSchema["type"] != "object" || def.InputSchema["additionalProperties"] != false {
				t.Errorf("description %q, inputSchema type %v additionalProperties %v", def.Description, def.InputSchema["type"], def.InputSchema["additionalProperties"])
			}
			readOnly := slices.Contains([]string{"supabase_query", "supabase_list_tables", "supabase_describe_table"}, name)
			if hints["readOnlyHint"] != readOnly {
				t.Errorf("readOnlyHint = %v, want %v", hints["readOnlyHint"], readOnly)
			}
			destructive := slices.Contains([]string{"supabase_update", "supabase_delete", "supabase_rpc"}, name)
			if hints["destructiveHint"] != destructive {
				t.Errorf("destructiveHint = %v, want %v", hints["destructiveHint"], destructive)
			}
			if hints["openWorldHint"] {
				t.Errorf("the embedded backend is local state, yet openWorldHint=true")
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestAgentReady: every tool is one every LLM host accepts, with an
// outputSchema (the embedded backend words the longest descriptions).
func TestAgentReady(t *testing.T) {
	for _, tool := range definitions(t) {
		if err := kit.AgentReady(tool); err != nil {
			t.Errorf("%v", err)
		}
	}
}
