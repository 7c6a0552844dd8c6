module github.com/mcp-fleet/mcp-fleet/servers/supabase

go 1.26.0

require (
	github.com/mcp-fleet/mcp-fleet/shared v0.0.0-00010101000000-000000000000
)
