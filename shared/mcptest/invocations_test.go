package mcptest

import "testing"

func TestCheckInvocations(t *testing.T) {
	CheckInvocations(t, Build(t, "./testdata/echo-mcp"), []Invocation{
		{Name: "version", Args: []string{"--version"}, Exit: Exit{Stdout: []string{"echo-mcp test"}}},
		{Name: "bad flag", Args: []string{"--nope"}, Exit: Exit{Code: 2, Stderr: []string{"nope"}, QuietStdout: true}},
		{Name: "bad setting", Env: []string{"MCP_MAX_RESULT_BYTES=many"}, Exit: Exit{Code: 2, Stderr: []string{"MCP_MAX_RESULT_BYTES"}, QuietStdout: true}},
		{Name: "empty stdin is a clean exit", Exit: Exit{QuietStdout: true}},
	})
}
