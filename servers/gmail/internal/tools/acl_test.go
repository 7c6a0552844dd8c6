package tools_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestShippedPolicy: with configs/acl.yaml only the communication agent
// has every gmail tool, the error monitor may send (and list templates),
// and no other agent sees or calls any.
func TestShippedPolicy(t *testing.T) {
	p, err := acl.Load(filepath.Join("..", "..", "..", "..", "configs", "acl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := localServer(t)
	want := map[string][]string{
		"communication": slices.Sorted(slices.Values(tools.Names)),
		"error_monitor": {"list_templates", "send_email", "send_template_email"},
	}
	for _, agent := range append(p.Agents(), "nobody") {
		t.Run(agent, func(t *testing.T) {
			c := s.connect(t, p, agent)
			got := c.ToolNames()
			slices.Sort(got)
			if !slices.Equal(got, want[agent]) {
				t.Fatalf("%s sees %v, want %v", agent, got, want[agent])
			}
			res := c.Call("send_email", map[string]any{"to": "admin@jetvision.example", "subject": "CRITICAL: workflow failed", "body": "x"})
			if slices.Contains(want[agent], "send_email") {
				mcptest.OK(t, res, nil)
			} else {
				mcptest.FailCode(t, res, mcperr.PermissionDeny)
				mcptest.FailCode(t, c.Call("get_email", map[string]any{"message_id": "x"}), mcperr.PermissionDeny)
			}
		})
	}
}
