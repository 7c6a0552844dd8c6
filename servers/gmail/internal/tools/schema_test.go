package tools_test

import (
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestToolSchemas compares every tool's definition (name, title,
// description, inputSchema, annotations) with its snapshot in
// testdata/schemas, so a change to what clients see is deliberate: rerun
// with -update and review the diff.
func TestToolSchemas(t *testing.T) {
	mcptest.CheckSnapshots(t, "gmail", tools.All(localServer(t).deps))
}

// TestToolAnnotations: every tool states all four hints, has a title and a
// closed object schema; the effects are what the tools do, and on the
// local mailbox no tool is open world.
func TestToolAnnotations(t *testing.T) {
	readOnly := mcptest.Hints{ReadOnly: true, Idempotent: true}
	effects := map[string]mcptest.Hints{
		"send_email": {}, "send_template_email": {}, "create_draft": {},
		"get_email": readOnly, "get_thread_history": readOnly, "search_emails": readOnly,
		"get_attachment": {Idempotent: true}, "list_templates": readOnly,
	}
	mcptest.CheckAnnotations(t, mcptest.ListedTools(t, "gmail", tools.All(localServer(t).deps)), mcptest.HintsTable(effects))
	for _, tool := range tools.All(gmailServer(t).deps) {
		if !mcptest.OpenWorld(tool) && tool.Name != "list_templates" {
			t.Errorf("%s: not open world on Gmail", tool.Name)
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
