package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// recorder is a testing.TB that records failures instead of failing, so
// the checks can be shown to fail.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Error(a ...any) { r.errs = append(r.errs, fmt.Sprint(a...)) }
func (r *recorder) Fatalf(format string, a ...any) {
	r.Errorf(format, a...)
	r.fatal = true
	runtime.Goexit()
}
func (r *recorder) Fatal(a ...any) { r.Error(a...); r.fatal = true; runtime.Goexit() }

// record runs fn against a recorder on its own goroutine (Fatal ends it).
func record(t *testing.T, fn func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

func (r *recorder) has(t *testing.T, want string) {
	t.Helper()
	for _, e := range r.errs {
		if strings.Contains(e, want) {
			return
		}
	}
	t.Errorf("no failure mentions %q; failures: %q", want, r.errs)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Text string `json:"text"`
}

func echoTool(name string, effect kit.Effect) kit.Tool {
	return kit.NewTool(kit.Tool{Name: name, Title: "Echo " + name, Description: "Echo the text back.", Effect: effect},
		func(_ context.Context, _ *kit.Call, in echoIn) (echoOut, error) { return echoOut(in), nil })
}

func TestCheckAnnotations(t *testing.T) {
	tools := []kit.Tool{echoTool("read", kit.ReadOnly), echoTool("write", kit.Destructive)}
	listed := ListedTools(t, "test", tools)
	var seen []string
	CheckAnnotations(t, listed, func(t testing.TB, name string, h Hints) {
		seen = append(seen, name)
		if want := (Hints{ReadOnly: true, Idempotent: true}); name == "read" && h != want {
			t.Errorf("read: %+v", h)
		}
		if name == "write" && (!h.Destructive || h.ReadOnly) {
			t.Errorf("write: %+v", h)
		}
	})
	if len(seen) != 2 {
		t.Errorf("want called for %q, want both tools", seen)
	}
	CheckAnnotations(t, listed, HintsTable(map[string]Hints{"read": {ReadOnly: true, Idempotent: true}, "write": {Destructive: true}}))

	for _, tc := range []struct {
		name, def, want string
	}{
		{"hint missing", `{"title":"T","description":"d","inputSchema":{"type":"object","additionalProperties":false},
			"annotations":{"title":"T","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true}}`, "openWorldHint is not set"},
		{"read-only but destructive", `{"title":"T","description":"d","inputSchema":{"type":"object","additionalProperties":false},
			"annotations":{"title":"T","readOnlyHint":true,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}}`, "read-only tool"},
		{"titles differ", `{"title":"T","description":"d","inputSchema":{"type":"object","additionalProperties":false},
			"annotations":{"title":"U","readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}`, `annotations.title "U"`},
		{"open schema", `{"title":"T","description":"d","inputSchema":{"type":"object"},
			"annotations":{"title":"T","readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}`, "additionalProperties <nil>"},
		{"not JSON", `{`, "unexpected end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			record(t, func(tb testing.TB) { checkAnnotations(tb, "x", json.RawMessage(tc.def), nil) }).has(t, tc.want)
		})
	}
	table := HintsTable(map[string]Hints{"known": {ReadOnly: true}})
	if r := record(t, func(tb testing.TB) { table(tb, "unknown", Hints{}) }); !r.fatal {
		t.Error("a tool missing from the table passed")
	}
	record(t, func(tb testing.TB) { table(tb, "known", Hints{}) }).has(t, "want {ReadOnly:true")
}

func TestCheckAgentReady(t *testing.T) {
	good := echoTool("echo", kit.ReadOnly)
	if r := record(t, func(tb testing.TB) { CheckAgentReady(tb, "test", []kit.Tool{good}, 1) }); len(r.errs) != 0 {
		t.Errorf("a ready tool failed: %q", r.errs)
	}
	record(t, func(tb testing.TB) { CheckAgentReady(tb, "test", []kit.Tool{good}, 2) }).has(t, "test: 1 tools, want 2")
	bad := echoTool(strings.Repeat("n", 200), kit.ReadOnly)
	record(t, func(tb testing.TB) { CheckAgentReady(tb, "test", []kit.Tool{bad}, 0) }).has(t, "test: nnnn")
}

func TestFamiliesAndSnapshots(t *testing.T) {
	fams := []Family[string]{
		{Name: "a", Tools: func(p string) []kit.Tool { return []kit.Tool{echoTool(p+"_one", kit.ReadOnly)} }},
		{Name: "b", Tools: func(p string) []kit.Tool { return []kit.Tool{echoTool(p+"_two", kit.Destructive)} }},
	}
	all := Collect(fams, "x")
	if len(all) != 2 || all[0].Name != "x_one" || all[1].Name != "x_two" {
		t.Fatalf("Collect = %v", all)
	}
	dir := filepath.Join(t.TempDir(), "schemas")
	listed := ListedTools(t, "test", all)
	CheckSchemas(t, listed, dir, true)
	if err := os.WriteFile(filepath.Join(dir, "gone.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	CheckSchemas(t, listed, dir, true) // removes the snapshot of a tool that is gone
	CheckSchemas(t, listed, dir, false)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 2 {
		t.Errorf("snapshots %q, want one per tool", files)
	}
	if Updating() {
		t.Error("-update is off unless asked for")
	}
	if d := firstDiff("a\nb\n", "a\nc\n"); !strings.Contains(d, "line 2") {
		t.Errorf("firstDiff = %q", d)
	}
}

func TestExit(t *testing.T) {
	ok := Exit{Code: 2, Stdout: []string{"out"}, Stderr: []string{"bad flag"}, Hidden: []string{"s3cret"}}
	if r := record(t, func(tb testing.TB) { ok.Check(tb, "the out", "a bad flag", 2) }); len(r.errs) != 0 {
		t.Errorf("a matching run failed: %q", r.errs)
	}
	r := record(t, func(tb testing.TB) {
		Exit{Code: 0, Stdout: []string{"x"}, Stderr: []string{"y"}, Hidden: []string{"s3cret"}, QuietStdout: true}.Check(tb, "s3cret", "", 1)
	})
	for _, want := range []string{"exit code 1, want 0", `stdout lacks "x"`, `stderr lacks "y"`, "a secret reached the output", "stdout must stay empty"} {
		r.has(t, want)
	}
}

func TestRepoFileAndWaitFor(t *testing.T) {
	if p := RepoFile(t, "go.work"); !filepath.IsAbs(p) {
		t.Errorf("RepoFile = %s, want an absolute path", p)
	}
	if r := record(t, func(tb testing.TB) { RepoFile(tb, "no", "such.file") }); !r.fatal {
		t.Error("a missing file was found")
	}
	n := 0
	WaitFor(t, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("polled %d times", n)
	}
}

func TestSized(t *testing.T) {
	s, err := kit.New(kit.Info{Name: "test"}, []kit.Tool{echoTool("echo", kit.ReadOnly)}, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewInProcess(t, s, "tester")
	var out echoOut
	Sized(t, c, MinBudget, "echo", map[string]any{"text": "hi"}, &out)
	if out.Text != "hi" {
		t.Errorf("echo = %q", out.Text)
	}
	big := strings.Repeat("x", 200)
	if r := record(t, func(tb testing.TB) { Sized(tb, c, 100, "echo", map[string]any{"text": big}, &out) }); !r.fatal {
		t.Error("a result over the budget passed")
	}
	if n := ResultSize(t, c.Call("echo", map[string]any{"text": big})); n < 200 {
		t.Errorf("ResultSize = %d, want at least the text", n)
	}
}

// TestStdioServer drives a real server process built from testdata.
func TestStdioServer(t *testing.T) {
	bin := Build(t, "./testdata/echo-mcp")
	if again := Build(t, "./testdata/echo-mcp"); again != bin {
		t.Errorf("built twice: %s, %s", bin, again)
	}
	stdout, _, code := Run(t, bin, nil, "--version")
	Exit{Stdout: []string{"test"}}.Check(t, stdout, "", code)

	c := StartStdio(t, bin, nil)
	if names := c.ToolNames(); len(names) != 2 || c.Raw() == nil {
		t.Fatalf("tools %q", names)
	}
	var out echoOut
	OK(t, c.Call("echo", map[string]any{"text": "hello"}), &out)
	if out.Text != "hello" {
		t.Errorf("echo = %q", out.Text)
	}
	b := FailCode(t, c.Call("fail", map[string]any{"text": "x"}), mcperr.Validation)
	if b.Message == "" {
		t.Errorf("error body %+v", b)
	}
	if r := record(t, func(tb testing.TB) { OK(tb, c.Call("fail", map[string]any{"text": "x"}), nil) }); !r.fatal {
		t.Error("OK passed an error result")
	}
	if r := record(t, func(tb testing.TB) { Fail(tb, c.Call("echo", map[string]any{"text": "x"})) }); !r.fatal {
		t.Error("Fail passed a good result")
	}
	WaitFor(t, "the audit line", func() bool { return strings.Contains(c.Stderr(), `"tool":"fail"`) })
	if !OpenWorld(kit.NewTool(kit.Tool{Name: "web", Title: "Web", Description: "Reach out.", OpenWorld: true},
		func(context.Context, *kit.Call, echoIn) (echoOut, error) { return echoOut{}, nil })) || OpenWorld(echoTool("echo", kit.ReadOnly)) {
		t.Error("OpenWorld does not read the annotation")
	}
	if (&Client{}).Stderr() != "" {
		t.Error("an in-process client has no stderr")
	}
}

func TestCheckReference(t *testing.T) {
	s := kit.Spec{Info: kit.Info{Name: "echo", Version: "test"}, Summary: "echo for tests",
		Setup: func(context.Context, *kit.Env) ([]kit.Tool, func(), error) {
			return []kit.Tool{echoTool("echo", kit.ReadOnly)}, func() {}, nil
		}}
	begin := strings.ReplaceAll(ReferenceBegin, "<server>", "echo")
	page := filepath.Join(t.TempDir(), "echo.md")
	if err := os.WriteFile(page, []byte("# Echo\n\n"+begin+"\nstale\n"+ReferenceEnd+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	record(t, func(tb testing.TB) { CheckReference(tb, s, page, false) }).has(t, "the generated reference is stale")
	CheckReference(t, s, page, true)
	CheckReference(t, s, page, false)
	b, _ := os.ReadFile(page)
	if !strings.Contains(string(b), "echo") || strings.Contains(string(b), "stale") {
		t.Errorf("page after -update:\n%s", b)
	}
}

// TestProc drives the echo server line by line, as the benchmarks do.
func TestProc(t *testing.T) {
	p := StartProc(t, Build(t, "./testdata/echo-mcp"), []string{"HOME=" + t.TempDir(), "MCP_DATA_DIR=" + t.TempDir()})
	p.Initialize(t)
	if p.Pid() <= 0 {
		t.Errorf("pid %d", p.Pid())
	}
	if line := p.Call(t, `{"name":"echo","arguments":{"text":"hi"}}`); !strings.Contains(string(line), `"text":"hi"`) {
		t.Errorf("echo: %s", line)
	}
	if r := record(t, func(tb testing.TB) { p.Call(tb, `{"name":"fail","arguments":{"text":"x"}}`) }); !r.fatal {
		t.Error("a failed call passed")
	}
	p.Stop()
	p.Stop()
	if r := record(t, func(tb testing.TB) { p.RoundTrip(tb, "ping", "{}") }); !r.fatal {
		t.Error("a stopped server answered")
	}
	sorted := []time.Duration{1, 2, 3, 4, 5}
	if Percentile(sorted, 0.5) != 3 || Percentile(sorted, 1) != 5 {
		t.Error("Percentile")
	}
}

func BenchmarkProcEcho(b *testing.B) {
	p := StartProc(b, Build(b, "./testdata/echo-mcp"), []string{"HOME=" + b.TempDir(), "MCP_DATA_DIR=" + b.TempDir()})
	p.Initialize(b)
	Measure(b, func() { p.Call(b, `{"name":"echo","arguments":{"text":"hi"}}`) })
}
