package mcptest

import (
	"slices"
	"testing"
)

func TestShippedPolicy(t *testing.T) {
	p := ShippedPolicy(t)
	if !p.HasAgent("communication") || len(p.Grants()) != 0 {
		t.Fatalf("agents %v, grants %v", p.Agents(), p.Grants())
	}
	wide := ShippedPolicy(t, "communication-mailbox.yaml")
	if len(wide.Grants()) != 1 || len(wide.Tools("communication")) <= len(p.Tools("communication")) ||
		slices.Contains(p.Tools("communication"), "search_emails") || !slices.Contains(wide.Tools("communication"), "search_emails") {
		t.Errorf("with the mailbox grant communication may call %v, without %v", wide.Tools("communication"), p.Tools("communication"))
	}
	if r := record(t, func(tb testing.TB) { ShippedPolicy(tb, "no-such-grant.yaml") }); !r.fatal {
		t.Error("a missing grant file passed")
	}
}
