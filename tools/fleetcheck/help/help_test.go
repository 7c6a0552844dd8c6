package help

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

const sample = `demo-mcp — MCP server for demos

Usage: demo-mcp [flags]

Flags (each also read from the environment variable shown):
  --transport value            transport: stdio, or http (stdio, http) [$MCP_TRANSPORT] (default stdio)
  --port value                 HTTP listen port (0 picks a free one) [$MCP_PORT, $MCP_HTTP_PORT] (default 3009)
  --read-only                  serve only tools that change nothing [$MCP_READ_ONLY]
  --client-id value            OAuth client id [$DEMO_CLIENT_ID, $GOOGLE_CLIENT_ID]
  --note value                 a [bracketed] remark, then the variable [$DEMO_NOTE]
  $MCP_AUTH_TOKEN              bearer token (environment only; never pass secrets as flags)
  $DEMO_SECRET                 the secret (environment only; never pass secrets as flags)
  --version                    print version and commit, then exit
  --help                       print this help, then exit

Commands (demo-mcp <command> --help for their flags):
  auth                         sign in
  docs                         print the reference
`

func TestParse(t *testing.T) {
	s, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if s.Program != "demo-mcp" || s.DefaultPort != 3009 {
		t.Errorf("program %q port %d", s.Program, s.DefaultPort)
	}
	want := map[string]Flag{
		"transport": {Name: "transport", TakesValue: true, Env: []string{"MCP_TRANSPORT"}, Default: "stdio"},
		"port":      {Name: "port", TakesValue: true, Env: []string{"MCP_PORT", "MCP_HTTP_PORT"}, Default: "3009"},
		"read-only": {Name: "read-only", Env: []string{"MCP_READ_ONLY"}},
		"client-id": {Name: "client-id", TakesValue: true, Env: []string{"DEMO_CLIENT_ID", "GOOGLE_CLIENT_ID"}},
		"note":      {Name: "note", TakesValue: true, Env: []string{"DEMO_NOTE"}},
		"version":   {Name: "version"},
		"help":      {Name: "help"},
	}
	if !reflect.DeepEqual(s.Flags, want) {
		t.Errorf("flags:\n got %+v\nwant %+v", s.Flags, want)
	}
	if !reflect.DeepEqual(s.EnvOnly, []string{"MCP_AUTH_TOKEN", "DEMO_SECRET"}) {
		t.Errorf("env only: %v", s.EnvOnly)
	}
	if !reflect.DeepEqual(s.Commands, []string{"auth", "docs"}) {
		t.Errorf("commands: %v", s.Commands)
	}
	wantEnv := []string{"DEMO_CLIENT_ID", "DEMO_NOTE", "DEMO_SECRET", "GOOGLE_CLIENT_ID", "MCP_AUTH_TOKEN",
		"MCP_HTTP_PORT", "MCP_PORT", "MCP_READ_ONLY", "MCP_TRANSPORT"}
	if got := s.Env(); !reflect.DeepEqual(got, wantEnv) {
		t.Errorf("env:\n got %v\nwant %v", got, wantEnv)
	}
	for _, name := range wantEnv {
		if !s.HasEnv(name) {
			t.Errorf("HasEnv(%s) = false", name)
		}
	}
	if s.HasEnv("MCP_DATA_DIR") || s.HasEnv("bracketed") {
		t.Error("HasEnv reports a variable the help does not list")
	}
	if f, ok := s.FlagForEnv("GOOGLE_CLIENT_ID"); !ok || f.Name != "client-id" {
		t.Errorf("FlagForEnv(GOOGLE_CLIENT_ID) = %+v, %v", f, ok)
	}
	if _, ok := s.FlagForEnv("DEMO_SECRET"); ok {
		t.Error("an environment-only variable has no flag")
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"not a help text", "usage: something\n", "not a server's --help"},
		{"no flags", "x-mcp — a server\n\nFlags:\n", "lists no flags"},
		{"duplicate flag", "x-mcp — a server\n\nFlags:\n  --a value   one\n  --a value   two\n", "listed twice"},
		{"bad port default", "x-mcp — a server\n\nFlags:\n  --port value   port [$MCP_PORT] (default many)\n", "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestLoad reads a real server's --help: the format this package parses is
// the one the kit prints.
func TestLoad(t *testing.T) {
	bin := testbin.Server(t, t.TempDir(), "devtools")
	s, err := Load(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	if s.Program != "devtools-mcp" || s.DefaultPort != 3005 {
		t.Errorf("program %q port %d", s.Program, s.DefaultPort)
	}
	for _, name := range []string{"transport", "acl", "agent", "root", "read-only", "tools"} {
		if _, ok := s.Flags[name]; !ok {
			t.Errorf("--%s missing", name)
		}
	}
	if !s.Flags["root"].TakesValue || s.Flags["read-only"].TakesValue {
		t.Error("--root takes a value, --read-only does not")
	}
	for _, name := range []string{"MCP_AGENT", "MCP_ACL_FILE", "DEVTOOLS_ROOTS", "MCP_AUTH_TOKEN", "MCP_AGENT_TOKENS", "DATABASE_URL"} {
		if !s.HasEnv(name) {
			t.Errorf("%s missing", name)
		}
	}
	if !reflect.DeepEqual(s.Commands, []string{"docs", "health"}) {
		t.Errorf("commands %v", s.Commands)
	}
}

const commandSample = `demo-mcp health — ask a running server's /healthz

Usage: demo-mcp health [flags]

Flags (each also read from the environment variable shown):
  --port value                 the server's HTTP port [$MCP_PORT, $MCP_HTTP_PORT] (default 3009)
  --timeout value              how long to wait for the answer (default 5s)
  --help                       print this help, then exit
`

func TestParseCommand(t *testing.T) {
	s, err := Parse(commandSample)
	if err != nil {
		t.Fatal(err)
	}
	if s.Program != "demo-mcp health" || s.DefaultPort != 3009 {
		t.Errorf("program %q port %d", s.Program, s.DefaultPort)
	}
	if f := s.Flags["timeout"]; !f.TakesValue || len(f.Env) != 0 || f.Default != "5s" {
		t.Errorf("--timeout %+v", f)
	}
}

// TestLoadCommand reads a real server's command help.
func TestLoadCommand(t *testing.T) {
	bin := testbin.Server(t, t.TempDir(), "devtools")
	s, err := LoadCommand(context.Background(), bin, "health")
	if err != nil {
		t.Fatal(err)
	}
	if s.Program != "devtools-mcp health" || s.DefaultPort != 3005 {
		t.Errorf("program %q port %d", s.Program, s.DefaultPort)
	}
	for _, name := range []string{"host", "port", "url", "timeout"} {
		if _, ok := s.Flags[name]; !ok {
			t.Errorf("--%s missing", name)
		}
	}
	if _, ok := s.Flags["transport"]; ok {
		t.Error("the health command lists the server's --transport")
	}
	// A name that is not a command: the server refuses it (exit 2).
	if _, err := LoadCommand(context.Background(), bin, "no-such-command"); err == nil {
		t.Error("an unknown command loaded")
	}
	// A program whose command help names another program.
	other := filepath.Join(t.TempDir(), "other")
	script := "#!/bin/sh\nprintf 'elsewhere-mcp health \\342\\200\\224 x\\n\\nFlags:\\n  --port value   p (default 1)\\n'\n"
	if err := os.WriteFile(other, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCommand(context.Background(), other, "health"); err == nil || !strings.Contains(err.Error(), "names itself") {
		t.Errorf("a help naming another program: %v", err)
	}
}

func TestLoadFails(t *testing.T) {
	dir := t.TempDir()
	notHelp := filepath.Join(dir, "not-help")
	if err := os.WriteFile(notHelp, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), notHelp); err == nil || !strings.Contains(err.Error(), "not a server's --help") {
		t.Errorf("a program that prints something else: %v", err)
	}
	if _, err := Load(context.Background(), filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing program loaded")
	}
}
