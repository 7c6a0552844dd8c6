package clients

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/help"
)

// A server's --help in the kit's format, for the two servers the unit
// tests know.
func helpText(name string, port int, extra string) string {
	return fmt.Sprintf(`%[1]s-mcp — a server

Flags (each also read from the environment variable shown):
  --transport value            transport (stdio, http) [$MCP_TRANSPORT] (default stdio)
  --port value                 HTTP listen port [$MCP_PORT, $MCP_HTTP_PORT] (default %[2]d)
  --acl value                  policy, then grant files (repeat --acl, or separate with :) [$MCP_ACL_FILE]
  --agent value                agent [$MCP_AGENT]
  --read-only                  serve only tools that change nothing [$MCP_READ_ONLY]
%[3]s  $MCP_AUTH_TOKEN              bearer token (environment only; never pass secrets as flags)
  $MCP_AGENT_TOKENS            agent=token pairs (environment only; never pass secrets as flags)
  --version                    print version and commit, then exit
  --help                       print this help, then exit
`, name, port, extra)
}

func testFacts(t *testing.T) *Facts {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "configs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "configs", "acl.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"acl.yaml", "acl.d/flight-search-cancel-trips.yaml"} {
		if err := os.WriteFile(filepath.Join(root, "configs", f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	facts := &Facts{Root: root, Servers: map[string]*help.Server{}, Images: map[string]string{
		"mcp-fleet/avinode-mcp:latest": "avinode", "mcp-fleet/avinode-mcp": "avinode",
		"mcp-fleet/devtools-mcp:latest": "devtools", "mcp-fleet/devtools-mcp": "devtools",
	}}
	for name, h := range map[string]string{
		"avinode":  helpText("avinode", 3001, "  --mock-operators value       operators [$AVINODE_MOCK_OPERATORS] (default 5)\n  $AVINODE_API_TOKEN           token (environment only; never pass secrets as flags)\n"),
		"devtools": helpText("devtools", 3005, "  --root value                 root [$DEVTOOLS_ROOTS]\n"),
	} {
		s, err := help.Parse(h)
		if err != nil {
			t.Fatal(err)
		}
		facts.Servers[name] = s
	}
	p, err := acl.Parse([]byte("version: 1\nagents:\n  flight_search:\n    tools: [create_trip]\n  developer:\n    tools: [file_read]\n"))
	if err != nil {
		t.Fatal(err)
	}
	facts.Policy = p
	return facts
}

const (
	bin    = RootPlaceholder + "/bin/"
	policy = RootPlaceholder + "/configs/acl.yaml"
)

func TestAnalyzeFindsMistakes(t *testing.T) {
	facts := testFacts(t)
	tests := []struct {
		name   string
		file   string // decides the client
		config string
		want   []string // each must appear in one problem; none means no problems
	}{
		{"a good binary entry", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--mock-operators","3","--read-only"],"env":{"MCP_AGENT":"flight_search","MCP_ACL_FILE":"` + policy + `"}}}}`, nil},
		{"a policy and a shipped grant file", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--acl","` + policy + `","--acl","` + RootPlaceholder + `/configs/acl.d/flight-search-cancel-trips.yaml"],"env":{"MCP_AGENT":"flight_search"}}}}`, nil},
		{"a grant file that is not shipped", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--acl","` + policy + `","--acl","` + RootPlaceholder + `/configs/acl.d/nope.yaml"],"env":{"MCP_AGENT":"flight_search"}}}}`, []string{"acl.d/nope.yaml: no such file in the repository"}},
		{"unknown flag", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--operators","3"]}}}`, []string{"--operators is not a flag of avinode-mcp"}},
		{"flag without its value", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--mock-operators"]}}}`, []string{"--mock-operators needs a value"}},
		{"switch with a value", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--read-only=yes"]}}}`, []string{"--read-only is a switch"}},
		{"positional argument and repeated flag", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["serve","--read-only","--read-only"]}}}`, []string{`argument "serve" is not a --flag`, "--read-only given twice"}},
		{"--version", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--version"]}}}`, []string{"print and exit"}},
		{"unknown variable", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","env":{"AVINODE_KEY":"x"}}}}`, []string{"AVINODE_KEY is not a variable avinode-mcp reads"}},
		{"agent not in the policy", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--acl","` + policy + `"],"env":{"MCP_AGENT":"flightsearch"}}}}`, []string{`agent "flightsearch" is not in configs/acl.yaml`}},
		{"agent without a policy", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--agent","flight_search"]}}}`, []string{"without a policy"}},
		{"policy without an agent", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--acl","` + policy + `"]}}}`, []string{"a policy without an agent"}},
		{"another policy file", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--acl","/etc/acl.yaml"],"env":{"MCP_AGENT":"flight_search"}}}}`, []string{"use the shipped one"}},
		{"missing file under the checkout", "claude_desktop.json",
			`{"mcpServers":{"devtools":{"command":"` + bin + `devtools-mcp","args":["--root","` + RootPlaceholder + `/nope"]}}}`, []string{"no such file in the repository"}},
		{"http transport over stdio", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","args":["--transport","http"]}}}`, []string{"talks to it over stdio"}},
		{"unknown server", "claude_desktop.json",
			`{"mcpServers":{"gmail":{"command":"` + bin + `gmail-mcp"}}}`, []string{`no server "gmail"`}},
		{"name of another server", "claude_desktop.json",
			`{"mcpServers":{"devtools":{"command":"` + bin + `avinode-mcp"}}}`, []string{"should start with the server's (avinode)"}},
		{"unknown command", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"avinode-mcp"}}}`, []string{"is none of"}},
		{"Claude Desktop expands nothing", "claude_desktop.json",
			`{"mcpServers":{"devtools":{"command":"` + bin + `devtools-mcp","args":["--root","${workspaceFolder}"]}}}`, []string{"Claude Desktop does not expand ${workspaceFolder}"}},
		{"Cursor syntax in Claude Code", "x.mcp.json",
			`{"mcpServers":{"avinode":{"type":"http","url":"http://127.0.0.1:3001/mcp","headers":{"Authorization":"Bearer ${env:AVINODE_MCP_TOKEN}"}}}}`, []string{"Claude Code does not expand ${env:AVINODE_MCP_TOKEN}"}},
		{"credentials", "claude_desktop.json",
			`{"mcpServers":{"avinode":{"command":"` + bin + `avinode-mcp","env":{"AVINODE_API_TOKEN":"x"}}}}`, nil},

		{"a good container", "claude_desktop_docker.json",
			`{"mcpServers":{"devtools":{"command":"docker","args":["run","-i","--rm","--init","-e","MCP_AGENT=developer","-e","MCP_READ_ONLY","-v","vol:/data","-v","` + ProjectPlaceholder + `:/workspace:ro","mcp-fleet/devtools-mcp:latest","--acl","/etc/mcp-fleet/acl.yaml","--root","/workspace/src"],"env":{"MCP_READ_ONLY":"true"}}}}`, nil},
		{"container with a terminal and a name", "claude_desktop_docker.json",
			`{"mcpServers":{"avinode":{"command":"docker","args":["run","-it","--rm","--name","x","mcp-fleet/avinode-mcp"]}}}`, []string{"a terminal mangles", "--name", "no -i"}},
		{"container without --rm, publishing a port", "claude_desktop_docker.json",
			`{"mcpServers":{"avinode":{"command":"docker","args":["run","-i","-p","3001:3001","mcp-fleet/avinode-mcp"]}}}`, []string{"no --rm", "listens on no port"}},
		{"container: unknown option, detached", "claude_desktop_docker.json",
			`{"mcpServers":{"avinode":{"command":"docker","args":["run","-i","--rm","-d","--privileged","mcp-fleet/avinode-mcp"]}}}`, []string{"-d: the client talks", "--privileged: an option these checks do not know"}},
		{"container: env not passed, -e not set", "claude_desktop_docker.json",
			`{"mcpServers":{"avinode":{"command":"docker","args":["run","-i","--rm","-e","MCP_AGENT","mcp-fleet/avinode-mcp"],"env":{"MCP_READ_ONLY":"true"}}}}`, []string{"-e MCP_AGENT passes the client's", "env MCP_READ_ONLY reaches docker"}},
		{"container: unknown image", "claude_desktop_docker.json",
			`{"mcpServers":{"avinode":{"command":"docker","args":["run","-i","--rm","ghcr.io/x/avinode:1"]}}}`, []string{"is not one `make images` builds"}},
		{"container: no image", "claude_desktop_docker.json",
			`{"mcpServers":{"avinode":{"command":"podman","args":["run","-i","--rm"]}}}`, []string{"no image"}},
		{"container: not run", "claude_desktop_docker.json",
			`{"mcpServers":{"avinode":{"command":"docker","args":["exec","x"]}}}`, []string{"want docker run -i --rm"}},
		{"container: host paths", "claude_desktop_docker.json",
			`{"mcpServers":{"devtools":{"command":"docker","args":["run","-i","--rm","-v","rel/dir:/x","-v","vol","mcp-fleet/devtools-mcp","--root","/srv","--acl","` + policy + `","--agent","developer"]}}}`,
			[]string{"a host path must be absolute", "-v vol: want SOURCE", "/srv is neither in the image", "is a path on the host", "use the shipped one"}},

		{"a good bridge", "claude_desktop_http.json",
			`{"mcpServers":{"avinode":{"command":"npx","args":["-y","mcp-remote@1.2.3","http://127.0.0.1:3001/mcp","--header","Authorization:${AUTH_HEADER}","--transport","http-only"],"env":{"AUTH_HEADER":"Bearer <AVINODE_MCP_TOKEN>"}}}}`, nil},
		{"bridge without -y or pin", "claude_desktop_http.json",
			`{"mcpServers":{"avinode":{"command":"npx","args":["mcp-remote","http://127.0.0.1:3001/mcp"]}}}`, []string{"without -y", "a pinned version"}},
		{"bridge header with a space, token in the open", "claude_desktop_http.json",
			`{"mcpServers":{"avinode":{"command":"npx","args":["-y","mcp-remote@1.2.3","http://127.0.0.1:3001/mcp","--header","Authorization: Bearer abc","--foo"]}}}`, []string{"want --header Authorization:${AUTH_HEADER}", `mcp-remote option "--foo"`}},
		{"bridge env", "claude_desktop_http.json",
			`{"mcpServers":{"avinode":{"command":"npx","args":["-y","mcp-remote@1.2.3","http://127.0.0.1:3001/mcp","--header","Authorization:${AUTH_HEADER}","--transport","sse-only"],"env":{"AUTH_HEADER":"Bearer abc","X":"1"}}}}`, []string{"only http-only", "env X: mcp-remote needs only AUTH_HEADER", `want "Bearer <NAME_MCP_TOKEN>"`}},
		{"bridge without the env", "claude_desktop_http.json",
			`{"mcpServers":{"avinode":{"command":"npx","args":["-y","mcp-remote@1.2.3","http://127.0.0.1:3001/mcp","--header","Authorization:${AUTH_HEADER}"]}}}`, []string{"env does not set it"}},
		{"bridge token named for nobody", "claude_desktop_http.json",
			`{"mcpServers":{"avinode":{"command":"npx","args":["-y","mcp-remote@1.2.3","http://127.0.0.1:3001/mcp","--header","Authorization:${AUTH_HEADER}"],"env":{"AUTH_HEADER":"Bearer <TOKEN>"}}}}`, []string{"token TOKEN: name it AVINODE_MCP_TOKEN"}},

		{"a good Cursor HTTP entry", "cursor_http.json",
			`{"mcpServers":{"avinode":{"url":"http://127.0.0.1:3001/mcp","headers":{"Authorization":"Bearer ${env:FLIGHT_SEARCH_MCP_TOKEN}"}}}}`, nil},
		{"wrong port and path", "cursor_http.json",
			`{"mcpServers":{"avinode":{"url":"http://127.0.0.1:3009/mcp","headers":{"Authorization":"Bearer ${env:AVINODE_MCP_TOKEN}"}},"devtools":{"url":"https://example.com/sse","headers":{"Authorization":"Bearer ${env:DEVTOOLS_MCP_TOKEN}"}}}}`,
			[]string{"port 3009 is no server's default port", "want http://127.0.0.1:<port>/mcp"}},
		{"no port", "cursor_http.json",
			`{"mcpServers":{"avinode":{"url":"http://127.0.0.1/mcp","headers":{"Authorization":"Bearer ${env:AVINODE_MCP_TOKEN}"}}}}`, []string{"name the port"}},
		{"header problems", "cursor_http.json",
			`{"mcpServers":{"avinode":{"url":"http://127.0.0.1:3001/mcp","headers":{"Authorization":"Token abc"}},"devtools":{"url":"http://127.0.0.1:3005/mcp","headers":{"X-Token":"abc"}}}}`,
			[]string{`Authorization "Token abc"`, "want exactly Authorization"}},
		{"token from the home folder", "cursor_http.json",
			`{"mcpServers":{"avinode":{"url":"http://127.0.0.1:3001/mcp","headers":{"Authorization":"Bearer ${userHome}"}}}}`, []string{"not a variable or an input"}},
		{"VS Code inputs", "vscode_http.json",
			`{"servers":{"avinode":{"type":"http","url":"http://127.0.0.1:3001/mcp","headers":{"Authorization":"Bearer ${input:avinode-token}"}},"devtools":{"type":"http","url":"http://127.0.0.1:3005/mcp","headers":{"Authorization":"Bearer ${input:dev}"}}},"inputs":[{"id":"avinode-token","type":"promptString","description":"t"},{"id":"spare","type":"promptString","password":true}]}`,
			[]string{`input "avinode-token" should be`, "${input:dev} is not declared", `input "spare" is declared but no server uses it`, "token dev: name it devtools-token"}},
		{"a per-agent file", "flight_search.mcp.json",
			`{"mcpServers":{"avinode":{"type":"stdio","command":"` + bin + `avinode-mcp","args":["--acl","` + policy + `"],"env":{"MCP_AGENT":"developer"}}}}`, []string{`acts as agent "developer" in a file for agent "flight_search"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ClientForPath(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Decode(tt.file, c, []byte(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			_, problems := Analyze(f, facts)
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if len(tt.want) == 0 && len(got) > 0 {
				t.Fatalf("problems in a good configuration:\n%s", strings.Join(got, "\n"))
			}
			for _, w := range tt.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no problem mentions %q; got:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

func TestAnalyzeTargets(t *testing.T) {
	facts := testFacts(t)
	f, err := Decode("flight_search.mcp.json", ClaudeCode, []byte(`{"mcpServers":{
		"avinode":{"type":"stdio","command":"`+bin+`avinode-mcp","args":["--acl","`+policy+`"],"env":{"MCP_AGENT":"flight_search"}},
		"avinode-http":{"type":"http","url":"http://localhost:3001/mcp","headers":{"Authorization":"Bearer ${FLIGHT_SEARCH_MCP_TOKEN}"}},
		"avinode-key":{"type":"stdio","command":"`+bin+`avinode-mcp","args":["--agent","flight_search","--acl","`+policy+`","--mock-operators","/abs/path/to/key.json"],"env":{"AVINODE_API_TOKEN":"x"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	targets, problems := Analyze(f, facts)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if len(targets) != 3 {
		t.Fatalf("%d targets", len(targets))
	}
	stdio, http, key := targets[0], targets[1], targets[2]
	if stdio.Via != ViaBinary || stdio.Server != "avinode" || stdio.Agent != "flight_search" || stdio.Flags["acl"] != policy {
		t.Errorf("stdio target %+v", stdio)
	}
	if http.Via != ViaHTTP || http.Server != "avinode" || http.Agent != "flight_search" || http.TokenFor != TokenAgent || http.TokenName != "FLIGHT_SEARCH_MCP_TOKEN" {
		t.Errorf("http target %+v", http)
	}
	if want := []string{"/abs/path/to/key.json", "AVINODE_API_TOKEN"}; !reflect.DeepEqual(key.Credentials, want) {
		t.Errorf("credentials %v, want %v", key.Credentials, want)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, file, config, want string
	}{
		{"misspelt key", "claude_desktop.json", `{"mcpServers":{"a":{"command":"x","arg":["y"]}}}`, `unknown field "arg"`},
		{"url in Claude Desktop", "claude_desktop.json", `{"mcpServers":{"a":{"url":"http://x"}}}`, `unknown field "url"`},
		{"trailing data", "cursor.json", `{"mcpServers":{"a":{"command":"x"}}} {}`, "data after"},
		{"no servers", "vscode.json", `{"mcpServers":{"a":{"command":"x"}}}`, `unknown field "mcpServers"`},
		{"empty", "cursor.json", `{}`, `no servers (Cursor keeps them under "mcpServers")`},
		{"both", "cursor.json", `{"mcpServers":{"a":{"command":"x","url":"http://x"}}}`, "both command and url"},
		{"neither", "cursor.json", `{"mcpServers":{"a":{"args":["x"]}}}`, "neither command nor url"},
		{"args on a url", "cursor.json", `{"mcpServers":{"a":{"url":"http://x","args":["y"]}}}`, "args or env on a url entry"},
		{"headers on a command", "cursor.json", `{"mcpServers":{"a":{"command":"x","headers":{"a":"b"}}}}`, "headers on a command entry"},
		{"VS Code without type", "vscode.json", `{"servers":{"a":{"command":"x"}}}`, `type "", want "stdio" (VS Code requires it)`},
		{"VS Code envFile", "vscode.json", `{"servers":{"a":{"type":"stdio","command":"x","envFile":".env"}}}`, "envFile"},
		{"Claude Code http without type", "a.mcp.json", `{"mcpServers":{"a":{"url":"http://x"}}}`, `type "", want "http"`},
		{"Claude Code sse", "a.mcp.json", `{"mcpServers":{"a":{"type":"sse","url":"http://x"}}}`, `type "sse", want "http"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ClientForPath(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Decode(tt.file, c, []byte(tt.config))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	// Claude Code accepts a stdio entry without its type.
	if _, err := Decode("a.mcp.json", ClaudeCode, []byte(`{"mcpServers":{"a":{"command":"x"}}}`)); err != nil {
		t.Errorf("stdio without type: %v", err)
	}
	if _, err := Decode("a.json", Client("Zed"), []byte(`{}`)); err == nil {
		t.Error("an unknown client decoded")
	}
}

func TestClientForPath(t *testing.T) {
	for path, want := range map[string]Client{
		"configs/clients/claude_desktop_http.json": ClaudeDesktop,
		"agents/flight_search.mcp.json":            ClaudeCode,
		"cursor_docker.json":                       Cursor,
		"vscode.json":                              VSCode,
	} {
		if got, err := ClientForPath(path); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", path, got, err, want)
		}
	}
	for _, path := range []string{"agent_with_acl.json", "claude_desktop.yaml"} {
		if _, err := ClientForPath(path); err == nil {
			t.Errorf("%s: no error", path)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "cursor.json")); err == nil {
		t.Error("a missing file loaded")
	}
	if _, err := Load("README.md"); err == nil {
		t.Error("a non-JSON file loaded")
	}
}

func TestExpand(t *testing.T) {
	v := Vars{Root: "/r", Project: "/p", Home: "/h", Env: map[string]string{"T": "tok"},
		Inputs: map[string]string{"a-token": "in"}, Literal: map[string]string{"<T>": "lit"}}
	tests := []struct {
		c        Client
		in, want string
		err      string
	}{
		{ClaudeCode, "Bearer ${T}", "Bearer tok", ""},
		{ClaudeCode, "${MISSING:-dflt}/x", "dflt/x", ""},
		{ClaudeCode, "${MISSING}", "", "${MISSING} has no value"},
		{ClaudeCode, "${input:a-token}", "", "does not expand"},
		{Cursor, "${env:T} ${workspaceFolder} ${userHome}", "tok /p /h", ""},
		{Cursor, "${input:a-token}", "", "does not expand"},
		{VSCode, "${input:a-token}", "in", ""},
		{VSCode, "${input:other}", "", "has no value"},
		{ClaudeDesktop, RootPlaceholder + "/bin/x " + ProjectPlaceholder + " <T>", "/r/bin/x /p lit", ""},
		{ClaudeDesktop, "${T}", "", "does not expand"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.c, tt.in, v)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %q: err %v, want %q", tt.c, tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s %q = %q, %v; want %q", tt.c, tt.in, got, err, tt.want)
		}
	}
	if _, err := Expand(Cursor, "${workspaceFolder}", Vars{}); err == nil {
		t.Error("${workspaceFolder} without a project expanded")
	}
	if _, err := Expand(Cursor, "${userHome}", Vars{}); err == nil {
		t.Error("${userHome} without a home expanded")
	}
}

func TestResolve(t *testing.T) {
	facts := testFacts(t)
	f, err := Decode("cursor.json", Cursor, []byte(`{"mcpServers":{
		"devtools":{"command":"`+bin+`devtools-mcp","args":["--root","${workspaceFolder}"],"env":{"MCP_READ_ONLY":"true"}},
		"devtools-docker":{"command":"docker","args":["run","-i","--rm","mcp-fleet/devtools-mcp"]},
		"devtools-http":{"url":"http://127.0.0.1:3005/mcp","headers":{"Authorization":"Bearer ${env:DEVTOOLS_MCP_TOKEN}"}},
		"devtools-key":{"command":"`+bin+`devtools-mcp","args":["--root","/abs/path/to/other"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	targets, problems := Analyze(f, facts)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	v := Vars{Root: "/r", Project: "/p", Env: map[string]string{"DEVTOOLS_MCP_TOKEN": "tok"}}
	bins := map[string]string{"devtools": "/built/devtools-mcp"}
	l, err := Resolve(targets[0], v, bins)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Launch{Command: "/built/devtools-mcp", Args: []string{"--root", "/p"}, Env: []string{"MCP_READ_ONLY=true"}}); !reflect.DeepEqual(l, want) {
		t.Errorf("stdio launch %+v, want %+v", l, want)
	}
	if _, err := Resolve(targets[1], v, bins); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Errorf("container resolved: %v", err)
	}
	l, err = Resolve(targets[2], v, bins)
	if err != nil || l.URL != "http://127.0.0.1:3005/mcp" || l.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("http launch %+v %v", l, err)
	}
	if _, err := Resolve(targets[2], Vars{}, bins); err == nil {
		t.Error("a token without a value resolved")
	}
	if _, err := Resolve(targets[3], v, bins); err == nil || !strings.Contains(err.Error(), "placeholder path") {
		t.Errorf("an unreplaced placeholder resolved: %v", err)
	}
	if _, err := Resolve(targets[0], v, nil); err == nil {
		t.Error("resolved without a binary")
	}
}
