package kit_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

const demoPolicy = `
version: 1
agents:
  reader:
    tools: [peek]
  writer:
    tools: [peek, poke]
`

// demo is a small server binary for Main: three tools and one flag and one
// secret of its own. It records what Setup saw.
type demo struct {
	greeting string
	apiKey   string
	setupErr error

	mu       sync.Mutex
	env      *kit.Env
	dataDir  string
	cleaned  atomic.Bool
	pokes    atomic.Int32
	peekSeen chan struct{}
}

func (d *demo) spec() kit.Spec {
	return kit.Spec{
		Info:        kit.Info{Name: "demo", Version: "1.2.3", Commit: "abc123", Instructions: "Demo."},
		Summary:     "a demo server",
		DefaultPort: 8099,
		Flags: func(f *cli.Flags) {
			f.String(&d.greeting, "greeting", []string{"DEMO_GREETING"}, "hello", "what peek says")
			f.Secret(&d.apiKey, "DEMO_API_KEY", "upstream API key")
		},
		Setup: func(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.env = env
			if d.setupErr != nil {
				return nil, nil, d.setupErr
			}
			if env.Getenv("DEMO_DATA_DIR") != "" {
				dir, err := env.DataDir()
				if err != nil {
					return nil, nil, err
				}
				d.dataDir = dir
			}
			return d.tools(), func() { d.cleaned.Store(true) }, nil
		},
	}
}

func (d *demo) tools() []kit.Tool {
	return []kit.Tool{
		{
			Name: "peek", Description: "Say the greeting.", Effect: kit.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				var a struct {
					Text string `json:"text"`
				}
				if err := json.Unmarshal(c.Args, &a); err != nil {
					return nil, err
				}
				if d.peekSeen != nil {
					select {
					case d.peekSeen <- struct{}{}:
					default:
					}
				}
				return map[string]any{"text": a.Text, "greeting": d.greeting, "agent": c.Agent}, nil
			},
		},
		{
			Name: "poke", Description: "Change something.", Effect: kit.Destructive,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(ctx context.Context, c *kit.Call) (any, error) {
				d.pokes.Add(1)
				return "poked", nil
			},
		},
		{
			Name: "tally", Description: "Add one.", Effect: kit.Additive,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler:     func(ctx context.Context, c *kit.Call) (any, error) { return 1, nil },
		},
	}
}

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runMain runs Main on an empty stdin (a server that gets as far as serving
// stdio sees EOF and stops).
func runMain(t *testing.T, d *demo, args []string, env map[string]string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- kit.Main(d.spec(), args, envFrom(env), strings.NewReader(""), &stdout, &stderr) }()
	select {
	case code := <-done:
		return code, stdout.String(), stderr.String()
	case <-time.After(10 * time.Second):
		t.Fatal("Main did not return")
		return 0, "", ""
	}
}

func TestMainHelp(t *testing.T) {
	env := map[string]string{
		"MCP_AUTH_TOKEN":   "auth-secret-0123456789",
		"MCP_AGENT_TOKENS": "reader=agent-secret-0123456789",
		"DEMO_API_KEY":     "api-secret-0123456789",
		"MCP_TRANSPORT":    "http",
		"DEMO_GREETING":    "env-greeting",
	}
	for _, arg := range []string{"--help", "-h", "-help"} {
		code, out, errOut := runMain(t, &demo{}, []string{arg}, env)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, errOut)
		}
		if !strings.HasPrefix(out, "demo-mcp — a demo server") {
			t.Fatalf("%s: help starts %q", arg, strings.SplitN(out, "\n", 2)[0])
		}
		flags := map[string][]string{
			"transport":            {"MCP_TRANSPORT"},
			"host":                 {"MCP_HOST"},
			"port":                 {"MCP_PORT", "MCP_HTTP_PORT"},
			"acl":                  {"MCP_ACL_FILE"},
			"agent":                {"MCP_AGENT"},
			"read-only":            {"MCP_READ_ONLY"},
			"tools":                {"MCP_TOOLS"},
			"exclude-tools":        {"MCP_EXCLUDE_TOOLS"},
			"log-level":            {"MCP_LOG_LEVEL", "LOG_LEVEL"},
			"rate-limit":           {"MCP_RATE_LIMIT"},
			"tool-timeout":         {"MCP_TOOL_TIMEOUT"},
			"max-sessions":         {"MCP_MAX_SESSIONS"},
			"session-idle-timeout": {"MCP_SESSION_IDLE_TIMEOUT"},
			"allowed-origins":      {"MCP_ALLOWED_ORIGINS"},
			"allowed-hosts":        {"MCP_ALLOWED_HOSTS"},
			"insecure-no-auth":     {"MCP_INSECURE_NO_AUTH"},
			"sse":                  {"MCP_SSE"},
			"greeting":             {"DEMO_GREETING"},
		}
		lines := strings.Split(out, "\n")
		for name, envs := range flags {
			line := ""
			for _, l := range lines {
				if strings.HasPrefix(strings.TrimSpace(l), "--"+name+" ") {
					line = l
				}
			}
			if line == "" {
				t.Errorf("help lacks --%s:\n%s", name, out)
				continue
			}
			for _, e := range envs {
				if !strings.Contains(line, "$"+e) {
					t.Errorf("help line for --%s lacks $%s: %q", name, e, line)
				}
			}
		}
		for _, want := range []string{
			"(default stdio)", "(default 8099)", "(default hello)", "(default 1m0s)",
			"$MCP_AUTH_TOKEN", "$MCP_AGENT_TOKENS", "$DEMO_API_KEY", "environment only",
			"--version", "--help",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("help lacks %q", want)
			}
		}
		for _, secret := range []string{"auth-secret", "agent-secret", "api-secret", "env-greeting"} {
			if strings.Contains(out, secret) {
				t.Errorf("help shows the environment value %q", secret)
			}
		}
		// Secrets are listed after the flags, never as --flags.
		if strings.Contains(out, "--MCP_AUTH_TOKEN") || strings.Index(out, "$MCP_AUTH_TOKEN") < strings.Index(out, "--sse") {
			t.Errorf("secret listed as a flag or among flags:\n%s", out)
		}
	}
}

func TestMainVersion(t *testing.T) {
	code, out, errOut := runMain(t, &demo{}, []string{"--version"}, nil)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if out != "demo-mcp 1.2.3 (commit abc123)\n" {
		t.Fatalf("version output %q", out)
	}
	// A spec without a version has the binary's, from shared/buildinfo:
	// unlinked, as here, dev and unknown.
	spec := (&demo{}).spec()
	spec.Version, spec.Commit = "", ""
	var stdout bytes.Buffer
	if code := kit.Main(spec, []string{"--version"}, envFrom(nil), strings.NewReader(""), &stdout, io.Discard); code != 0 ||
		stdout.String() != "demo-mcp dev (commit unknown)\n" {
		t.Fatalf("unversioned spec: exit %d, version output %q", code, stdout.String())
	}
}

func TestMainRefusesBadConfiguration(t *testing.T) {
	aclFile := writeFile(t, "acl.yaml", demoPolicy)
	badACL := writeFile(t, "bad.yaml", "version: 1\nagents:\n  reader:\n    tols: [peek]\n")
	misspelt := writeFile(t, "misspelt.yaml", "version: 1\nagents:\n  reader:\n    tools: [peak, send_email]\n")
	badResource := writeFile(t, "resource.yaml", "version: 1\nagents:\n  reader:\n    tools: [peek]\n    resources: [trip, trip_qoutes]\n")
	badGrant := writeFile(t, "grant.yaml", "version: 1\nstep: test\ngrants:\n  reader: [seach_emails]\n")
	cases := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want []string
	}{
		{"unknown flag", []string{"--read-onyl"}, nil, 2, []string{"read-onyl"}},
		{"unknown command", []string{"serve"}, nil, 2, []string{`unknown command "serve"`, "commands: docs"}},
		{"stray argument after flags", []string{"--read-only", "extra"}, nil, 2, []string{`"extra"`}},
		{"secret as a flag", []string{"--MCP_AUTH_TOKEN=x"}, nil, 2, []string{"MCP_AUTH_TOKEN"}},
		{"bad bool env", nil, map[string]string{"MCP_READ_ONLY": "maybe"}, 2, []string{"MCP_READ_ONLY", `"maybe"`}},
		{"bad int env", nil, map[string]string{"MCP_PORT": "abc"}, 2, []string{"MCP_PORT", `"abc"`}},
		{"bad int alias env", nil, map[string]string{"MCP_HTTP_PORT": "abc"}, 2, []string{"MCP_HTTP_PORT"}},
		{"bad duration env", nil, map[string]string{"MCP_TOOL_TIMEOUT": "soon"}, 2, []string{"MCP_TOOL_TIMEOUT", `"soon"`}},
		{"bad flag value", []string{"--port", "abc"}, nil, 2, []string{"port"}},
		{"unknown transport", nil, map[string]string{"MCP_TRANSPORT": "carrier-pigeon"}, 2, []string{`"carrier-pigeon"`, "want one of stdio, http"}},
		{"agent without ACL", nil, map[string]string{"MCP_AGENT": "reader"}, 2, []string{"MCP_AGENT", "no ACL policy"}},
		{"agent flag without ACL", []string{"--agent", "reader"}, nil, 2, []string{"no ACL policy"}},
		{"agent tokens without ACL", nil, map[string]string{"MCP_AGENT_TOKENS": "reader=reader-token-0123456789"}, 2, []string{"MCP_AGENT_TOKENS", "no ACL policy"}},
		{"agent not in the policy", nil, map[string]string{"MCP_ACL_FILE": aclFile, "MCP_AGENT": "ghost"}, 2, []string{`"ghost"`, "known: reader, writer"}},
		{"ACL on stdio without an agent", nil, map[string]string{"MCP_ACL_FILE": aclFile}, 2, []string{"no agent", "MCP_AGENT", "reader, writer"}},
		{"malformed ACL", nil, map[string]string{"MCP_ACL_FILE": badACL, "MCP_AGENT": "reader"}, 2, []string{"tols"}},
		{"missing ACL", []string{"--acl", filepath.Join(t.TempDir(), "none.yaml"), "--agent", "reader"}, nil, 2, []string{"read ACL policy"}},
		{"malformed agent tokens", nil, map[string]string{"MCP_ACL_FILE": aclFile, "MCP_AGENT": "reader", "MCP_AGENT_TOKENS": "reader"}, 2, []string{"agent=token"}},
		{"token for an unknown agent", nil, map[string]string{"MCP_ACL_FILE": aclFile, "MCP_AGENT": "reader", "MCP_AGENT_TOKENS": "ghost=ghost-token-0123456789"}, 2, []string{`"ghost"`}},
		{"misspelt tool in the policy", nil, map[string]string{"MCP_ACL_FILE": misspelt, "MCP_AGENT": "reader"}, 2,
			[]string{misspelt, `agent "reader" is granted "peak"`, `did you mean "peek"?`}},
		{"misspelt resource in the policy", nil, map[string]string{"MCP_ACL_FILE": badResource, "MCP_AGENT": "reader"}, 2,
			[]string{badResource, `lists the resource "trip_qoutes"`, `did you mean "trip_quotes"?`}},
		{"misspelt tool in a grant file", nil, map[string]string{"MCP_ACL_FILE": aclFile + string(os.PathListSeparator) + badGrant, "MCP_AGENT": "reader"}, 2,
			[]string{badGrant, `"seach_emails"`, `did you mean "search_emails"?`}},
		{"a grant file given first", []string{"--acl", badGrant, "--agent", "reader"}, nil, 2, []string{"grant file", "after the policy"}},
		{"agent with the HTTP transport", nil, map[string]string{"MCP_TRANSPORT": "http", "MCP_PORT": "0", "MCP_ACL_FILE": aclFile,
			"MCP_AGENT": "reader", "MCP_AGENT_TOKENS": "reader=reader-token-0123456789"}, 2, []string{"MCP_AGENT", "stdio connection only", "bearer token"}},
		{"bad rate limit", nil, map[string]string{"MCP_RATE_LIMIT": "lots"}, 2, []string{`rate limit "lots"`}},
		{"unknown tool", nil, map[string]string{"MCP_TOOLS": "peek,nope"}, 2, []string{`"nope"`}},
		{"unknown excluded tool", []string{"--exclude-tools", "nope"}, nil, 2, []string{`"nope"`}},
		{"nothing left to serve", []string{"--read-only", "--tools", "poke"}, nil, 2, []string{"no tools left"}},
		{"http without a token", nil, map[string]string{"MCP_TRANSPORT": "http", "MCP_PORT": "0"}, 2, []string{"bearer token"}},
		{"http no-auth off loopback", []string{"--insecure-no-auth", "--host", "0.0.0.0"}, map[string]string{"MCP_TRANSPORT": "http", "MCP_PORT": "0"}, 2, []string{"loopback"}},
		{"http single token with ACL", nil, map[string]string{"MCP_TRANSPORT": "http", "MCP_PORT": "0", "MCP_ACL_FILE": aclFile, "MCP_AUTH_TOKEN": "single-token-0123456789"}, 2, []string{"MCP_AUTH_TOKEN"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runMain(t, &demo{}, tc.args, tc.env)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if out != "" {
				t.Fatalf("stdout must stay clean on errors, got %q", out)
			}
			if !strings.Contains(errOut, "demo-mcp: ") {
				t.Fatalf("stderr %q does not name the program", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
	t.Run("setup fails", func(t *testing.T) {
		d := &demo{setupErr: errors.New("backend unreachable")}
		code, _, errOut := runMain(t, d, nil, nil)
		if code != 1 || !strings.Contains(errOut, "backend unreachable") {
			t.Fatalf("exit %d stderr %q", code, errOut)
		}
	})
}

// stdioProc is Main serving stdio on pipes.
type stdioProc struct {
	t      *testing.T
	in     *io.PipeWriter
	outW   *io.PipeWriter
	lines  chan string
	seen   []string // every stdout line read so far
	stderr *mcptest.Buffer
	done   chan int
}

func startStdio(t *testing.T, spec kit.Spec, args []string, env map[string]string) *stdioProc {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioProc{t: t, in: inW, outW: outW, lines: make(chan string, 64), stderr: &mcptest.Buffer{}, done: make(chan int, 1)}
	go func() { p.done <- kit.Main(spec, args, envFrom(env), inR, outW, p.stderr) }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_ = outW.Close()
	})
	return p
}

func (p *stdioProc) send(line string) {
	p.t.Helper()
	errc := make(chan error, 1)
	go func() { _, err := io.WriteString(p.in, line+"\n"); errc <- err }()
	select {
	case err := <-errc:
		if err != nil {
			p.t.Fatalf("write stdin: %v", err)
		}
	case code := <-p.done:
		p.t.Fatalf("Main exited (%d) while the test was writing; stderr:\n%s", code, p.stderr.String())
	case <-time.After(10 * time.Second):
		p.t.Fatal("stdin write blocked")
	}
}

// recv reads stdout until the response with id arrives.
func (p *stdioProc) recv(id int) map[string]any {
	p.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout closed before response %d; stderr:\n%s", id, p.stderr.String())
			}
			p.seen = append(p.seen, line)
			m := mustJSONRPC(p.t, line)
			if got, ok := m["id"].(float64); ok && int(got) == id {
				return m
			}
		case <-deadline:
			p.t.Fatalf("no response %d; stderr:\n%s", id, p.stderr.String())
		}
	}
}

func (p *stdioProc) request(id int, method, params string) map[string]any {
	p.t.Helper()
	p.send(rpcCall(id, method, params))
	return p.recv(id)
}

// close ends stdin, waits for Main and returns its exit code; every stdout
// line must have been a JSON-RPC message.
func (p *stdioProc) close() int {
	p.t.Helper()
	_ = p.in.Close()
	var code int
	select {
	case code = <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Fatal("Main did not return after stdin closed")
	}
	_ = p.outW.Close()
	for line := range p.lines {
		p.seen = append(p.seen, line)
		mustJSONRPC(p.t, line)
	}
	return code
}

func mustJSONRPC(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("stdout line is not JSON: %q", line)
	}
	if m["jsonrpc"] != "2.0" {
		t.Fatalf("stdout line is not JSON-RPC 2.0: %q", line)
	}
	_, isResult := m["result"]
	_, isError := m["error"]
	_, isMethod := m["method"]
	if !isResult && !isError && !isMethod {
		t.Fatalf("stdout line is neither a response nor a request/notification: %q", line)
	}
	return m
}

func resultOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", m)
	}
	return r
}

func listedNames(t *testing.T, m map[string]any) string {
	t.Helper()
	var names []string
	for _, tl := range resultOf(t, m)["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

const stdioInit = `{"protocolVersion":"` + legacyVersion + `","capabilities":{},"clientInfo":{"name":"kit-test","version":"1"}}`

func handshake(p *stdioProc) {
	p.t.Helper()
	res := resultOf(p.t, p.request(1, "initialize", stdioInit))
	if info, _ := res["serverInfo"].(map[string]any); info["name"] != "demo" || info["version"] != "1.2.3" {
		p.t.Fatalf("serverInfo %v", res["serverInfo"])
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func TestMainStdioSession(t *testing.T) {
	d := &demo{}
	dataDir := filepath.Join(t.TempDir(), "state")
	p := startStdio(t, d.spec(), nil, map[string]string{
		"DEMO_GREETING": "hi there", "DEMO_DATA_DIR": dataDir, "MCP_LOG_LEVEL": "debug",
	})
	handshake(p)
	if got := listedNames(t, p.request(2, "tools/list", "")); got != "peek,poke,tally" {
		t.Fatalf("tools/list %q", got)
	}
	res := resultOf(t, p.request(3, "tools/call", `{"name":"peek","arguments":{"text":"x"}}`))
	sc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] == true || sc["text"] != "x" || sc["greeting"] != "hi there" || sc["agent"] != "" {
		t.Fatalf("peek result %v", res)
	}
	res = resultOf(t, p.request(4, "tools/call", `{"name":"peek","arguments":{}}`))
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "VALIDATION_ERROR") {
		t.Fatalf("invalid call result %v", res)
	}
	if e, _ := p.request(5, "no/such/method", "")["error"].(map[string]any); e["code"] != float64(-32601) {
		t.Fatalf("unknown method answered %v", e)
	}
	p.send("this is not json")
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d after stdin closed; stderr:\n%s", code, p.stderr.String())
	}
	if len(p.seen) < 5 {
		t.Fatalf("only %d stdout lines", len(p.seen))
	}
	// Logs went to stderr, as JSON.
	logs := p.stderr.String()
	if !strings.Contains(logs, "serving stdio") || !strings.Contains(logs, `"event":"tool_call"`) {
		t.Fatalf("stderr lacks the start and audit lines:\n%s", logs)
	}
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("stderr line is not JSON: %q", l)
		}
	}
	if !d.cleaned.Load() {
		t.Fatal("Setup's cleanup did not run")
	}
	if d.dataDir != dataDir {
		t.Fatalf("DataDir %q, want %q", d.dataDir, dataDir)
	}
	if fi, err := os.Stat(dataDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir: %v %v", fi, err)
	}
	if d.env == nil || d.env.Logger == nil || d.env.Metrics == nil || d.env.Redactor == nil || d.env.Info.Name != "demo" {
		t.Fatalf("Setup got an incomplete Env: %+v", d.env)
	}
}

// TestStdioRefusesBeforeInitialize runs in a fresh process: mcp-go's stdio
// session is a process-wide value that stays initialized once any stdio
// test of this package has completed a handshake.
func TestStdioRefusesBeforeInitialize(t *testing.T) {
	if os.Getenv("KIT_TEST_FRESH_STDIO") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStdioRefusesBeforeInitialize$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "KIT_TEST_FRESH_STDIO=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestStdioRefusesBeforeInitialize") {
			t.Fatalf("child test: %v\n%s", err, out)
		}
		return
	}
	d := &demo{}
	p := startStdio(t, d.spec(), nil, nil)
	for id, msg := range map[int]string{
		1: rpcCall(1, "tools/call", `{"name":"poke","arguments":{}}`),
		2: rpcCall(2, "tools/list", ""),
	} {
		p.send(msg)
		m := p.recv(id)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32600) || !strings.Contains(fmt.Sprint(e["message"]), "not initialized") {
			t.Fatalf("request %d before initialize answered %v", id, m)
		}
	}
	if d.pokes.Load() != 0 {
		t.Fatal("poke ran before initialize")
	}
	if _, ok := p.request(3, "ping", "")["result"]; !ok {
		t.Fatal("ping before initialize must be answered")
	}
	handshake(p)
	if res := resultOf(t, p.request(4, "tools/call", `{"name":"poke","arguments":{}}`)); res["isError"] == true {
		t.Fatalf("poke after initialize: %v", res)
	}
	if d.pokes.Load() != 1 {
		t.Fatalf("poke ran %d times, want 1", d.pokes.Load())
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestMainToolSelection(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"all", nil, nil, "peek,poke,tally"},
		{"read-only from env", nil, map[string]string{"MCP_READ_ONLY": "true"}, "peek"},
		{"read-only flag overrides env", []string{"--read-only=false"}, map[string]string{"MCP_READ_ONLY": "true"}, "peek,poke,tally"},
		{"tools from env", nil, map[string]string{"MCP_TOOLS": "peek, poke"}, "peek,poke"},
		{"tools flag replaces env", []string{"--tools", "tally"}, map[string]string{"MCP_TOOLS": "peek,poke"}, "tally"},
		{"tools flag repeated", []string{"--tools", "tally", "--tools=poke"}, map[string]string{"MCP_TOOLS": "peek"}, "poke,tally"},
		{"exclude from env", nil, map[string]string{"MCP_EXCLUDE_TOOLS": "poke"}, "peek,tally"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &demo{}
			p := startStdio(t, d.spec(), tc.args, tc.env)
			handshake(p)
			if got := listedNames(t, p.request(2, "tools/list", "")); got != tc.want {
				t.Fatalf("tools/list %q, want %q", got, tc.want)
			}
			if code := p.close(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if want := tc.want == "peek"; d.env.ReadOnly != want {
				t.Fatalf("Env.ReadOnly = %v, want %v", d.env.ReadOnly, want)
			}
		})
	}
}

// TestMainPolicyAcrossTheFleet: one policy covers every server, so a tool of
// another server of the fleet (send_email here) is no error; a grant file
// after the policy widens it; and the start-up line lists the agent's
// effective tools on this server, not every tool the server has.
func TestMainPolicyAcrossTheFleet(t *testing.T) {
	aclFile := writeFile(t, "fleet.yaml", "version: 1\nagents:\n  reader:\n    tools: [peek, send_email]\n  writer:\n    tools: [peek]\n")
	grant := writeFile(t, "grant.yaml", "version: 1\nstep: the writer's changes\ngrants:\n  writer: [poke]\n")
	for _, tc := range []struct {
		agent, acl, want string
	}{
		{"reader", aclFile, "peek"},
		{"writer", aclFile, "peek"},
		{"writer", aclFile + string(os.PathListSeparator) + grant, "peek,poke"},
	} {
		d := &demo{}
		p := startStdio(t, d.spec(), nil, map[string]string{"MCP_ACL_FILE": tc.acl, "MCP_AGENT": tc.agent})
		handshake(p)
		if got := listedNames(t, p.request(2, "tools/list", "")); got != tc.want {
			t.Fatalf("%s under %s sees %q, want %q", tc.agent, tc.acl, got, tc.want)
		}
		if code := p.close(); code != 0 {
			t.Fatalf("exit %d: %s", code, p.stderr.String())
		}
		var logged []string
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			if strings.Contains(line, `"serving stdio"`) {
				var m struct {
					Tools []string `json:"tools"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				logged = m.Tools
			}
		}
		if got := strings.Join(logged, ","); got != tc.want {
			t.Errorf("%s: the start-up line lists tools %q, want its effective tools %q", tc.agent, got, tc.want)
		}
		if strings.Contains(tc.acl, grant) && !strings.Contains(p.stderr.String(), "the writer's changes") {
			t.Errorf("the grant file's step is not logged:\n%s", p.stderr.String())
		}
	}
}

func TestMainStdioAgent(t *testing.T) {
	aclFile := writeFile(t, "acl.yaml", demoPolicy)
	d := &demo{}
	p := startStdio(t, d.spec(), []string{"--agent", "reader"}, map[string]string{"MCP_ACL_FILE": aclFile, "MCP_AGENT": "writer"})
	handshake(p)
	if got := listedNames(t, p.request(2, "tools/list", "")); got != "peek" {
		t.Fatalf("reader sees %q", got)
	}
	res := resultOf(t, p.request(3, "tools/call", `{"name":"poke","arguments":{}}`))
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "PERMISSION_DENIED") {
		t.Fatalf("poke as reader: %v", res)
	}
	res = resultOf(t, p.request(4, "tools/call", `{"name":"peek","arguments":{"text":"a"}}`))
	if sc, _ := res["structuredContent"].(map[string]any); sc["agent"] != "reader" {
		t.Fatalf("call ran as %v, want reader (flag over env)", sc["agent"])
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if d.pokes.Load() != 0 {
		t.Fatal("a denied call ran")
	}
}

// runHTTP starts the server in HTTP mode through RunArgs and returns its
// base URL (read from the start-up log line), a stop func returning run's
// error, and stderr.
func runHTTP(t *testing.T, d *demo, args []string, env map[string]string) (string, func() error, *mcptest.Buffer) {
	t.Helper()
	stderr := &mcptest.Buffer{}
	var stdout bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- kit.RunArgs(ctx, d.spec(), args, envFrom(env), strings.NewReader(""), &stdout, stderr) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-errc:
			if stdout.Len() != 0 {
				t.Errorf("http mode wrote to stdout: %q", stdout.String())
			}
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return after cancel")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range strings.Split(stderr.String(), "\n") {
			var m struct {
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Addr != "" {
				return "http://" + m.Addr, stop, stderr
			}
		}
		select {
		case err := <-errc:
			t.Fatalf("run returned early: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no listen address logged:\n%s", stderr.String())
	return "", nil, nil
}

func TestMainHTTPKeepsSecretsOutOfLogs(t *testing.T) {
	const token = "s3cret-bearer-token-value"
	d := &demo{}
	base, stop, stderr := runHTTP(t, d, nil, map[string]string{
		"MCP_TRANSPORT": "http", "MCP_PORT": "0", "MCP_AUTH_TOKEN": token, "MCP_LOG_LEVEL": "debug",
		"DEMO_API_KEY": "unused-api-key-0123456789",
	})
	if r := post(t, base, "", "", legacyInit); r.Status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", r.Status)
	}
	sid := initSession(t, base, token)
	// The token also travels as an argument: the audit log must mask it.
	r := post(t, base, token, sid, rpcCall(2, "tools/call", `{"name":"peek","arguments":{"text":"`+token+`"}}`))
	if r.Status != http.StatusOK {
		t.Fatalf("tools/call: %d %s", r.Status, r.Body)
	}
	if d.apiKey != "unused-api-key-0123456789" {
		t.Fatalf("secret flag from env: %q", d.apiKey)
	}
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"event":"tool_call"`) || !strings.Contains(logs, logging.Mask) {
		t.Fatalf("expected a redacted audit line:\n%s", logs)
	}
	if strings.Contains(logs, token) {
		t.Fatalf("the bearer token reached stderr:\n%s", logs)
	}
	if !d.cleaned.Load() {
		t.Fatal("cleanup did not run after the HTTP server stopped")
	}
}

func TestMainHTTPAgentTokens(t *testing.T) {
	const readerTok, writerTok = "reader-secret-token-0123", "writer-secret-token-0123"
	aclFile := writeFile(t, "acl.yaml", demoPolicy)
	d := &demo{}
	base, stop, stderr := runHTTP(t, d, []string{"--port", "0"}, map[string]string{
		"MCP_TRANSPORT": "http", "MCP_PORT": "1", "MCP_ACL_FILE": aclFile,
		"MCP_AGENT_TOKENS": "reader=" + readerTok + ",writer=" + writerTok,
	})
	c := dial(t, base, readerTok, true)
	if got := strings.Join(clientToolNames(t, c), ","); got != "peek" {
		t.Fatalf("reader sees %q", got)
	}
	res := clientCall(t, c, "peek", map[string]any{"text": writerTok})
	if res.IsError {
		t.Fatalf("peek: %v", res.Content)
	}
	w := dial(t, base, writerTok, false)
	if got := strings.Join(clientToolNames(t, w), ","); got != "peek,poke" {
		t.Fatalf("writer sees %q", got)
	}
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	logs := stderr.String()
	if strings.Contains(logs, readerTok) || strings.Contains(logs, writerTok) {
		t.Fatalf("an agent token reached stderr:\n%s", logs)
	}
	if !strings.Contains(logs, logging.Mask) {
		t.Fatalf("the token in the arguments was not masked:\n%s", logs)
	}
}

func TestRunArgsFlagErrors(t *testing.T) {
	err := kit.RunArgs(context.Background(), (&demo{}).spec(), []string{"--version"}, envFrom(nil), nil, io.Discard, io.Discard)
	if !errors.Is(err, cli.ErrVersion) {
		t.Fatalf("err %v, want cli.ErrVersion", err)
	}
}

// TestOneShapeForBadValues: every bad flag or value exits 2 and names the
// flag (or variable), the value, what is wanted, and a suggestion where one
// is obvious — with no internal prefixes.
func TestOneShapeForBadValues(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--transport", "websocket"}, nil, []string{"--transport", `"websocket"`, "want one of stdio, http"}},
		{[]string{"--log-level", "verbose"}, nil, []string{"--log-level", `"verbose"`, "debug, info, warn, error"}},
		{[]string{"--log-level", "infoo"}, nil, []string{`did you mean "info"`}},
		{[]string{"--tool-timeout", "5"}, nil, []string{"--tool-timeout", `"5"`, "did you mean 5s?"}},
		{nil, map[string]string{"MCP_TOOL_TIMEOUT": "5"}, []string{"MCP_TOOL_TIMEOUT", "did you mean 5s?"}},
		{[]string{"-frobnicate"}, nil, []string{"unknown flag --frobnicate", "see --help"}},
		{[]string{"--read-onyl"}, nil, []string{`did you mean "read-only"`}},
		{[]string{"--tools", "peak"}, nil, []string{`"peak" is not a tool of demo`, `"peek"`}},
		{[]string{"--port", "70000"}, nil, []string{"--port", "0–65535"}},
		{nil, map[string]string{"MCP_AUTH_TOKEN": "abc", "MCP_TRANSPORT": "http"}, []string{"MCP_AUTH_TOKEN is 3 characters", "at least 16"}},
		// A data directory that cannot be created is the operator's to fix.
		{nil, map[string]string{"DEMO_DATA_DIR": "/proc/no-such-dir/demo"}, []string{"/proc/no-such-dir", "a path setting is wrong"}},
	}
	for _, c := range cases {
		code, out, errOut := runMain(t, &demo{}, c.args, c.env)
		if code != 2 || out != "" {
			t.Errorf("%v %v: exit %d, stdout %q", c.args, c.env, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v %v: stderr %q lacks %q", c.args, c.env, errOut, w)
			}
		}
		for _, bad := range []string{"kit:", "flag provided", "parse error", "invalid value"} {
			if strings.Contains(errOut, bad) {
				t.Errorf("%v: internal wording %q in %q", c.args, bad, errOut)
			}
		}
	}
}

// TestTerminalGetsAGuide: on a terminal, stdio mode says on stderr how to
// connect a client; stdout stays protocol-only.
func TestTerminalGetsAGuide(t *testing.T) {
	var stdout, stderr mcptest.Buffer
	code := kit.MainIO((&demo{}).spec(), nil, kit.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" }, StdinIsTerminal: true})
	if code != 0 || stdout.String() != "" || !strings.Contains(stderr.String(), "waiting for an MCP client") ||
		!strings.Contains(stderr.String(), "inspector") {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
}
