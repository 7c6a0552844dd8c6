package main

import (
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestDocs: docs/devtools.md embeds the reference `devtools-mcp docs`
// prints, so the page cannot drift from the definitions.
//
//	go test ./servers/devtools/cmd/devtools-mcp -run TestDocs -args -update
func TestDocs(t *testing.T) {
	mcptest.CheckReference(t, spec(), "../../../../docs/devtools.md", mcptest.Updating())
}
