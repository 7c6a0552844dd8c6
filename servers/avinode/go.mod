module github.com/mcp-fleet/mcp-fleet/servers/avinode

go 1.26.0

require golang.org/x/text v0.43.0
