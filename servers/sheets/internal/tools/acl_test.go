package tools_test

import (
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestShippedPolicy: with the repository's configs/acl.yaml only the
// client-data agent sees and calls the sheets tools — the reading ones;
// writing the sheet needs the opt-in grant file
// configs/acl.d/client-data-sheet-writes.yaml — and reads client records;
// every other agent gets neither.
func TestShippedPolicy(t *testing.T) {
	p := mcptest.ShippedPolicy(t)
	s := localServer(t)
	want := []string{"get_client", "list_clients", "read_sheet", "search_clients"}
	writes := []string{"add_flight_history", "create_client", "update_client"}
	for _, tool := range writes {
		mcptest.FailCode(t, s.connect(t, p, "client_data").Call(tool, map[string]any{"identifier": "CL-001"}), mcperr.PermissionDeny)
	}
	wide := mcptest.ShippedPolicy(t, "client-data-sheet-writes.yaml")
	if got := slices.Sorted(slices.Values(s.connect(t, wide, "client_data").ToolNames())); !slices.Equal(got, slices.Sorted(slices.Values(tools.Names))) {
		t.Errorf("client_data with the sheet-writes grant sees %v, want every sheets tool", got)
	}
	for _, agent := range p.Agents() {
		t.Run(agent, func(t *testing.T) {
			c := s.connect(t, p, agent)
			got := c.ToolNames()
			slices.Sort(got)
			_, readErr := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "sheets://clients/CL-001"}})
			if agent == "client_data" {
				if !slices.Equal(got, want) {
					t.Errorf("client_data sees %v, want %v", got, want)
				}
				mcptest.OK(t, c.Call("get_client", map[string]any{"identifier": "CL-001"}), nil)
				if readErr != nil {
					t.Errorf("client_data reading a client: %v", readErr)
				}
				return
			}
			if len(got) != 0 {
				t.Errorf("%s sees %v", agent, got)
			}
			for _, name := range tools.Names {
				mcptest.FailCode(t, c.Call(name, map[string]any{"identifier": "CL-001"}), mcperr.PermissionDeny)
			}
			if readErr == nil {
				t.Errorf("%s read a client record", agent)
			}
		})
	}
	c := s.connect(t, p, "nobody")
	if got := c.ToolNames(); len(got) != 0 {
		t.Errorf("an unknown agent sees %v", got)
	}
}
