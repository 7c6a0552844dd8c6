package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

const pkg = "github.com/mcp-fleet/mcp-fleet/servers/devtools/cmd/devtools-mcp"

var allTools = []string{"database_query", "database_schema", "database_tables", "file_delete", "file_info", "file_list", "file_read",
	"file_search", "file_write", "shell_execute", "system_health", "system_info", "web_fetch", "web_request"}

func binary(t *testing.T) string {
	t.Helper()
	return mcptest.Build(t, pkg)
}

// tempRoot is a fresh directory (symlinks resolved, as the server reports
// roots) holding hello.txt.
func tempRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// jsonLines decodes every non-empty line of s as a JSON object.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("stderr line is not JSON: %q", line)
			continue
		}
		out = append(out, m)
	}
	return out
}

func TestStdioEndToEnd(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	root := tempRoot(t)
	outside := filepath.Join(filepath.Dir(root), "outside-"+filepath.Base(root))
	c := mcptest.StartStdio(t, bin, []string{"DEVTOOLS_ROOTS=" + root})

	if c.Init.ServerInfo.Name != "devtools" || !strings.Contains(c.Init.Instructions, "system_info") {
		t.Errorf("initialize: server %q instructions %q", c.Init.ServerInfo.Name, c.Init.Instructions)
	}
	if got := sorted(c.ToolNames()); !slices.Equal(got, allTools) {
		t.Errorf("tools = %q, want %q", got, allTools)
	}

	var read struct{ Content, Path, Root string }
	mcptest.OK(t, c.Call("file_read", map[string]any{"path": "hello.txt"}), &read)
	if read.Content != "hello\nworld\n" || read.Path != "hello.txt" || read.Root != root {
		t.Errorf("file_read = %+v", read)
	}

	var wrote struct {
		Written int
		File    struct{ Path string }
	}
	mcptest.OK(t, c.Call("file_write", map[string]any{"path": "out/new.txt", "content": "written over stdio"}), &wrote)
	if b, err := os.ReadFile(filepath.Join(root, "out", "new.txt")); err != nil || string(b) != "written over stdio" {
		t.Errorf("on disk: %q, %v", b, err)
	}
	if wrote.Written != 18 || wrote.File.Path != "out/new.txt" {
		t.Errorf("file_write = %+v", wrote)
	}

	b := mcptest.FailCode(t, c.Call("file_write", map[string]any{"path": "../" + filepath.Base(outside), "content": "x"}), mcperr.PermissionDeny)
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the escape created %s: %v", outside, err)
	}
	if strings.Contains(b.Message, outside) {
		t.Errorf("message names the outside path: %s", b.Message)
	}

	var info struct{ Roots []string }
	mcptest.OK(t, c.Call("system_info", nil), &info)
	if !slices.Equal(info.Roots, []string{root}) {
		t.Errorf("roots = %q, want [%q]", info.Roots, root)
	}

	// stderr: JSON log lines only, among them the start-up line and an audit
	// line per call.
	auditOf := func(tool, outcome string) map[string]any {
		for _, l := range jsonLines(t, c.Stderr()) {
			if l["event"] == "tool_call" && l["tool"] == tool && l["outcome"] == outcome {
				return l
			}
		}
		return nil
	}
	// Audit lines are written after the answers, so not necessarily in the
	// calls' order.
	mcptest.WaitFor(t, "the audit lines on stderr", func() bool {
		return auditOf("system_info", "ok") != nil && auditOf("file_write", "ok") != nil && auditOf("file_write", "error") != nil
	})
	w := auditOf("file_write", "ok")
	if w == nil {
		t.Fatalf("no audit line for file_write in stderr:\n%s", c.Stderr())
	}
	if args, _ := w["args"].(map[string]any); args["path"] != "out/new.txt" || w["service"] != "devtools" || w["correlation_id"] == "" || w["level"] != "info" {
		t.Errorf("audit line %v", w)
	}
	denied := auditOf("file_write", "error")
	if denied == nil || denied["error_code"] != "PERMISSION_DENIED" || denied["level"] != "warn" {
		t.Errorf("audit line of the refused write: %v", denied)
	}
	started := false
	for _, l := range jsonLines(t, c.Stderr()) {
		if l["message"] == "serving stdio" {
			started = true
		}
	}
	if !started {
		t.Errorf("no start-up line in stderr:\n%s", c.Stderr())
	}
}

// baseEnv is a minimal environment: nothing from the test's own, so no
// DEVTOOLS_* or MCP_* variable of the developer's shell leaks in.
func baseEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
}

const (
	initializeMsg  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	initializedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// checkRPC asserts line is a JSON-RPC 2.0 response to id.
func checkRPC(t *testing.T, line []byte, id float64) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("stdout line is not JSON: %q", line)
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if m["jsonrpc"] != "2.0" || m["id"] != id || hasResult == hasError {
		t.Fatalf("stdout line is not a JSON-RPC 2.0 response to id %v: %s", id, line)
	}
	return m
}

// TestStdoutIsProtocolOnly drives the binary by hand: every line on stdout
// must be a JSON-RPC 2.0 message, since a stdio client reads nothing else;
// logs go to stderr.
func TestStdoutIsProtocolOnly(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	p := startRaw(t, root, []string{"DEVTOOLS_ROOTS=" + root, "MCP_LOG_LEVEL=debug"})
	p.send(t, initializeMsg)
	initRes := checkRPC(t, p.next(t), 1)
	if r, _ := initRes["result"].(map[string]any); r["protocolVersion"] == nil {
		t.Errorf("initialize result %v", initRes)
	}
	p.send(t, initializedMsg)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	list := checkRPC(t, p.next(t), 2)
	tl, _ := list["result"].(map[string]any)["tools"].([]any)
	if len(tl) != len(allTools) {
		t.Errorf("tools/list gave %d tools", len(tl))
	}
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"hello.txt"}}}`)
	checkRPC(t, p.next(t), 3)
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"/etc/passwd"}}}`)
	denied := checkRPC(t, p.next(t), 4)
	if r, _ := denied["result"].(map[string]any); r["isError"] != true {
		t.Errorf("reading /etc/passwd: %v", denied)
	}
	rest, code := p.finish(t)
	for _, l := range rest {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("stray stdout line: %q", l)
		}
	}
	if code != 0 {
		t.Errorf("exit code %d after stdin closed; stderr:\n%s", code, p.stderr.String())
	}
	logs := jsonLines(t, p.stderr.String())
	if len(logs) < 3 {
		t.Errorf("expected start-up and audit lines on stderr, got:\n%s", p.stderr.String())
	}
}

// TestRootDefaultsToWorkingDirectory: without --root or DEVTOOLS_ROOTS the
// working directory is the root.
func TestRootDefaultsToWorkingDirectory(t *testing.T) {
	t.Parallel()
	root := tempRoot(t)
	p := startRaw(t, root, nil)
	p.send(t, initializeMsg)
	checkRPC(t, p.next(t), 1)
	p.send(t, initializedMsg)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"system_info","arguments":{}}}`)
	res, _ := checkRPC(t, p.next(t), 2)["result"].(map[string]any)
	var info struct{ Roots []string }
	if sc, _ := json.Marshal(res["structuredContent"]); json.Unmarshal(sc, &info) != nil || !slices.Equal(info.Roots, []string{root}) {
		t.Errorf("roots = %q, want [%q] (result %v)", info.Roots, root, res)
	}
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"hello.txt"}}}`)
	res, _ = checkRPC(t, p.next(t), 3)["result"].(map[string]any)
	if res["isError"] == true {
		t.Errorf("file_read relative to the working directory: %v", res)
	}
	if _, code := p.finish(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// run executes the binary to completion with empty stdin.
func run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return mcptest.Run(t, binary(t), append(baseEnv(t), env...), args...)
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []mcptest.CLICase{
		{Name: "--help", Args: []string{"--help"}, Stdout: []string{"devtools-mcp", "--root", "DEVTOOLS_ROOTS", "--read-only", "MCP_ACL_FILE"}},
		{Name: "-h", Args: []string{"-h"}, Stdout: []string{"DEVTOOLS_ROOTS"}},
		{Name: "--version", Args: []string{"--version"}, Stdout: []string{"devtools-mcp "}},
		{Name: "MCP_AGENT not in the ACL", Env: []string{"MCP_ACL_FILE=" + mcptest.RepoFile(t, "configs", "acl.yaml"), "MCP_AGENT=nosuch"}, Code: 2,
			Stderr: []string{`"nosuch"`, "developer"}, QuietStdout: true},
		{Name: "MCP_AGENT without an ACL", Env: []string{"MCP_AGENT=developer"}, Code: 2, Stderr: []string{"MCP_AGENT", "ACL"}, QuietStdout: true},
		{Name: "ACL without an agent", Env: []string{"MCP_ACL_FILE=" + mcptest.RepoFile(t, "configs", "acl.yaml")}, Code: 2, Stderr: []string{"MCP_AGENT"}, QuietStdout: true},
		{Name: "missing root directory in the env", Env: []string{"DEVTOOLS_ROOTS=" + missing}, Code: 2,
			Stderr: []string{"devtools-mcp:", "cannot open root directory", missing}, QuietStdout: true},
		{Name: "missing root directory among others", Env: []string{"DEVTOOLS_ROOTS=" + t.TempDir() + string(os.PathListSeparator) + missing}, Code: 2,
			Stderr: []string{"cannot open root directory", missing}, QuietStdout: true},
		{Name: "missing root directory as a flag", Args: []string{"--root", missing}, Code: 2, Stderr: []string{missing}, QuietStdout: true},
		{Name: "a root that is a file", Args: []string{"--root", file}, Code: 2, Stderr: []string{file}, QuietStdout: true},
		{Name: "malformed DATABASE_URL", Env: []string{"DATABASE_URL=postgres://u:s3cret-pw@host:notaport/db"}, Code: 2,
			Stderr: []string{"DATABASE_URL is neither"}, QuietStdout: true},
		{Name: "bad web CIDR", Env: []string{"DEVTOOLS_WEB_ALLOW_CIDRS=notacidr"}, Code: 2, Stderr: []string{"DEVTOOLS_WEB_ALLOW_CIDRS", "notacidr"}, QuietStdout: true},
		{Name: "unknown flag", Args: []string{"--rooot", "/tmp"}, Code: 2, Stderr: []string{"rooot"}, QuietStdout: true},
		{Name: "stray argument", Args: []string{"/tmp"}, Code: 2, Stderr: []string{`"/tmp"`}, QuietStdout: true},
		{Name: "no watches allowed", Args: []string{"--watch-max-files", "0"}, Code: 2, Stderr: []string{"--watch-max-files", "positive"}, QuietStdout: true},
		{Name: "watch cap from the env", Env: []string{"DEVTOOLS_WATCH_MAX_FILES=-3"}, Code: 2, Stderr: []string{"DEVTOOLS_WATCH_MAX_FILES", "-3"}, QuietStdout: true},
		{Name: "empty stdin is a clean exit", Env: []string{"DEVTOOLS_ROOTS=" + t.TempDir()}, QuietStdout: true},
	}
	for i := range cases {
		cases[i].Env = append(baseEnv(t), cases[i].Env...)
	}
	mcptest.CheckCLI(t, binary(t), []string{"s3cret-pw"}, cases)
}

func TestVersionLine(t *testing.T) {
	t.Parallel()
	stdout, _, code := run(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "devtools-mcp dev (commit unknown)") {
		t.Errorf("--version: code %d output %q", code, stdout)
	}
}

func TestACL(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	root := tempRoot(t)
	acl := mcptest.RepoFile(t, "configs", "acl.yaml")
	t.Run("developer gets the devtools tools", func(t *testing.T) {
		t.Parallel()
		c := mcptest.StartStdio(t, bin, []string{"DEVTOOLS_ROOTS=" + root, "MCP_ACL_FILE=" + acl, "MCP_AGENT=developer"})
		if got := sorted(c.ToolNames()); !slices.Equal(got, allTools) {
			t.Errorf("tools = %q, want %q", got, allTools)
		}
		var read struct{ Content string }
		mcptest.OK(t, c.Call("file_read", map[string]any{"path": "hello.txt"}), &read)
		if read.Content != "hello\nworld\n" {
			t.Errorf("content %q", read.Content)
		}
	})
	t.Run("orchestrator gets none", func(t *testing.T) {
		t.Parallel()
		c := mcptest.StartStdio(t, bin, []string{"DEVTOOLS_ROOTS=" + root, "MCP_ACL_FILE=" + acl, "MCP_AGENT=orchestrator"})
		if got := c.ToolNames(); len(got) != 0 {
			t.Errorf("tools = %q, want none", got)
		}
		for _, tool := range []string{"file_read", "system_info", "file_delete"} {
			b := mcptest.FailCode(t, c.Call(tool, map[string]any{"path": "hello.txt"}), mcperr.PermissionDeny)
			if !strings.Contains(b.Message, "orchestrator") {
				t.Errorf("%s: message %q should name the agent", tool, b.Message)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "hello.txt")); err != nil {
			t.Errorf("a denied file_delete removed the file: %v", err)
		}
	})
	t.Run("--acl and --agent flags", func(t *testing.T) {
		t.Parallel()
		c := mcptest.StartStdio(t, bin, []string{"DEVTOOLS_ROOTS=" + root}, "--acl", acl, "--agent", "orchestrator")
		if got := c.ToolNames(); len(got) != 0 {
			t.Errorf("tools = %q, want none", got)
		}
	})
}

func TestReadOnlyAndToolSelection(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	root := tempRoot(t)
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"--read-only", nil, []string{"--read-only"}, []string{"database_query", "database_schema", "database_tables", "file_info", "file_list", "file_read", "file_search", "system_health", "system_info", "web_fetch"}},
		{"MCP_READ_ONLY", []string{"MCP_READ_ONLY=true"}, nil, []string{"database_query", "database_schema", "database_tables", "file_info", "file_list", "file_read", "file_search", "system_health", "system_info", "web_fetch"}},
		// "--tools a,b" is not split on the command line (a kit bug, reported); use the repeated form.
		{"--tools repeated", nil, []string{"--tools", "file_read", "--tools", "system_info"}, []string{"file_read", "system_info"}},
		{"MCP_TOOLS list", []string{"MCP_TOOLS=file_read,system_info"}, nil, []string{"file_read", "system_info"}},
		{"--exclude-tools", nil, []string{"--exclude-tools", "file_delete"}, []string{"database_query", "database_schema", "database_tables", "file_info", "file_list", "file_read", "file_search", "file_write", "shell_execute", "system_health", "system_info", "web_fetch", "web_request"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mcptest.StartStdio(t, bin, append([]string{"DEVTOOLS_ROOTS=" + root}, tc.env...), tc.args...)
			if got := sorted(c.ToolNames()); !slices.Equal(got, tc.want) {
				t.Errorf("tools = %q, want %q", got, tc.want)
			}
			if !slices.Contains(tc.want, "file_write") {
				res, err := c.CallErr(context.Background(), "file_write", map[string]any{"path": "x", "content": "x"})
				if err == nil && !res.IsError {
					t.Errorf("file_write succeeded although it is not served")
				}
				if _, serr := os.Stat(filepath.Join(root, "x")); serr == nil {
					t.Errorf("file_write wrote although it is not served")
				}
			}
		})
	}
}

// TestRootFlags: --root replaces DEVTOOLS_ROOTS, may repeat, and the first
// root is the one relative paths use.
func TestRootFlags(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	a, b := tempRoot(t), tempRoot(t)
	missing := filepath.Join(t.TempDir(), "nope")
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"flag wins over the env", []string{"DEVTOOLS_ROOTS=" + missing}, []string{"--root", b}, []string{b}},
		{"repeated flag", nil, []string{"--root", b, "--root", a}, []string{b, a}},
		{"env list", []string{"DEVTOOLS_ROOTS=" + a + string(os.PathListSeparator) + b}, nil, []string{a, b}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mcptest.StartStdio(t, bin, tc.env, tc.args...)
			var info struct{ Roots []string }
			mcptest.OK(t, c.Call("system_info", nil), &info)
			if !slices.Equal(info.Roots, tc.want) {
				t.Errorf("roots = %q, want %q", info.Roots, tc.want)
			}
			var read struct{ Root string }
			mcptest.OK(t, c.Call("file_read", map[string]any{"path": "hello.txt"}), &read)
			if read.Root != tc.want[0] {
				t.Errorf("relative path resolved in %q, want the first root %q", read.Root, tc.want[0])
			}
		})
	}
}

// The tests below call spec() in process.

func TestSpec(t *testing.T) {
	s := spec()
	// Version and commit are left to the kit: the binary's build info.
	if s.Name != "devtools" || s.Version != "" || s.Commit != "" || s.DefaultPort != 3005 || s.Summary == "" ||
		!strings.Contains(s.Instructions, "system_info") || s.Flags == nil || s.Setup == nil {
		t.Errorf("spec() = %+v", s)
	}
}

// setup parses args/env the way Main does and runs Setup.
func setup(t *testing.T, args []string, env map[string]string) ([]kit.Tool, error) {
	t.Helper()
	s := spec()
	f := cli.NewFlags("devtools-mcp")
	s.Flags(f)
	if err := f.Parse(args, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	getenv := func(k string) string {
		if k == "MCP_DATA_DIR" {
			return dataDir
		}
		return env[k]
	}
	tools, cleanup, err := s.Setup(context.Background(), kit.NewEnv(s, getenv, io.Discard, "error", nil))
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
	return tools, err
}

func inProcess(t *testing.T, tools []kit.Tool) *mcptest.Client {
	t.Helper()
	s, err := kit.New(spec().Info, tools, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.NewInProcess(t, s, "")
}

func TestSpecSetup(t *testing.T) {
	a, b := tempRoot(t), tempRoot(t)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"--root", []string{"--root", a}, nil, []string{a}},
		{"DEVTOOLS_ROOTS", nil, map[string]string{"DEVTOOLS_ROOTS": b + string(os.PathListSeparator) + a}, []string{b, a}},
		{"blank items in DEVTOOLS_ROOTS are ignored", nil, map[string]string{"DEVTOOLS_ROOTS": " " + a + string(os.PathListSeparator) + string(os.PathListSeparator)}, []string{a}},
		{"--root over DEVTOOLS_ROOTS", []string{"--root", a}, map[string]string{"DEVTOOLS_ROOTS": b}, []string{a}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tools, err := setup(t, tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(sorted(names), allTools) {
				t.Errorf("tools = %q", names)
			}
			c := inProcess(t, tools)
			var info struct{ Roots []string }
			mcptest.OK(t, c.Call("system_info", nil), &info)
			if !slices.Equal(info.Roots, tc.want) {
				t.Errorf("roots = %q, want %q", info.Roots, tc.want)
			}
		})
	}
}

func TestSpecSetupWorkingDirectory(t *testing.T) {
	root := tempRoot(t)
	t.Chdir(root)
	tools, err := setup(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Roots []string }
	mcptest.OK(t, inProcess(t, tools).Call("system_info", nil), &info)
	if !slices.Equal(info.Roots, []string{root}) {
		t.Errorf("roots = %q, want [%q]", info.Roots, root)
	}
}

func TestSpecSetupMissingRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	_, err := setup(t, []string{"--root", missing}, nil)
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "devtools roots") {
		t.Errorf("Setup with a missing root: %v", err)
	}
}

// TestMainInProcess runs kit.Main on spec() for the paths that end before
// serving.
func TestMainInProcess(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stdout string
		stderr string
	}{
		{"help", []string{"--help"}, nil, 0, "DEVTOOLS_ROOTS", ""},
		{"version", []string{"--version"}, nil, 0, "devtools-mcp dev", ""},
		{"missing root", nil, map[string]string{"DEVTOOLS_ROOTS": missing}, 2, "", missing},
		{"bad flag", []string{"--nope"}, nil, 2, "", "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := kit.Main(spec(), tc.args, func(k string) string { return tc.env[k] }, strings.NewReader(""), &out, &errb)
			mcptest.Exit{Code: tc.code, Stdout: []string{tc.stdout}, Stderr: []string{tc.stderr}, QuietStdout: tc.code != 0}.Check(t, out.String(), errb.String(), code)
		})
	}
}
