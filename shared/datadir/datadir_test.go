package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestResolvePrecedence(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		server string
		env    map[string]string
		want   string
	}{
		{
			name:   "server variable wins over everything",
			server: "devtools",
			env: map[string]string{
				"DEVTOOLS_DATA_DIR": "/srv/dev",
				"MCP_DATA_DIR":      "/srv/mcp",
				"XDG_DATA_HOME":     "/xdg",
				"HOME":              "/home/u",
			},
			want: "/srv/dev",
		},
		{
			name:   "MCP_DATA_DIR next, with the server name appended",
			server: "devtools",
			env:    map[string]string{"MCP_DATA_DIR": "/srv/mcp", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"},
			want:   "/srv/mcp/devtools",
		},
		{
			name:   "XDG_DATA_HOME next",
			server: "devtools",
			env:    map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"},
			want:   "/xdg/mcp-fleet/devtools",
		},
		{
			name:   "HOME last",
			server: "devtools",
			env:    map[string]string{"HOME": "/home/u"},
			want:   "/home/u/.local/share/mcp-fleet/devtools",
		},
		{
			name:   "hyphenated server uses an underscored upper-case variable",
			server: "google-workspace",
			env: map[string]string{
				"GOOGLE_WORKSPACE_DATA_DIR": "/data/gw",
				"MCP_DATA_DIR":              "/srv/mcp",
			},
			want: "/data/gw",
		},
		{
			name:   "hyphenated server keeps its hyphens in derived paths",
			server: "google-workspace",
			env: map[string]string{
				"GOOGLE-WORKSPACE_DATA_DIR": "/wrong", // not the variable name
				"google-workspace_DATA_DIR": "/wrong",
				"MCP_DATA_DIR":              "/srv/mcp",
			},
			want: "/srv/mcp/google-workspace",
		},
		{
			name:   "hyphenated server under XDG",
			server: "avinode-api",
			env:    map[string]string{"XDG_DATA_HOME": "/xdg"},
			want:   "/xdg/mcp-fleet/avinode-api",
		},
		{
			name:   "another server's variable is ignored",
			server: "gmail",
			env:    map[string]string{"DEVTOOLS_DATA_DIR": "/srv/dev", "HOME": "/home/u"},
			want:   "/home/u/.local/share/mcp-fleet/gmail",
		},
		{
			name:   "relative server variable made absolute",
			server: "devtools",
			env:    map[string]string{"DEVTOOLS_DATA_DIR": "rel/dir"},
			want:   filepath.Join(cwd, "rel/dir"),
		},
		{
			name:   "relative MCP_DATA_DIR made absolute",
			server: "devtools",
			env:    map[string]string{"MCP_DATA_DIR": "data"},
			want:   filepath.Join(cwd, "data", "devtools"),
		},
		{
			name:   "relative XDG_DATA_HOME made absolute",
			server: "devtools",
			env:    map[string]string{"XDG_DATA_HOME": "xdg"},
			want:   filepath.Join(cwd, "xdg", "mcp-fleet", "devtools"),
		},
		{
			name:   "paths are cleaned",
			server: "devtools",
			env:    map[string]string{"MCP_DATA_DIR": "/srv//mcp/../data/"},
			want:   "/srv/data/devtools",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.server, envOf(tc.env))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.server, got, tc.want)
			}
		})
	}
}

func TestResolveFallsBackToUserHomeDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	got, err := Resolve("devtools", envOf(nil)) // getenv knows nothing
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if want := filepath.Join(home, ".local", "share", "mcp-fleet", "devtools"); got != want {
		t.Errorf("Resolve = %q, want %q", got, want)
	}
}

func TestResolveNoHome(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("home", "") // plan9
	_, err := Resolve("devtools", envOf(nil))
	if err == nil {
		t.Fatal("Resolve found a home directory without $HOME")
	}
	if !strings.Contains(err.Error(), "DEVTOOLS_DATA_DIR") {
		t.Errorf("error %q should name the server's variable", err)
	}
}

func TestResolveEmptyName(t *testing.T) {
	called := false
	getenv := func(string) string { called = true; return "/x" }
	if _, err := Resolve("", getenv); err == nil {
		t.Fatal("Resolve(\"\") succeeded")
	}
	if _, err := Ensure("", getenv); err == nil {
		t.Fatal("Ensure(\"\") succeeded")
	}
	if called {
		t.Error("getenv consulted for an empty server name")
	}
}

func TestEnsureCreatesPrivateDir(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name   string
		server string
		env    map[string]string
		want   string
	}{
		{"server var, nested", "devtools", map[string]string{"DEVTOOLS_DATA_DIR": filepath.Join(base, "a", "b", "dev")}, filepath.Join(base, "a", "b", "dev")},
		{"MCP_DATA_DIR", "google-workspace", map[string]string{"MCP_DATA_DIR": filepath.Join(base, "mcp")}, filepath.Join(base, "mcp", "google-workspace")},
		{"XDG", "gmail", map[string]string{"XDG_DATA_HOME": filepath.Join(base, "xdg")}, filepath.Join(base, "xdg", "mcp-fleet", "gmail")},
		{"HOME", "sheets", map[string]string{"HOME": filepath.Join(base, "home")}, filepath.Join(base, "home", ".local", "share", "mcp-fleet", "sheets")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Ensure(tc.server, envOf(tc.env))
			if err != nil {
				t.Fatalf("Ensure: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Ensure = %q, want %q", got, tc.want)
			}
			fi, err := os.Stat(got)
			if err != nil {
				t.Fatalf("directory not created: %v", err)
			}
			if !fi.IsDir() {
				t.Fatalf("%s is not a directory", got)
			}
			if perm := fi.Mode().Perm(); perm != 0o700 {
				t.Errorf("mode = %#o, want 0700", perm)
			}
			// Idempotent.
			again, err := Ensure(tc.server, envOf(tc.env))
			if err != nil || again != got {
				t.Errorf("second Ensure = %q, %v", again, err)
			}
		})
	}
}

func TestEnsureFailsWhenPathIsAFile(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Ensure("devtools", envOf(map[string]string{"MCP_DATA_DIR": file}))
	if err == nil {
		t.Fatal("Ensure succeeded below a regular file")
	}
	if !strings.Contains(err.Error(), "datadir: create") {
		t.Errorf("unexpected error %v", err)
	}
}
