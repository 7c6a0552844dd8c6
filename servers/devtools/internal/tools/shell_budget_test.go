package tools_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// TestShellExecuteOutputWithinBudget: output far over the result budget
// comes back as its start and its end, within the budget, with the bytes
// left out counted and a sentence on how to get them; output over the
// output cap stops the program and says so.
func TestShellExecuteOutputWithinBudget(t *testing.T) {
	c, root := newShellClient(t, func(cfg *shell.Config) { cfg.MaxOutput = 150 << 10 },
		kit.Options{Limits: kit.Limits{MaxResultBytes: budget}})
	var b strings.Builder
	for b.Len() < 100<<10 {
		b.WriteString("a line of output with \"quotes\"\n")
	}
	body := b.String()
	must(t, os.WriteFile(filepath.Join(root, "out.txt"), []byte(body), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "huge.txt"), []byte(strings.Repeat(body, 3)), 0o644))

	t.Run("utf-8", func(t *testing.T) {
		res := c.Call("shell_execute", map[string]any{"argv": []string{"cat", "out.txt"}})
		var out shellOut
		mcptest.OK(t, res, &out)
		if n := mcptest.ResultSize(t, res); n > budget {
			t.Fatalf("result is %d bytes, over the %d budget", n, budget)
		}
		if !out.Truncated || out.OutputCapped || out.StdoutBytes != int64(len(body)) || out.StdoutTail == "" ||
			int64(len(out.Stdout)+len(out.StdoutTail))+out.StdoutOmitted != out.StdoutBytes ||
			!strings.HasPrefix(body, out.Stdout) || !strings.HasSuffix(body, out.StdoutTail) ||
			!strings.Contains(out.Rest, "stdout_tail") || !strings.Contains(out.Rest, "narrow the command") {
			t.Errorf("got %d+%d bytes of %d, omitted %d, truncated=%v, rest %q", len(out.Stdout), len(out.StdoutTail),
				out.StdoutBytes, out.StdoutOmitted, out.Truncated, out.Rest)
		}
	})
	t.Run("base64", func(t *testing.T) {
		res := c.Call("shell_execute", map[string]any{"argv": []string{"cat", "out.txt"}, "encoding": "base64"})
		var out shellOut
		mcptest.OK(t, res, &out)
		head, err1 := base64.StdEncoding.DecodeString(out.Stdout)
		tail, err2 := base64.StdEncoding.DecodeString(out.StdoutTail)
		if n := mcptest.ResultSize(t, res); n > budget || err1 != nil || err2 != nil || !out.Truncated ||
			int64(len(head)+len(tail))+out.StdoutOmitted != int64(len(body)) ||
			!strings.HasPrefix(body, string(head)) || !strings.HasSuffix(body, string(tail)) {
			t.Errorf("%d bytes: head %d tail %d omitted %d (%v, %v)", n, len(head), len(tail), out.StdoutOmitted, err1, err2)
		}
	})
	t.Run("output cap", func(t *testing.T) {
		res := c.Call("shell_execute", map[string]any{"command": "cat huge.txt"})
		var out shellOut
		mcptest.OK(t, res, &out)
		if n := mcptest.ResultSize(t, res); n > budget || !out.Truncated || !out.OutputCapped || out.StdoutBytes != 150<<10 ||
			!strings.Contains(out.Rest, "output cap") {
			t.Errorf("%d bytes: %d captured, capped=%v, rest %q", n, out.StdoutBytes, out.OutputCapped, out.Rest)
		}
	})
	t.Run("small output is whole", func(t *testing.T) {
		var out shellOut
		mcptest.OK(t, c.Call("shell_execute", map[string]any{"command": "head -n 2 out.txt"}), &out)
		if out.Truncated || out.StdoutTail != "" || out.Rest != "" || out.StdoutBytes != int64(len(out.Stdout)) {
			t.Errorf("%+v", out)
		}
	})
}

// TestShellExecuteEnv: allowed variables given as name/value items reach
// the program.
func TestShellExecuteEnv(t *testing.T) {
	c, _ := newShellClient(t, func(cfg *shell.Config) { cfg.Allow = []string{"env"}; cfg.Env = []string{"FOO", "BAR"} }, kit.Options{})
	var out shellOut
	mcptest.OK(t, c.Call("shell_execute", map[string]any{"argv": []string{"env"},
		"env": []map[string]string{{"name": "FOO", "value": "one two"}, {"name": "BAR", "value": ""}}}), &out)
	if !strings.Contains(out.Stdout, "FOO=one two\n") || !strings.Contains(out.Stdout, "BAR=\n") {
		t.Errorf("env: %q", out.Stdout)
	}
}

// TestShellDescriptionWithManyPrograms: however many programs an operator
// allows, the description stays within what hosts accept, and the model
// still reads every name.
func TestShellDescriptionWithManyPrograms(t *testing.T) {
	for _, n := range []int{2, 80} {
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("tool%02d", i))
		}
		sh, err := shell.New(shell.Config{Roots: []string{t.TempDir()}, Allow: names})
		if err != nil {
			t.Fatal(err)
		}
		tool := tools.ShellTools(sh, nil)[0]
		if err := kit.AgentReady(tool); err != nil {
			t.Fatalf("%d programs: %v", n, err)
		}
		all := tool.Description + string(tool.InputSchema)
		if !strings.Contains(all, names[n-1]+".") || !strings.Contains(all, "ANY arguments") {
			t.Errorf("%d programs: the last name is not listed", n)
		}
	}
}
