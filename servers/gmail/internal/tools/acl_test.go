package tools_test

import (
	"slices"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestShippedPolicy: with configs/acl.yaml the communication agent sends,
// drafts and checks what it sent — searching the mailbox and reading
// threads and attachments only with the opt-in grant file
// configs/acl.d/communication-mailbox.yaml — the error monitor may send
// (and list templates), and no other agent sees or calls any gmail tool.
func TestShippedPolicy(t *testing.T) {
	p := mcptest.ShippedPolicy(t)
	s := localServer(t)
	want := map[string][]string{
		"communication": {"create_draft", "get_email", "list_templates", "send_email", "send_template_email"},
		"error_monitor": {"list_templates", "send_email", "send_template_email"},
	}
	c := s.connect(t, p, "communication")
	for _, tool := range []string{"search_emails", "get_thread_history", "get_attachment"} {
		mcptest.FailCode(t, c.Call(tool, map[string]any{"query": "x", "thread_id": "x", "message_id": "x", "attachment_id": "x"}), mcperr.PermissionDeny)
	}
	wide := mcptest.ShippedPolicy(t, "communication-mailbox.yaml")
	if got := s.connect(t, wide, "communication").ToolNames(); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tools.Names))) {
		t.Errorf("communication with the mailbox grant sees %v, want every gmail tool", got)
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
