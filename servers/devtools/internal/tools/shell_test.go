package tools_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

type shellOut struct {
	Command     []string `json:"command"`
	Stdout      string   `json:"stdout"`
	Stderr      string   `json:"stderr"`
	Encoding    string   `json:"encoding"`
	ExitCode    int      `json:"exit_code"`
	Signal      string   `json:"signal"`
	DurationMS  *int64   `json:"duration_ms"`
	TimeoutMS   int64    `json:"timeout_ms"`
	Truncated   bool     `json:"truncated"`
	TimedOut    bool     `json:"timed_out"`
	InvalidUTF8 bool     `json:"invalid_utf8"`

	StdoutTail    string `json:"stdout_tail"`
	StdoutOmitted int64  `json:"stdout_omitted"`
	StdoutBytes   int64  `json:"stdout_bytes"`
	StderrTail    string `json:"stderr_tail"`
	StderrOmitted int64  `json:"stderr_omitted"`
	StderrBytes   int64  `json:"stderr_bytes"`
	OutputCapped  bool   `json:"output_capped"`
	Rest          string `json:"rest"`
}

// newShellClient serves shell_execute on a fresh root holding a.txt,
// bin.dat (not UTF-8) and a link leading out of the root.
func newShellClient(t *testing.T, mutate func(*shell.Config), opts kit.Options) (*mcptest.Client, string) {
	t.Helper()
	base := writeTree(t, map[string]string{"proj/a.txt": "alpha\nbeta\n", "proj/bin.dat": "ok\xff\xfe\n", "outside/secret.txt": "s\n"})
	root := filepath.Join(base, "proj")
	if err := os.Symlink("../outside/secret.txt", filepath.Join(root, "out-file")); err != nil {
		t.Fatal(err)
	}
	cfg := shell.Config{Roots: []string{root}}
	if mutate != nil {
		mutate(&cfg)
	}
	sh, err := shell.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := kit.New(kit.Info{Name: "devtools"}, tools.ShellTools(sh, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.NewInProcess(t, s, ""), root
}

func TestShellExecuteTool(t *testing.T) {
	c, root := newShellClient(t, nil, kit.Options{})

	var out shellOut
	mcptest.OK(t, c.Call("shell_execute", map[string]any{"command": "grep -n beta a.txt"}), &out)
	if out.Stdout != "2:beta\n" || out.ExitCode != 0 || out.Encoding != "utf-8" || out.DurationMS == nil ||
		out.TimeoutMS != 30000 || !slices.Equal(out.Command, []string{"grep", "-n", "beta", "a.txt"}) {
		t.Fatalf("grep: %+v", out)
	}

	// argv, cwd, a non-zero exit as a result with stderr.
	out = shellOut{}
	mcptest.OK(t, c.Call("shell_execute", map[string]any{"argv": []string{"cat", "missing file"}, "cwd": root}), &out)
	if out.ExitCode != 1 || !strings.Contains(out.Stderr, "No such file") {
		t.Fatalf("non-zero exit: %+v", out)
	}

	// Invalid UTF-8 is replaced and flagged, or returned exactly as base64.
	out = shellOut{}
	mcptest.OK(t, c.Call("shell_execute", map[string]any{"command": "cat bin.dat"}), &out)
	if out.Stdout != "ok\uFFFD\n" || !out.InvalidUTF8 {
		t.Fatalf("utf-8: %+v", out)
	}
	out = shellOut{}
	mcptest.OK(t, c.Call("shell_execute", map[string]any{"command": "cat bin.dat", "encoding": "base64"}), &out)
	if raw, _ := base64.StdEncoding.DecodeString(out.Stdout); string(raw) != "ok\xff\xfe\n" || out.Encoding != "base64" || out.InvalidUTF8 {
		t.Fatalf("base64: %+v", out)
	}

	// The timeout is capped at the maximum.
	out = shellOut{}
	mcptest.OK(t, c.Call("shell_execute", map[string]any{"command": "pwd", "timeout_ms": 10_000_000_000_000}), &out)
	if out.TimeoutMS != (5 * time.Minute).Milliseconds() {
		t.Fatalf("timeout_ms %d", out.TimeoutMS)
	}

	// Refusals: which rule, which code.
	for _, c2 := range []struct {
		args  map[string]any
		code  mcperr.Code
		field string
		want  string
	}{
		{map[string]any{"command": "cat a.txt | wc -l"}, mcperr.Validation, "command", "found a pipe (|)"},
		{map[string]any{"command": "rm -rf /"}, mcperr.Validation, "command", `program "rm" is not allowed`},
		{map[string]any{"argv": []string{"find", ".", "-delete"}}, mcperr.Validation, "argv", "find: flag -delete is not allowed: it deletes files"},
		{map[string]any{"command": "ls", "argv": []string{"ls"}}, mcperr.Validation, "command", "not both"},
		{map[string]any{}, mcperr.Validation, "command", "give a command or argv"},
		{map[string]any{"command": "ls", "env": []map[string]string{{"name": "DATABASE_URL", "value": "x"}}}, mcperr.Validation, "env", `"DATABASE_URL" may not be set`},
		{map[string]any{"command": "ls", "env": []map[string]string{{"name": "A", "value": "1"}, {"name": "A", "value": "2"}}}, mcperr.Validation, "env.1.name", "given twice"},
		{map[string]any{"command": "ls", "env": []map[string]string{{"name": "1A=", "value": "1"}}}, mcperr.Validation, "env.0.name", "not a valid environment variable name"},
		{map[string]any{"command": "ls", "env": []map[string]string{{"name": "A"}}}, mcperr.Validation, "env.0.value", "required"},
		{map[string]any{"command": "cat out-file"}, mcperr.PermissionDeny, "", "through a symbolic link"},
		{map[string]any{"command": "ls", "cwd": "/etc"}, mcperr.PermissionDeny, "", "outside the allowed roots"},
		{map[string]any{"command": "ls", "cwd": "nope"}, mcperr.NotFound, "", "does not exist"},
	} {
		b := mcptest.FailCode(t, c.Call("shell_execute", c2.args), c2.code)
		if !strings.Contains(b.Message, c2.want) || b.Data.Field != c2.field {
			t.Errorf("%v: %s (field %q), want %q (field %q)", c2.args, b.Message, b.Data.Field, c2.want, c2.field)
		}
	}
	// The schema refuses unknown arguments and bad types before the handler.
	mcptest.FailCode(t, c.Call("shell_execute", map[string]any{"command": "ls", "shell": true}), mcperr.Validation)
	mcptest.FailCode(t, c.Call("shell_execute", map[string]any{"command": "ls", "timeout_ms": 0}), mcperr.Validation)
	mcptest.FailCode(t, c.Call("shell_execute", map[string]any{"command": "ls", "encoding": "hex"}), mcperr.Validation)
}

func TestShellExecuteTimeoutAndStartFailure(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken"), []byte("\x7fELF junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/sh", filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/sleep", filepath.Join(dir, "sleep")); err != nil {
		t.Fatal(err)
	}
	c, _ := newShellClient(t, func(cfg *shell.Config) { cfg.Allow = []string{"sh", "broken"}; cfg.Path = dir }, kit.Options{})
	var out shellOut
	start := time.Now()
	mcptest.OK(t, c.Call("shell_execute", map[string]any{"argv": []string{"sh", "-c", "sleep 30"}, "timeout_ms": 200}), &out)
	if !out.TimedOut || out.ExitCode != -1 || out.Signal != "killed" || time.Since(start) > 5*time.Second {
		t.Fatalf("timeout: %+v after %s", out, time.Since(start))
	}
	b := mcptest.FailCode(t, c.Call("shell_execute", map[string]any{"command": "broken"}), mcperr.Internal)
	if !strings.Contains(b.Message, "could not be started") {
		t.Fatalf("start failure: %s", b.Message)
	}
}

func TestShellExecuteDefinition(t *testing.T) {
	c, _ := newShellClient(t, nil, kit.Options{})
	tl := c.ListTools()
	if len(tl) != 1 || tl[0].Name != "shell_execute" {
		t.Fatalf("tools %v", tl)
	}
	a := tl[0].Annotations
	if *a.ReadOnlyHint || !*a.DestructiveHint || *a.IdempotentHint || !*a.OpenWorldHint {
		t.Fatalf("annotations %+v", a)
	}
	if !strings.Contains(tl[0].Description, "cat, echo, find, git, grep, head, ls, pwd, sort, tail, uniq, wc") ||
		strings.Contains(tl[0].Description, "ANY arguments") {
		t.Fatalf("description: %s", tl[0].Description)
	}
	// Operator-added programs are announced.
	c, _ = newShellClient(t, func(cfg *shell.Config) { cfg.Allow = []string{"node", "npm"} }, kit.Options{})
	if d := c.ListTools()[0].Description; !strings.Contains(d, "ANY arguments and no path checks: node, npm") {
		t.Fatalf("description: %s", d)
	}
	// --read-only leaves the tool out.
	sh, err := shell.New(shell.Config{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	probe := kit.Tool{Name: "probe", Description: "d", InputSchema: []byte(`{"type":"object"}`), Effect: kit.ReadOnly,
		Handler: func(context.Context, *kit.Call) (any, error) { return nil, nil }}
	s, err := kit.New(kit.Info{Name: "devtools"}, append(tools.ShellTools(sh, nil), probe), kit.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if names := mcptest.NewInProcess(t, s, "").ToolNames(); !slices.Equal(names, []string{"probe"}) {
		t.Fatalf("read-only server lists %v", names)
	}
}

// TestShellExecuteProgress: a command running longer than a second reports
// progress to a client that asked for it, and to no other.
func TestShellExecuteProgress(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/bin/sleep", filepath.Join(dir, "sleep")); err != nil {
		t.Fatal(err)
	}
	c, _ := newShellClient(t, func(cfg *shell.Config) { cfg.Allow = []string{"sleep"}; cfg.Path = dir }, kit.Options{})
	var mu sync.Mutex
	var got []mcp.JSONRPCNotification
	c.Raw().OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		defer mu.Unlock()
		if n.Method == "notifications/progress" {
			got = append(got, n)
		}
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "shell_execute"
	req.Params.Arguments = map[string]any{"argv": []string{"sleep", "1.3"}, "timeout_ms": 10000}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.Raw().CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress notification during a 1.3 s command")
	}
	p := got[0].Params.AdditionalFields
	if p["progressToken"] != "tok-1" || p["progress"] != float64(1) || p["total"] != float64(10) {
		t.Fatalf("progress params %v", p)
	}
}

// TestShellExecuteConcurrency: at most a few commands run at once; a burst
// of calls past that waits briefly for a slot and is then refused with
// RATE_LIMIT_ERROR, without starting a process.
func TestShellExecuteConcurrency(t *testing.T) {
	c, root := newShellClient(t, func(cfg *shell.Config) { cfg.Allow = []string{"sh"} }, kit.Options{})
	// Each command records that it started, then waits for the release file.
	script := `touch "started.$$"; while [ ! -e release ]; do sleep 0.02; done`
	const calls = 10
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	results := make(chan result, calls)
	for range calls {
		go func() {
			res, err := c.CallErr(context.Background(), "shell_execute", map[string]any{"argv": []string{"sh", "-c", script}})
			results <- result{res, err}
		}()
	}
	// Everything past the slots comes back refused while the others run.
	for range calls - 4 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		b := mcptest.FailCode(t, r.res, mcperr.RateLimit)
		if !b.Data.Retryable || !strings.Contains(b.Message, "shell_execute") {
			t.Errorf("refusal: %+v", b)
		}
	}
	started, err := filepath.Glob(filepath.Join(root, "started.*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 4 {
		t.Errorf("%d commands started, want 4 (the tool's limit)", len(started))
	}
	if err := os.WriteFile(filepath.Join(root, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		var out shellOut
		mcptest.OK(t, r.res, &out)
		if out.ExitCode != 0 {
			t.Errorf("a running command ended with %+v", out)
		}
	}
}
