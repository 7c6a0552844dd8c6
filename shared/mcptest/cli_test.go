package mcptest

import "testing"

func TestCheckCLI(t *testing.T) {
	bin := Build(t, "./testdata/echo-mcp")
	CheckCLI(t, bin, []string{"hunter2-secret"}, []CLICase{
		{Name: "--version", Args: []string{"--version"}, Stdout: []string{"echo-mcp test"}},
		{Name: "unknown flag", Args: []string{"--nosuch"}, Code: 2, Stderr: []string{"nosuch"}, QuietStdout: true},
		{Name: "empty stdin", Env: []string{"ECHO_TOKEN=hunter2-secret"}, QuietStdout: true},
	})
}
