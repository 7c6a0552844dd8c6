package tools_test

import (
	"slices"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/testenv"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

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

// TestToolSchemas compares every tool's definition (name, title, description,
// inputSchema, annotations) with its snapshot in testdata/schemas. A change
// to what clients see must be deliberate: rerun with -update and review the
// diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSnapshots(t, "supabase", definitions(t))
}

// TestToolAnnotations: besides the checks every server makes, the hints say
// what each tool does, and none is open world on the embedded backend.
func TestToolAnnotations(t *testing.T) {
	mcptest.CheckAnnotations(t, mcptest.ListedTools(t, "supabase", definitions(t)), func(t testing.TB, name string, h mcptest.Hints) {
		readOnly := slices.Contains([]string{"supabase_query", "supabase_list_tables", "supabase_describe_table"}, name)
		if h.ReadOnly != readOnly {
			t.Errorf("readOnlyHint = %v, want %v", h.ReadOnly, readOnly)
		}
		destructive := slices.Contains([]string{"supabase_update", "supabase_delete", "supabase_rpc"}, name)
		if h.Destructive != destructive {
			t.Errorf("destructiveHint = %v, want %v", h.Destructive, destructive)
		}
		if h.OpenWorld {
			t.Errorf("the embedded backend is local state, yet openWorldHint=true")
		}
	})
}

// TestAgentReady: every tool is one every LLM host accepts, with an
// outputSchema (the embedded backend words the longest descriptions).
func TestAgentReady(t *testing.T) {
	mcptest.CheckAgentReady(t, "supabase", definitions(t), 0)
}
