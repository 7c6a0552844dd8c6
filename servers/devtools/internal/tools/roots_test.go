// Some tests drive the 2025-11-25 protocol (initialize handshake,
// resources/subscribe), which mcp-go marks deprecated in favour of
// 2026-07-28; the server serves both eras, so they do so on purpose.
//
//lint:file-ignore SA1019 the 2025-11-25 protocol era is tested on purpose

package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/shell"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/rs/zerolog"
)

// rootsHandler answers roots/list with its current list of URIs.
type rootsHandler struct {
	mu   sync.Mutex
	uris []string
	asks int
}

func (h *rootsHandler) set(uris ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.uris = uris
}

func (h *rootsHandler) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asks++
	res := &mcp.ListRootsResult{Roots: []mcp.Root{}}
	for i, u := range h.uris {
		res.Roots = append(res.Roots, mcp.Root{URI: u, Name: fmt.Sprintf("root %d", i)})
	}
	return res, nil
}

func fileURL(p string) string { return "file://" + p }

// rootsEnv: base/proj (the server's root, with sub/), base/outside; a
// server with the file, shell and system tools whose roots may come from
// the client.
type rootsEnv struct {
	base, proj, sub, outside string
	srv                      *kit.Server
	log                      *mcptest.Buffer
}

func newRootsEnv(t *testing.T, configured bool) *rootsEnv {
	t.Helper()
	base := writeTree(t, map[string]string{
		"proj/hello.txt":      "hello\n",
		"proj/sub/in-sub.txt": "in sub\n",
		"outside/secret.txt":  "secret\n",
	})
	e := &rootsEnv{base: base, proj: filepath.Join(base, "proj"), sub: filepath.Join(base, "proj/sub"),
		outside: filepath.Join(base, "outside"), log: &mcptest.Buffer{}}
	fsys, err := fsroot.Open([]string{e.proj}, fsroot.Limits{})
	must(t, err)
	t.Cleanup(func() { _ = fsys.Close() })
	sh, err := shell.New(shell.Config{Roots: fsys.Roots(), HoldWrites: fsys.HoldWrites})
	must(t, err)
	log := zerolog.New(e.log)
	roots := tools.NewRoots(fsys, configured, &log)
	t.Cleanup(roots.Close)
	all := append(tools.FileTools(roots, nil), tools.ShellTools(sh, roots)...)
	all = append(all, tools.SystemTools(tools.SystemDeps{Info: kit.Info{Name: "devtools"}, Metrics: metrics.New("devtools"), Roots: roots})...)
	e.srv, err = kit.New(kit.Info{Name: "devtools"}, all, kit.Options{})
	must(t, err)
	return e
}

// legacy and modern make a client with roots for each protocol era.
func legacy(t *testing.T, s *kit.Server, h client.RootsHandler) *mcptest.Client {
	return connect(t, s, "", true, client.WithRootsHandler(h))
}

func modern(t *testing.T, s *kit.Server, h client.RootsHandler) *mcptest.Client {
	return connect(t, s, "", false, client.WithRootsHandler(h))
}

func rootsOf(t *testing.T, c *mcptest.Client) []string {
	t.Helper()
	var out systemInfoOut
	ok(t, c.Call("system_info", map[string]any{}), &out)
	return out.Roots
}

// TestClientRootsNarrow: with configured roots, a client's roots inside them
// narrow what every tool may use, in both protocol eras; roots outside them
// are ignored and logged.
func TestClientRootsNarrow(t *testing.T) {
	t.Parallel()
	for _, era := range []struct {
		name   string
		client func(*testing.T, *kit.Server, client.RootsHandler) *mcptest.Client
	}{{"2025-11-25", legacy}, {"2026-07-28", modern}} {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			e := newRootsEnv(t, true)
			h := &rootsHandler{}
			h.set(fileURL(e.sub), fileURL(e.outside), "https://example.com/repo", fileURL(filepath.Join(e.proj, "missing")))
			c := era.client(t, e.srv, h)

			if got := rootsOf(t, c); !slices.Equal(got, []string{e.sub}) {
				t.Fatalf("roots = %q, want only %s", got, e.sub)
			}
			// Relative paths resolve against the client's first root.
			var read struct{ Content string }
			ok(t, c.Call("file_read", map[string]any{"path": "in-sub.txt"}), &read)
			if read.Content != "in sub\n" {
				t.Errorf("file_read in-sub.txt = %q", read.Content)
			}
			// The rest of the configured root is out of reach of every tool.
			mcptest.FailCode(t, c.Call("file_read", map[string]any{"path": filepath.Join(e.proj, "hello.txt")}), mcperr.PermissionDeny)
			mcptest.FailCode(t, c.Call("file_list", map[string]any{"path": ".."}), mcperr.PermissionDeny)
			mcptest.FailCode(t, c.Call("file_write", map[string]any{"path": filepath.Join(e.proj, "new.txt"), "content": "x"}), mcperr.PermissionDeny)
			var run struct {
				Stdout   string `json:"stdout"`
				ExitCode int    `json:"exit_code"`
			}
			ok(t, c.Call("shell_execute", map[string]any{"command": "pwd"}), &run)
			if strings.TrimSpace(run.Stdout) != e.sub {
				t.Errorf("shell pwd = %q, want %s", run.Stdout, e.sub)
			}
			mcptest.FailCode(t, c.Call("shell_execute", map[string]any{"command": "cat ../hello.txt"}), mcperr.PermissionDeny)
			mcptest.FailCode(t, c.Call("shell_execute", map[string]any{"argv": []string{"ls", e.outside}}), mcperr.PermissionDeny)

			log := e.log.String()
			for _, want := range []string{e.outside, "https://example.com/repo", "missing", "client roots narrow the configured roots"} {
				if !strings.Contains(log, want) {
					t.Errorf("the log does not mention %q:\n%s", want, log)
				}
			}
		})
	}
}

// TestClientRootsReplaceDefault: without configured roots, the client's
// roots replace the working directory, even outside it.
func TestClientRootsReplaceDefault(t *testing.T) {
	t.Parallel()
	e := newRootsEnv(t, false)
	h := &rootsHandler{}
	h.set(fileURL(e.outside), fileURL(e.sub))
	c := legacy(t, e.srv, h)
	if got := rootsOf(t, c); !slices.Equal(got, []string{e.outside, e.sub}) {
		t.Fatalf("roots = %q", got)
	}
	var read struct{ Content string }
	ok(t, c.Call("file_read", map[string]any{"path": "secret.txt"}), &read)
	if read.Content != "secret\n" {
		t.Errorf("file_read = %q", read.Content)
	}
	mcptest.FailCode(t, c.Call("file_read", map[string]any{"path": filepath.Join(e.proj, "hello.txt")}), mcperr.PermissionDeny)
	// The default root stays protected even inside a client's root.
	h2 := &rootsHandler{}
	h2.set(fileURL(e.base))
	c2 := legacy(t, e.srv, h2)
	mcptest.FailCode(t, c2.Call("file_delete", map[string]any{"path": "proj", "recursive": true}), mcperr.PermissionDeny)
	if !strings.Contains(e.log.String(), "client roots replace the default root") {
		t.Errorf("log: %s", e.log.String())
	}
}

// TestClientRootsFallback: a client without roots, with an empty list, or
// with no usable root gets the server's roots.
func TestClientRootsFallback(t *testing.T) {
	t.Parallel()
	e := newRootsEnv(t, true)
	plain := mcptest.NewInProcess(t, e.srv, "")
	if got := rootsOf(t, plain); !slices.Equal(got, []string{e.proj}) {
		t.Errorf("without client roots: %q", got)
	}
	empty := &rootsHandler{}
	c := legacy(t, e.srv, empty)
	if got := rootsOf(t, c); !slices.Equal(got, []string{e.proj}) {
		t.Errorf("with an empty list: %q", got)
	}
	bad := &rootsHandler{}
	bad.set(fileURL(e.outside), "file://host/share", "file:relative", fileURL(filepath.Join(e.proj, "hello.txt")))
	c = legacy(t, e.srv, bad)
	if got := rootsOf(t, c); !slices.Equal(got, []string{e.proj}) {
		t.Errorf("with no usable root: %q", got)
	}
	if !strings.Contains(e.log.String(), "none of the client's roots is usable") {
		t.Errorf("log: %s", e.log.String())
	}
}

// TestClientRootsChange: the roots are asked once per session, and again
// after the client says they changed.
func TestClientRootsChange(t *testing.T) {
	t.Parallel()
	e := newRootsEnv(t, true)
	h := &rootsHandler{}
	h.set(fileURL(e.sub))
	c := legacy(t, e.srv, h)
	rootsOf(t, c)
	if got := rootsOf(t, c); !slices.Equal(got, []string{e.sub}) {
		t.Fatalf("roots = %q", got)
	}
	h.mu.Lock()
	asks := h.asks
	h.mu.Unlock()
	if asks != 1 {
		t.Errorf("roots asked %d times for two calls of one session", asks)
	}
	h.set(fileURL(e.proj))
	must(t, c.Raw().RootListChanges(context.Background()))
	// The notification and the next call travel on the same stream, in order.
	if got := rootsOf(t, c); !slices.Equal(got, []string{e.proj}) {
		t.Errorf("after list_changed: %q", got)
	}
}

// TestClientRootsManySessions: views are cached per list of roots and the
// cache is bounded; a session whose view was evicted gets it again.
func TestClientRootsManySessions(t *testing.T) {
	t.Parallel()
	e := newRootsEnv(t, true)
	var clients []*mcptest.Client
	var dirs []string
	for i := range 40 {
		dir := filepath.Join(e.proj, fmt.Sprintf("d%02d", i))
		must(t, os.Mkdir(dir, 0o755))
		h := &rootsHandler{}
		h.set(fileURL(dir))
		c := legacy(t, e.srv, h)
		if got := rootsOf(t, c); !slices.Equal(got, []string{dir}) {
			t.Fatalf("session %d: roots %q", i, got)
		}
		clients = append(clients, c)
		dirs = append(dirs, dir)
	}
	for i, c := range clients[:3] {
		if got := rootsOf(t, c); !slices.Equal(got, []string{dirs[i]}) {
			t.Errorf("session %d again: roots %q", i, got)
		}
	}
}
