// Some tests drive the 2025-11-25 protocol (initialize handshake,
// resources/subscribe), which mcp-go marks deprecated in favour of
// 2026-07-28; the server serves both eras, so they do so on purpose.
//
//lint:file-ignore SA1019 the 2025-11-25 protocol era is tested on purpose

package tools_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/filewatch"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/fsroot"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// resEnv is a root with files of several kinds, a directory outside it, and
// a kit server with the file tools, system_info and the file resources, as
// devtools serves them.
type resEnv struct {
	root, outside string
	srv           *kit.Server
	notifier      *kit.Notifier
	w             *filewatch.Watcher
}

// pngHead is the start of a PNG file: sniffed as image/png.
const pngHead = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

func newResEnv(t *testing.T, policy *acl.Policy, maxFiles int) *resEnv {
	t.Helper()
	base := writeTree(t, map[string]string{
		"proj/hello.txt":      "hello\n",
		"proj/data.json":      `{"a": 1}`,
		"proj/page.html":      "<!DOCTYPE html><html><body>hi</body></html>",
		"proj/image.png":      pngHead,
		"proj/blob.bin":       "\x00\x01\x02\xff",
		"proj/big.txt":        strings.Repeat("x", 2048),
		"proj/.hidden":        "h",
		"proj/sub/nested.go":  "package sub\n",
		"outside/secret.txt":  "secret\n",
		"outside/neighbor.md": "n",
	})
	e := &resEnv{root: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside")}
	must(t, os.Symlink(filepath.Join(e.outside, "secret.txt"), filepath.Join(e.root, "escape")))
	fsys, err := fsroot.Open([]string{e.root}, fsroot.Limits{MaxReadBytes: 1024})
	must(t, err)
	t.Cleanup(func() { _ = fsys.Close() })
	n := kit.NewNotifier()
	e.w, err = filewatch.New(filewatch.Config{Resolve: fsys.WatchPaths, Notify: n.Updated, MaxFiles: maxFiles,
		Debounce: time.Millisecond, FlagHint: "--watch-max-files"})
	must(t, err)
	t.Cleanup(func() { _ = e.w.Close() })
	roots := tools.NewRoots(fsys, true, nil)
	all := append(tools.FileTools(roots, e.w), tools.SystemTools(tools.SystemDeps{Info: kit.Info{Name: "devtools"},
		Metrics: metrics.New("devtools"), Roots: roots})...)
	e.notifier = n
	e.srv, err = kit.New(kit.Info{Name: "devtools"}, all, kit.Options{Policy: policy, Notifier: n,
		Templates: []kit.ResourceTemplate{tools.FileResources(fsys, e.w)}})
	must(t, err)
	return e
}

func (e *resEnv) uri(rel string) string {
	return tools.FileURI(filepath.Join(e.root, filepath.FromSlash(rel)))
}

// replace changes a file with a single event, as an editor saving it
// would: a file written beside the root is renamed over it.
func (e *resEnv) replace(t *testing.T, rel, content string) {
	t.Helper()
	tmp := filepath.Join(e.outside, "tmp-"+filepath.Base(rel))
	must(t, os.WriteFile(tmp, []byte(content), 0o644))
	must(t, os.Rename(tmp, filepath.Join(e.root, filepath.FromSlash(rel))))
}

func TestFileResourcesListAndRead(t *testing.T) {
	t.Parallel()
	e := newResEnv(t, nil, 0)
	c := mcptest.NewInProcess(t, e.srv, "")
	ctx := context.Background()

	tl, err := c.Raw().ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	must(t, err)
	if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate.Raw() != tools.FileTemplate ||
		tl.ResourceTemplates[0].Name != "file" || !strings.Contains(tl.ResourceTemplates[0].Description, "1 KiB") {
		t.Fatalf("templates = %+v", tl.ResourceTemplates)
	}
	list, err := c.Raw().ListResources(ctx, mcp.ListResourcesRequest{})
	must(t, err)
	var names []string
	for _, r := range list.Resources {
		names = append(names, r.Name)
		if r.URI != e.uri(r.Name) {
			t.Errorf("%s has URI %s, want %s", r.Name, r.URI, e.uri(r.Name))
		}
	}
	slices.Sort(names)
	// Regular, visible files at the top of the root: no directories, no
	// dotfiles, no links.
	if want := []string{"big.txt", "blob.bin", "data.json", "hello.txt", "image.png", "page.html"}; !slices.Equal(names, want) {
		t.Errorf("resources = %q, want %q", names, want)
	}

	for _, tc := range []struct {
		rel, mime, text string
		blob            []byte
	}{
		{rel: "hello.txt", mime: "text/plain", text: "hello\n"},
		{rel: "data.json", mime: "application/json", text: `{"a": 1}`},
		{rel: "page.html", mime: "text/html", text: "<!DOCTYPE html><html><body>hi</body></html>"},
		{rel: "sub/nested.go", mime: "text/x-go", text: "package sub\n"},
		{rel: "image.png", mime: "image/png", blob: []byte(pngHead)},
		{rel: "blob.bin", mime: "application/octet-stream", blob: []byte("\x00\x01\x02\xff")},
	} {
		res, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: e.uri(tc.rel)}})
		if err != nil {
			t.Errorf("read %s: %v", tc.rel, err)
			continue
		}
		if len(res.Contents) != 1 {
			t.Errorf("read %s: %d contents", tc.rel, len(res.Contents))
			continue
		}
		switch got := res.Contents[0].(type) {
		case mcp.TextResourceContents:
			if tc.blob != nil || got.Text != tc.text || got.MIMEType != tc.mime || got.URI != e.uri(tc.rel) {
				t.Errorf("read %s = text %+v, want %s %q", tc.rel, got, tc.mime, tc.text)
			}
		case mcp.BlobResourceContents:
			b, _ := base64.StdEncoding.DecodeString(got.Blob)
			if tc.blob == nil || string(b) != string(tc.blob) || got.MIMEType != tc.mime {
				t.Errorf("read %s = blob %+v, want %s", tc.rel, got, tc.mime)
			}
		default:
			t.Errorf("read %s: contents %T", tc.rel, got)
		}
	}

	// Percent-encoded names decode before confinement.
	must(t, os.WriteFile(filepath.Join(e.root, "a b.txt"), []byte("spaced"), 0o644))
	if res, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: e.uri("a b.txt")}}); err != nil ||
		res.Contents[0].(mcp.TextResourceContents).Text != "spaced" {
		t.Errorf("read a percent-encoded URI: %+v, %v", res, err)
	}

	// Outside the roots, through a link that leaves, or missing: "Resource
	// not found", the same answer for each.
	for _, uri := range []string{
		tools.FileURI(filepath.Join(e.outside, "secret.txt")),
		"file://" + e.root + "/../outside/secret.txt",
		e.uri("escape"),
		e.uri("missing.txt"),
		"file:///etc/passwd",
	} {
		_, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err == nil || !strings.Contains(err.Error(), "Resource not found") {
			t.Errorf("read %s: %v, want Resource not found", uri, err)
		}
	}
	// Over the read cap, or a directory: a clear refusal.
	for uri, want := range map[string]string{e.uri("big.txt"): "over the read cap", e.uri("sub"): "is a directory"} {
		_, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("read %s: %v, want %q", uri, err, want)
		}
	}
}

// TestFileResourcesACL: an agent that may use the file tools lists, reads
// and subscribes; one that may not sees no resource at all and cannot
// subscribe.
func TestFileResourcesACL(t *testing.T) {
	t.Parallel()
	policy, err := acl.Parse([]byte(`version: 1
agents:
  reader:
    tools: [file_read]
  writer:
    tools: [file_write]
  ops:
    tools: [system_info]
`))
	must(t, err)
	e := newResEnv(t, policy, 0)
	ctx := context.Background()
	for _, agent := range []string{"reader", "writer"} {
		c := connect(t, e.srv, agent, true)
		if list, err := c.Raw().ListResources(ctx, mcp.ListResourcesRequest{}); err != nil || len(list.Resources) == 0 {
			t.Errorf("%s lists %+v, %v", agent, list, err)
		}
		if _, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: e.uri("hello.txt")}}); err != nil {
			t.Errorf("%s reads: %v", agent, err)
		}
		if err := c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: e.uri("hello.txt")}}); err != nil {
			t.Errorf("%s subscribes: %v", agent, err)
		}
	}
	c := connect(t, e.srv, "ops", true)
	if list, err := c.Raw().ListResources(ctx, mcp.ListResourcesRequest{}); err != nil || len(list.Resources) != 0 {
		t.Errorf("ops lists %+v, %v", list, err)
	}
	if tl, err := c.Raw().ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{}); err != nil || len(tl.ResourceTemplates) != 0 {
		t.Errorf("ops lists templates %+v, %v", tl, err)
	}
	if _, err := c.Raw().ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: e.uri("hello.txt")}}); err == nil ||
		!strings.Contains(err.Error(), "Resource not found") {
		t.Errorf("ops reads: %v", err)
	}
	if err := c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: e.uri("data.json")}}); err == nil ||
		!strings.Contains(err.Error(), "Resource not found") {
		t.Errorf("ops subscribes: %v", err)
	}
	// Only the two allowed agents' subscription holds a watch.
	if n := e.w.Len(); n != 1 {
		t.Errorf("%d files watched, want 1", n)
	}
}

// TestFileResourceSubscribe: a subscribed client hears of a change made by
// another process, and of changes made by file_write and file_delete;
// after unsubscribing it hears nothing more.
func TestFileResourceSubscribe(t *testing.T) {
	t.Parallel()
	e := newResEnv(t, nil, 0)
	c := connect(t, e.srv, "", true)
	u := mcptest.ListenUpdates(c)
	ctx := context.Background()
	sub := func(rel string) {
		t.Helper()
		must(t, c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: e.uri(rel)}}))
	}
	sub("hello.txt")
	sub("sub/nested.go")
	sub("sentinel")

	// Changes with one kernel event each, so each sends one update and
	// none is left in flight.
	e.replace(t, "hello.txt", "changed by another process\n")
	if got := u.Next(t); got != e.uri("hello.txt") {
		t.Fatalf("update for %s, want hello.txt", got)
	}
	// Unsubscribed: a change to hello.txt sends nothing, as the sentinel,
	// changed after it, shows.
	must(t, c.Raw().Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: e.uri("hello.txt")}}))
	e.replace(t, "hello.txt", "after unsubscribe")
	e.replace(t, "sentinel", "s")
	if got := u.Next(t); got != e.uri("sentinel") {
		t.Errorf("after unsubscribe the next update is for %s, want the sentinel's", got)
	}

	// A change by the tool is reported by the tool itself and by the
	// kernel's event, for the URI subscribed to.
	sub("hello.txt")
	mcptest.OK(t, c.Call("file_write", map[string]any{"path": "hello.txt", "content": "by the tool"}), nil)
	u.Until(t, e.uri("hello.txt"))
	// Deleting a directory reports the subscribed files inside it.
	mcptest.OK(t, c.Call("file_delete", map[string]any{"path": "sub", "recursive": true}), nil)
	u.Until(t, e.uri("sub/nested.go"))
}

// TestFileResourceListen: a client on protocol 2026-07-28 opts in through
// subscriptions/listen and hears of a change made by another process.
func TestFileResourceListen(t *testing.T) {
	t.Parallel()
	e := newResEnv(t, nil, 0)
	c := connect(t, e.srv, "", false)
	acked := make(chan struct{}, 1)
	c.Raw().OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/subscriptions/acknowledged" {
			acked <- struct{}{}
		}
	})
	u := mcptest.ListenUpdates(c)
	stop, err := c.Raw().ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{e.uri("hello.txt")}}, nil)
	must(t, err)
	// Closing the stream is a notifications/cancelled the client sends in
	// the background; wait until the server has ended the stream, or the
	// test's shutdown would wait out the kit's grace period for it.
	defer func() {
		stop()
		deadline := time.Now().Add(10 * time.Second)
		for e.notifier.Subscribed(e.uri("hello.txt")) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}()
	select {
	case <-acked:
	case <-time.After(10 * time.Second):
		t.Fatal("subscriptions/listen was not acknowledged")
	}
	e.replace(t, "hello.txt", "changed")
	if got := u.Next(t); got != e.uri("hello.txt") {
		t.Fatalf("update for %s", got)
	}
}

// TestFileResourceWatchRefused: a subscription past the watch cap, or to a
// file whose directory does not exist, is refused with the reason.
func TestFileResourceWatchRefused(t *testing.T) {
	t.Parallel()
	e := newResEnv(t, nil, 1)
	c := connect(t, e.srv, "", true)
	ctx := context.Background()
	must(t, c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: e.uri("hello.txt")}}))
	err := c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: e.uri("data.json")}})
	if err == nil || !strings.Contains(err.Error(), "cannot watch more than 1 files") || !strings.Contains(err.Error(), "--watch-max-files") {
		t.Errorf("subscribe past the cap: %v", err)
	}
	must(t, c.Raw().Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: e.uri("hello.txt")}}))
	err = c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: e.uri("nodir/x.txt")}})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("subscribe in a missing directory: %v", err)
	}
	err = c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: tools.FileURI(filepath.Join(e.outside, "secret.txt"))}})
	if err == nil || !strings.Contains(err.Error(), "outside the allowed roots") {
		t.Errorf("subscribe outside the roots: %v", err)
	}
	if n := e.w.Len(); n != 0 {
		t.Errorf("%d files watched after refusals", n)
	}
	// With room again, the subscription works.
	must(t, c.Raw().Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: e.uri("data.json")}}))
}
