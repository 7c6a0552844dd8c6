package clients

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/schema"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

// TestEveryToolAgentReady: every tool each built server lists can be
// offered to every LLM host — one refused tool makes a host refuse the
// whole server — and declares the shape of its result. The LLM host check
// (tools/host-check) runs the hosts' own SDKs over the same lists; this
// holds the rules in Go, next to the servers.
func TestEveryToolAgentReady(t *testing.T) {
	fl := loadFleet(t)
	for _, s := range testbin.Servers {
		for _, tool := range fl.defs[s] {
			var probs []string
			probs = append(probs, schema.ToolProblems(tool.Name, tool.Description)...)
			in, _ := json.Marshal(tool.InputSchema)
			var root map[string]any
			if err := json.Unmarshal(in, &root); err != nil {
				t.Fatalf("%s %s: input schema %s: %v", s, tool.Name, in, err)
			}
			probs = append(probs, schema.Problems(root)...)
			if tool.OutputSchema.Type != "object" {
				probs = append(probs, "no outputSchema of type object")
			}
			if len(probs) > 0 {
				t.Errorf("%s %s: %s", s, tool.Name, strings.Join(probs, "; "))
			}
		}
	}
}
