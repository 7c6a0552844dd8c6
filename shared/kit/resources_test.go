package kit_test

//lint:file-ignore SA1019 the 2025-11-25 protocol era (initialize, subscribe, setLevel, ping) is what these tests cover beside 2026-07-28

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// notes is a tiny resource backend: text notes by id, with watches counted.
type notes struct {
	mu      sync.Mutex
	text    map[string]string
	watches map[string]int
	n       *kit.Notifier
}

func newNotes() *notes {
	return &notes{text: map[string]string{"a": "first note", "b": "second note"}, watches: map[string]int{}, n: kit.NewNotifier()}
}

func (nb *notes) set(id, text string) {
	nb.mu.Lock()
	nb.text[id] = text
	nb.mu.Unlock()
	nb.n.Updated("notes://" + id)
}

func (nb *notes) watching(id string) int {
	nb.mu.Lock()
	defer nb.mu.Unlock()
	return nb.watches[id]
}

func (nb *notes) options(policy *acl.Policy) kit.Options {
	return kit.Options{Policy: policy, Notifier: nb.n,
		Resources: []kit.Resource{{URI: "notes://index", Name: "index", MIMEType: "text/plain", Description: "All note ids.",
			Tools: []string{"echo"},
			Read: func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) {
				return []kit.Contents{{Text: "a\nb"}}, nil
			}}},
		Templates: []kit.ResourceTemplate{{URITemplate: "notes://{id}", Name: "note", MIMEType: "text/plain",
			Description: "One note.", Tools: []string{"write"},
			Read: func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) {
				nb.mu.Lock()
				defer nb.mu.Unlock()
				t, ok := nb.text[r.Vars["id"]]
				if !ok {
					return nil, mcperr.New(mcperr.NotFound, "no note %q", r.Vars["id"])
				}
				if r.Vars["id"] == "bin" {
					return []kit.Contents{{MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}}, nil
				}
				return []kit.Contents{{Text: t}}, nil
			},
			List: func(ctx context.Context, agent string) ([]kit.ResourceInfo, error) {
				return []kit.ResourceInfo{{URI: "notes://a", Name: "a"}, {URI: "notes://b", Name: "b"}}, nil
			},
			Watch: func(uri string, vars map[string]string) (func(), error) {
				if vars["id"] == "unwatchable" {
					return nil, fmt.Errorf("cannot watch that")
				}
				nb.mu.Lock()
				nb.watches[vars["id"]]++
				nb.mu.Unlock()
				return func() {
					nb.mu.Lock()
					nb.watches[vars["id"]]--
					nb.mu.Unlock()
				}, nil
			},
		}},
	}
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// updates collects notifications/resources/updated a client receives.
type updates struct {
	mu   sync.Mutex
	uris []string
	meta []map[string]any
}

func (u *updates) hook(c *client.Client) {
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/resources/updated" {
			return
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		u.uris = append(u.uris, fmt.Sprint(n.Params.AdditionalFields["uri"]))
		if n.Params.Meta != nil {
			u.meta = append(u.meta, n.Params.Meta)
		}
	})
}

func (u *updates) count(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, x := range u.uris {
		if x == uri {
			n++
		}
	}
	return n
}

func TestResourcesListReadAndACL(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			nb := newNotes()
			s, err := kit.New(kit.Info{Name: "test"}, testTools(nil), nb.options(mustPolicy(t)))
			if err != nil {
				t.Fatal(err)
			}
			var opts []client.ClientOption
			if legacy {
				opts = append(opts, client.WithLegacyProtocolOnly())
			}
			writer := mcptest.NewInProcess(t, s, "writer", opts...).Raw()
			reader := mcptest.NewInProcess(t, s, "reader", opts...).Raw()
			ctx := ctx10(t)

			list, err := writer.ListResources(ctx, mcp.ListResourcesRequest{})
			if err != nil || len(list.Resources) != 3 {
				t.Fatalf("writer resources/list: %v %+v", err, list)
			}
			tl, err := writer.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate.Raw() != "notes://{id}" {
				t.Fatalf("templates: %v %+v", err, tl)
			}
			req := mcp.ReadResourceRequest{}
			req.Params.URI = "notes://a"
			rr, err := writer.ReadResource(ctx, req)
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].(mcp.TextResourceContents).Text != "first note" ||
				rr.Contents[0].(mcp.TextResourceContents).URI != "notes://a" {
				t.Fatalf("read: %v %+v", err, rr)
			}

			// reader may call echo (the index's family) but not write (the notes').
			list, err = reader.ListResources(ctx, mcp.ListResourcesRequest{})
			if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != "notes://index" {
				t.Fatalf("reader resources/list: %v %+v", err, list)
			}
			tl, _ = reader.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if len(tl.ResourceTemplates) != 0 {
				t.Fatalf("reader sees templates: %+v", tl)
			}
			_, errDenied := reader.ReadResource(ctx, req)
			req.Params.URI = "notes://missing"
			_, errMissing := writer.ReadResource(ctx, req)
			if errDenied == nil || errMissing == nil || errDenied.Error() != strings.Replace(errMissing.Error(), "notes://missing", "notes://a", 1) {
				t.Fatalf("a denied read must look exactly like a missing one:\n denied:  %v\n missing: %v", errDenied, errMissing)
			}
		})
	}
}

// TestResourceNotFoundCodes: before 2026-07-28 a missing resource is -32002;
// from 2026-07-28 it is -32602; both carry the URI in data.
func TestResourceNotFoundCodes(t *testing.T) {
	nb := newNotes()
	s, err := kit.New(kit.Info{Name: "test"}, testTools(nil), nb.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	legacy := string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://zz"}}`)))
	modern := string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"other://x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)))
	if !strings.Contains(legacy, `"code":-32002`) || !strings.Contains(legacy, `"data":{"uri":"notes://zz"}`) {
		t.Fatalf("legacy: %s", legacy)
	}
	if !strings.Contains(modern, `"code":-32602`) || !strings.Contains(modern, `"data":{"uri":"other://x"}`) {
		t.Fatalf("modern: %s", modern)
	}
	bin := string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"notes://bin"}}`)))
	if !strings.Contains(bin, `"contents":[{"uri":"notes://zz"`) && !strings.Contains(bin, "Resource not found") {
		t.Logf("bin: %s", bin)
	}
	cacheable := string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)))
	for _, want := range []string{`"resultType":"complete"`, `"ttlMs":0`, `"cacheScope":"private"`, `"io.modelcontextprotocol/serverInfo":{"name":"test"`} {
		if !strings.Contains(cacheable, want) {
			t.Errorf("modern resources/list lacks %s: %s", want, cacheable)
		}
	}
}

// TestResourceSubscriptionsStdio: a subscribed client hears of each change,
// a template's Watch runs for the first subscriber and stops after the last,
// and updates stop after unsubscribe.
func TestResourceSubscriptionsStdio(t *testing.T) {
	nb := newNotes()
	s, err := kit.New(kit.Info{Name: "test"}, testTools(nil), nb.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "", client.WithLegacyProtocolOnly()).Raw()
	var u updates
	u.hook(c)
	ctx := ctx10(t)
	sub := mcp.SubscribeRequest{}
	sub.Params.URI = "notes://a"
	if err := c.Subscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if nb.watching("a") != 1 {
		t.Fatalf("watch not started: %d", nb.watching("a"))
	}
	nb.set("a", "changed")
	nb.set("b", "not subscribed")
	mcptest.WaitFor(t, "the update of notes://a", func() bool { return u.count("notes://a") >= 1 })
	if u.count("notes://b") != 0 {
		t.Fatal("an update for an unsubscribed URI arrived")
	}
	bad := mcp.SubscribeRequest{}
	bad.Params.URI = "notes://unwatchable"
	if err := c.Subscribe(ctx, bad); err == nil || !strings.Contains(err.Error(), "cannot watch that") {
		t.Fatalf("a refused watch must refuse the subscription: %v", err)
	}
	bad.Params.URI = "elsewhere://x"
	if err := c.Subscribe(ctx, bad); err == nil {
		t.Fatal("subscribing to no resource succeeded")
	}
	unsub := mcp.UnsubscribeRequest{}
	unsub.Params.URI = "notes://a"
	if err := c.Unsubscribe(ctx, unsub); err != nil {
		t.Fatal(err)
	}
	if nb.watching("a") != 0 {
		t.Fatalf("watch not stopped after the last subscriber left: %d", nb.watching("a"))
	}
	before := u.count("notes://a")
	nb.set("a", "again")
	if err := c.Ping(ctx); err != nil { // a round trip after the change
		t.Fatal(err)
	}
	if u.count("notes://a") != before {
		t.Fatal("an update arrived after unsubscribe")
	}
}

// TestListenModern: subscriptions/listen acknowledges what it can deliver
// (only resources the caller may read), then streams tagged updates.
func TestListenModern(t *testing.T) {
	nb := newNotes()
	s, err := kit.New(kit.Info{Name: "test"}, testTools(nil), nb.options(mustPolicy(t)))
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "writer").Raw()
	var u updates
	u.hook(c)
	stop, err := c.ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{"notes://a", "nowhere://x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	mcptest.WaitFor(t, "the watch of notes://a", func() bool { return nb.watching("a") == 1 })
	nb.set("a", "changed")
	mcptest.WaitFor(t, "the tagged update", func() bool { return u.count("notes://a") >= 1 })
	u.mu.Lock()
	tagged := len(u.meta) > 0 && u.meta[0]["io.modelcontextprotocol/subscriptionId"] != nil
	u.mu.Unlock()
	if !tagged {
		t.Fatalf("listen-stream update not tagged with its subscription id: %+v", u.meta)
	}
	stop()
	mcptest.WaitFor(t, "the watch to stop when the stream ends", func() bool { return nb.watching("a") == 0 })

	// reader may not read notes: its listen stream establishes nothing.
	raw := s.Handle(context.Background(), "reader", []byte(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["notes://a"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if !strings.Contains(string(raw), `"io.modelcontextprotocol/subscriptionId":5`) {
		t.Fatalf("empty listen should close at once with its result: %s", raw)
	}
	if nb.watching("a") != 0 {
		t.Fatal("a denied agent started a watch")
	}
}

// TestNotifierBurstKeepsFinalState: 10 000 updates to 100 URIs while the
// subscriber does not read lose no URI's last update, and what waits stays
// one entry per URI.
func TestNotifierBurstKeepsFinalState(t *testing.T) {
	nb := newNotes()
	opts := nb.options(nil)
	for i := 0; i < 100; i++ {
		nb.text[fmt.Sprint("n", i)] = ""
	}
	s, err := kit.New(kit.Info{Name: "test"}, testTools(nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	p := startStdioPeer(t, s, "")
	p.send(t, initLine)
	p.recv(t)
	for i := 0; i < 100; i++ {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":"notes://n%d"}}`, 100+i, i))
		if m := p.recv(t); m["result"] == nil {
			t.Fatalf("subscribe: %v", m)
		}
	}
	// The peer reads nothing while 10 000 updates are made.
	for i := 0; i < 10_000; i++ {
		nb.set(fmt.Sprint("n", i%100), fmt.Sprint(i))
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 100 && time.Now().Before(deadline) {
		m := p.recv(t)
		if m["method"] == "notifications/resources/updated" {
			seen[m["params"].(map[string]any)["uri"].(string)] = true
		}
	}
	if len(seen) != 100 {
		t.Fatalf("updates arrived for %d of 100 URIs", len(seen))
	}
	if d := s.Engine().Metrics().Events()["notifications_dropped"]; d != 0 {
		t.Fatalf("%d notifications dropped; coalescing should have kept them", d)
	}
}

func TestResourceDefinitionsChecked(t *testing.T) {
	read := func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) { return nil, nil }
	for name, o := range map[string]kit.Options{
		"no name":        {Resources: []kit.Resource{{URI: "a://b", Read: read}}},
		"no reader":      {Resources: []kit.Resource{{URI: "a://b", Name: "b"}}},
		"duplicate":      {Resources: []kit.Resource{{URI: "a://b", Name: "b", Read: read}, {URI: "a://b", Name: "c", Read: read}}},
		"bad template":   {Templates: []kit.ResourceTemplate{{URITemplate: "a://{b", Name: "t", Read: read}}},
		"adjacent exprs": {Templates: []kit.ResourceTemplate{{URITemplate: "a://{b}{c}", Name: "t", Read: read}}},
		"bad expr":       {Templates: []kit.ResourceTemplate{{URITemplate: "a://{b-c}", Name: "t", Read: read}}},
		"name twice":     {Resources: []kit.Resource{{URI: "a://b", Name: "t", Read: read}}, Templates: []kit.ResourceTemplate{{URITemplate: "a://{x}", Name: "t", Read: read}}},
	} {
		if _, err := kit.New(kit.Info{Name: "t"}, testTools(nil), o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestResourceContentsWireForm(t *testing.T) {
	b, _ := json.Marshal(kit.Contents{URI: "x://1", MIMEType: "application/octet-stream", Blob: []byte("hi")})
	if string(b) != `{"uri":"x://1","mimeType":"application/octet-stream","blob":"aGk="}` {
		t.Fatalf("blob: %s", b)
	}
	b, _ = json.Marshal(kit.Contents{URI: "x://2", Text: ""})
	if string(b) != `{"uri":"x://2","text":""}` {
		t.Fatalf("empty text: %s", b)
	}
}

func TestResourcesFollowToolSelection(t *testing.T) {
	nb := newNotes()
	o := nb.options(nil)
	o.Include = []string{"echo"} // the notes template's family (write) is not served
	s, err := kit.New(kit.Info{Name: "test"}, testTools(nil), o)
	if err != nil {
		t.Fatal(err)
	}
	out := string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`)))
	if strings.Contains(out, "notes://{id}") {
		t.Fatalf("a template whose tools are not served is still listed: %s", out)
	}
	if out := string(s.Handle(context.Background(), "", []byte(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`))); !strings.Contains(out, "notes://index") {
		t.Fatalf("the index (family echo) should stay: %s", out)
	}
}
