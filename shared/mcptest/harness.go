package mcptest

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// update is the one -update flag of every test binary that uses this
// package: it rewrites schema snapshots and generated references instead of
// comparing them. One definition, because two packages defining the same
// flag in one test binary panic at start.
var update = flag.Bool("update", false, "rewrite snapshots and generated references from the code instead of comparing them")

// Updating reports whether the test run was asked to rewrite snapshots
// (go test … -update, or -args -update for a whole package list).
func Updating() bool { return *update }

// SchemaDir is where a server's tools package keeps its tool snapshots.
const SchemaDir = "testdata/schemas"

// Family is a named constructor of one family of a server's tools, given
// what the tools need (D).
type Family[D any] struct {
	Name  string
	Tools func(D) []kit.Tool
}

// Collect builds every family's tools with d, in order.
func Collect[D any](families []Family[D], d D) []kit.Tool {
	var all []kit.Tool
	for _, f := range families {
		all = append(all, f.Tools(d)...)
	}
	return all
}

// CheckSnapshots compares the tools' definitions as tools/list sends them
// with their snapshots in SchemaDir (rewriting them with -update): see
// CheckSchemas.
func CheckSnapshots(t *testing.T, server string, tools []kit.Tool) {
	t.Helper()
	CheckSchemas(t, ListedTools(t, server, tools), SchemaDir, Updating())
}

// Hints are a tool's four behaviour annotations.
type Hints struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// CheckAnnotations runs, for every listed tool (see ListedTools), the checks
// every server makes of what clients are told: all four hints set to
// booleans (mcp-go's defaults would call a tool destructive and
// open-world), a title that annotations.title repeats, a description, a
// closed object input schema, and a read-only tool that is idempotent and
// not destructive. Then want checks the hints against what the server's
// tool does; want may be nil.
func CheckAnnotations(t *testing.T, listed map[string]json.RawMessage, want func(t testing.TB, name string, h Hints)) {
	t.Helper()
	for name, raw := range listed {
		t.Run(name, func(t *testing.T) { checkAnnotations(t, name, raw, want) })
	}
}

func checkAnnotations(t testing.TB, name string, raw json.RawMessage, want func(t testing.TB, name string, h Hints)) {
	t.Helper()
	var def struct {
		Title       string                     `json:"title"`
		Description string                     `json:"description"`
		InputSchema map[string]any             `json:"inputSchema"`
		Annotations map[string]json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	var h Hints
	for _, hint := range []struct {
		key string
		dst *bool
	}{{"readOnlyHint", &h.ReadOnly}, {"destructiveHint", &h.Destructive}, {"idempotentHint", &h.Idempotent}, {"openWorldHint", &h.OpenWorld}} {
		v, ok := def.Annotations[hint.key]
		if !ok || json.Unmarshal(v, hint.dst) != nil {
			t.Errorf("annotation %s is not set to a boolean: %s", hint.key, v)
		}
	}
	if h.ReadOnly && (h.Destructive || !h.Idempotent) {
		t.Errorf("read-only tool with destructiveHint=%v idempotentHint=%v", h.Destructive, h.Idempotent)
	}
	title, _ := json.Marshal(def.Title)
	if def.Title == "" || string(def.Annotations["title"]) != string(title) {
		t.Errorf("title %q, annotations.title %s", def.Title, def.Annotations["title"])
	}
	if def.Description == "" || def.InputSchema["type"] != "object" || def.InputSchema["additionalProperties"] != false {
		t.Errorf("description %q, inputSchema type %v additionalProperties %v", def.Description, def.InputSchema["type"], def.InputSchema["additionalProperties"])
	}
	if want != nil {
		want(t, name, h)
	}
}

// HintsTable is a want for CheckAnnotations: every tool is in table, with
// exactly those hints.
func HintsTable(table map[string]Hints) func(t testing.TB, name string, h Hints) {
	return func(t testing.TB, name string, h Hints) {
		t.Helper()
		want, ok := table[name]
		if !ok {
			t.Fatalf("no expected hints for %s", name)
		}
		if h != want {
			t.Errorf("hints %+v, want %+v", h, want)
		}
	}
}

// OpenWorld reports whether the tool is annotated as reaching beyond the
// server's own state.
func OpenWorld(tool kit.Tool) bool {
	a := tool.Annotations()
	return a.OpenWorldHint != nil && *a.OpenWorldHint
}

// CheckAgentReady fails the test for every tool that fails kit.AgentReady
// (what LLM hosts accept: name and description limits, a portable input
// schema, an outputSchema), naming label and the tool. With want > 0 it
// also checks that there are that many tools, so a tool cannot slip past.
func CheckAgentReady(t testing.TB, label string, tools []kit.Tool, want int) {
	t.Helper()
	for _, tool := range tools {
		if err := kit.AgentReady(tool); err != nil {
			t.Errorf("%s: %s: %v", label, tool.Name, err)
		}
	}
	if want > 0 && len(tools) != want {
		t.Errorf("%s: %d tools, want %d", label, len(tools), want)
	}
}

// RepoFile is the absolute path of a file of the checkout (parts joined
// below the folder holding go.work), which must exist.
func RepoFile(t testing.TB, parts ...string) string {
	t.Helper()
	root, err := checkoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(append([]string{root}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the checkout's %s: %v", filepath.Join(parts...), err)
	}
	return p
}

// WaitFor polls cond for up to ten seconds: what a server logs reaches the
// test through a pipe and a copying goroutine, a little after its answer.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Exit is what one run of a server's binary should give (see Run).
type Exit struct {
	Code   int
	Stdout []string // each must appear on stdout
	Stderr []string // each must appear on stderr
	Hidden []string // none may appear on either (secrets)
	// QuietStdout: stdout must stay empty (it is the protocol's alone).
	QuietStdout bool
}

// Check fails the test where stdout, stderr and code differ from e.
func (e Exit) Check(t testing.TB, stdout, stderr string, code int) {
	t.Helper()
	if code != e.Code {
		t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, e.Code, stdout, stderr)
	}
	for _, s := range e.Stdout {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	for _, s := range e.Stderr {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
	for _, s := range e.Hidden {
		if strings.Contains(stdout+stderr, s) {
			t.Errorf("a secret reached the output:\nstdout: %s\nstderr: %s", stdout, stderr)
		}
	}
	if e.QuietStdout && stdout != "" {
		t.Errorf("stdout must stay empty, got %q", stdout)
	}
}

// MinBudget is the smallest result budget (--max-result-bytes) a server
// accepts: with it, paging is exercised on modest test data.
const MinBudget = 16 << 10

// ResultSize is what a result costs as sent: its text and its
// structuredContent, JSON-encoded.
func ResultSize(t testing.TB, res *mcp.CallToolResult) int {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// Sized calls tool, fails the test unless the result as sent fits budget,
// and decodes its structuredContent into v (see Structured).
func Sized(t testing.TB, c *Client, budget int, tool string, args map[string]any, v any) {
	t.Helper()
	res := c.Call(tool, args)
	if n := ResultSize(t, res); n > budget {
		t.Fatalf("%s: the result is %d bytes, over the budget of %d", tool, n, budget)
	}
	Structured(t, res, v)
}
