package tools_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// schemaFamilies are the tool families whose definitions are snapshotted.
// Definitions do not depend on the backend; the simulated one is used. To
// snapshot a change, run
//
//	go test ./servers/avinode/internal/tools/ -run 'TestToolSchemas|TestToolAnnotations' -update
//
// and review the testdata/schemas/<tool>.json diff before committing.
var schemaFamilies = []mcptest.Family[tools.Deps]{
	{Name: "trips", Tools: tools.TripTools},
	{Name: "quotes", Tools: tools.QuoteTools},
	{Name: "messages", Tools: tools.MessageTools},
	{Name: "airports", Tools: tools.AirportTools},
	{Name: "empty legs", Tools: tools.EmptyLegTools},
	{Name: "webhooks", Tools: tools.WebhookTools},
}

func schemaDeps(t *testing.T) tools.Deps {
	st := openStore(t, filepath.Join(t.TempDir(), "avinode.db"), kit.NewNotifier())
	return tools.Deps{Store: st, Market: mock.New(st, mock.Config{})}
}

// definitions are every family's tools; a family missing from
// schemaFamilies fails the test.
func definitions(t *testing.T) []kit.Tool {
	t.Helper()
	d := schemaDeps(t)
	all := mcptest.Collect(schemaFamilies, d)
	if len(all) != len(tools.All(d)) {
		t.Fatalf("the families hold %d tools, All %d: add the new family here", len(all), len(tools.All(d)))
	}
	return all
}

// TestToolSchemas compares every tool's definition (name, title, description,
// inputSchema, annotations) with its snapshot in testdata/schemas. A change
// to what clients see must be deliberate: rerun with -update and review the
// diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSnapshots(t, "avinode", definitions(t))
}

// TestToolAnnotations: besides the checks every server makes, the hints say
// what each tool does.
func TestToolAnnotations(t *testing.T) {
	mcptest.CheckAnnotations(t, mcptest.ListedTools(t, "avinode", definitions(t)), func(t testing.TB, name string, h mcptest.Hints) {
		readOnly := slices.Contains([]string{"get_trip", "get_rfq", "get_quotes", "get_messages", "search_airports",
			"search_empty_legs", "list_watches", "list_webhook_events", "find_trips"}, name)
		if h.ReadOnly != readOnly {
			t.Errorf("readOnlyHint = %v, want %v", h.ReadOnly, readOnly)
		}
		destructive := name == "cancel_trip" || name == "delete_watch"
		if h.Destructive != destructive {
			t.Errorf("destructiveHint = %v, want %v", h.Destructive, destructive)
		}
		// The record of created trips and the webhook event queue are
		// local; everything else reaches the marketplace (airport search
		// too, with credentials).
		local := name == "find_trips" || name == "list_webhook_events" || name == "requeue_webhook_event"
		if h.OpenWorld == local {
			t.Errorf("openWorldHint = %v", h.OpenWorld)
		}
	})
}

// TestAgentReady: every tool passes the kit's check for LLM hosts: limits
// of its name and description, a portable input schema, an outputSchema.
func TestAgentReady(t *testing.T) {
	mcptest.CheckAgentReady(t, "avinode", tools.All(schemaDeps(t)), 15)
}
