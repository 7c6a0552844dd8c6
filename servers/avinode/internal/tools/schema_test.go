package tools_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas/*.json from the current tool definitions")

const schemaDir = "testdata/schemas"

// schemaFamilies are the tool families whose definitions are snapshotted.
// Definitions do not depend on the backend; the simulated one is used. To
// snapshot a change, run
//
//	go test ./servers/avinode/internal/tools/ -run 'TestToolSchemas|TestToolAnnotations' -update
//
// and review the testdata/schemas/<tool>.json diff before committing.
var schemaFamilies = []struct {
	name  string
	tools func(d tools.Deps) []kit.Tool
}{
	{"trips", tools.TripTools},
	{"quotes", tools.QuoteTools},
	{"messages", tools.MessageTools},
	{"airports", tools.AirportTools},
	{"empty legs", tools.EmptyLegTools},
	{"webhooks", tools.WebhookTools},
}

func schemaDeps(t *testing.T) tools.Deps {
	st := openStore(t, filepath.Join(t.TempDir(), "avinode.db"), kit.NewNotifier())
	return tools.Deps{Store: st, Market: mock.New(st, mock.Config{})}
}

// listedTools returns each tool's definition exactly as tools/list sends it
// on the wire, by tool name.
func listedTools(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var all []kit.Tool
	d := schemaDeps(t)
	for _, f := range schemaFamilies {
		all = append(all, f.tools(d)...)
	}
	if len(all) != len(tools.All(d)) {
		t.Fatalf("the families hold %d tools, All %d: add the new family here", len(all), len(tools.All(d)))
	}
	return mcptest.ListedTools(t, "avinode", all)
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
			readOnly := slices.Contains([]string{"get_trip", "get_rfq", "get_quotes", "get_messages", "search_airports",
				"search_empty_legs", "list_watches", "list_webhook_events", "find_trips"}, name)
			if hints["readOnlyHint"] != readOnly {
				t.Errorf("readOnlyHint = %v, want %v", hints["readOnlyHint"], readOnly)
			}
			destructive := name == "cancel_trip" || name == "delete_watch"
			if hints["destructiveHint"] != destructive {
				t.Errorf("destructiveHint = %v, want %v", hints["destructiveHint"], destructive)
			}
			// The record of created trips and the webhook event queue are
			// local; everything else reaches the marketplace (airport
			// search too, with credentials).
			local := name == "find_trips" || name == "list_webhook_events" || name == "requeue_webhook_event"
			if hints["openWorldHint"] == local {
				t.Errorf("openWorldHint = %v", hints["openWorldHint"])
			}
		})
	}
}

// TestAgentReady: every tool passes the kit's check for LLM hosts: limits
// of its name and description, a portable input schema, an outputSchema.
func TestAgentReady(t *testing.T) {
	all := tools.All(schemaDeps(t))
	if len(all) != 15 {
		t.Errorf("%d tools, want 15", len(all))
	}
	for _, tool := range all {
		if err := kit.AgentReady(tool); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
