package tools_test

import "github.com/mcp-fleet/mcp-fleet/servers/sheets/internal/a1"

type a1Range = a1.Range

func a1Tab(t string) a1.Range { return a1.Tab(t) }
