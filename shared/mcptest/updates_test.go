package mcptest

import (
	"context"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

func TestUpdates(t *testing.T) {
	n := kit.NewNotifier()
	read := func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) {
		return []kit.Contents{{Text: r.Vars["id"]}}, nil
	}
	s, err := kit.New(kit.Info{Name: "notes"}, []kit.Tool{echoTool("echo", kit.ReadOnly)}, kit.Options{Notifier: n,
		Templates: []kit.ResourceTemplate{{URITemplate: "note://{id}", Name: "note", Description: "A note.", Read: read}}})
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 resources/subscribe needs a client of the 2025-11-25 era
	c := NewInProcess(t, s, "", client.WithLegacyProtocolOnly())
	u := ListenUpdates(c)
	const a, b, z = "note://a", "note://b", "note://z"
	for _, uri := range []string{a, b} {
		//lint:ignore SA1019 resources/subscribe is how the 2025-11-25 era subscribes
		if err := c.Raw().Subscribe(context.Background(), mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
			t.Fatal(err)
		}
	}
	WaitFor(t, "the subscriptions", func() bool { return n.Subscribed(a) && n.Subscribed(b) })

	n.Updated(a)
	u.Seen(t, a)
	if got := u.Next(t); got != a {
		t.Errorf("Next = %q, want %q", got, a)
	}
	n.Updated(z) // not subscribed: never arrives
	n.Updated(b)
	n.Updated(a)
	if before := u.Until(t, a); !slices.Equal(before, []string{b}) {
		t.Errorf("Until(a) passed %v, want [b]", before)
	}
	if got := u.All(); !slices.Equal(got, []string{a, b, a}) {
		t.Errorf("All = %v, want a, b, a", got)
	}
	u.Reset()
	if got := u.All(); len(got) != 0 {
		t.Errorf("after Reset: %v", got)
	}
	n.Updated(b)
	u.Seen(t, b)
	if got := u.Next(t); got != b {
		t.Errorf("Next after Reset = %q, want %q", got, b)
	}
}
