package kit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

// gate is a tool that holds its slot until released.
type gate struct {
	once    sync.Once
	release chan struct{}
	in      chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{}), in: make(chan struct{}, 100)} }

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) tool(max int) kit.Tool {
	return kit.Tool{Name: "hold", Description: "Hold a slot.", Effect: kit.ReadOnly, MaxConcurrent: max,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pad":{"type":"string"}}}`),
		Handler: func(ctx context.Context, c *kit.Call) (any, error) {
			g.in <- struct{}{}
			select {
			case <-g.release:
				return "done", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
}

func TestToolConcurrencyCap(t *testing.T) {
	g := newGate()
	defer g.open()
	s, err := kit.New(kit.Info{Name: "t"}, append(testTools(nil), g.tool(2)), kit.Options{Limits: kit.Limits{QueueWait: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcptest.NewInProcess(t, s, "")
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); mcptest.OK(t, c.Call("hold", nil), nil) }()
	}
	<-g.in
	<-g.in
	b := mcptest.FailCode(t, c.Call("hold", nil), mcperr.RateLimit)
	if !b.Data.Retryable || b.Data.RetryAfterSeconds == nil {
		t.Fatalf("refusal should be retryable with a wait: %+v", b)
	}
	// Other tools are not held up by a busy one.
	mcptest.OK(t, c.Call("echo", map[string]any{"text": "still served"}), nil)
	g.open()
	wg.Wait()
	mcptest.OK(t, c.Call("hold", nil), nil)
}

// budgetServer is a server whose byte budgets (one message, one session,
// all in flight) are 150 KiB, with the test tools and g's "hold".
func budgetServer(t *testing.T) (*kit.Server, *gate) {
	t.Helper()
	g := newGate()
	lim := kit.Limits{MaxMessageBytes: 150 << 10, MaxSessionBytes: 150 << 10, MaxInflightBytes: 150 << 10}
	s, err := kit.New(kit.Info{Name: "t"}, append(testTools(nil), g.tool(0)), kit.Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return s, g
}

func TestByteBudgetStdio(t *testing.T) {
	s, g := budgetServer(t)
	defer g.open()
	p := startStdioPeer(t, s, "")
	p.send(t, initLine)
	p.recv(t)
	big := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold","arguments":{"pad":"%s"}}}`, id, strings.Repeat("x", 100<<10))
	}
	p.send(t, big(1))
	<-g.in
	p.send(t, big(2)) // no budget left: refused at once, retryable
	m := p.recv(t)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != -32000.0 || m["id"] != 2.0 ||
		!strings.Contains(fmt.Sprint(e["data"]), "retryAfterSeconds") {
		t.Fatalf("over budget: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`) // small messages always pass
	if m := p.recv(t); m["id"] != 3.0 {
		t.Fatalf("ping: %v", m)
	}
	g.open()
	if m := p.recv(t); m["id"] != 1.0 {
		t.Fatalf("held call: %v", m)
	}
	p.send(t, big(4)) // the budget came back
	if m := p.recv(t); m["id"] != 4.0 || m["result"] == nil {
		t.Fatalf("after release: %v", m)
	}
}

func TestByteBudgetHTTP(t *testing.T) {
	s, g := budgetServer(t)
	defer g.open()
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
	sid := initSession(t, base, httpToken)
	body := rpcCall(5, "tools/call", `{"name":"hold","arguments":{"pad":"`+strings.Repeat("y", 100<<10)+`"}}`)
	done := make(chan httpResult, 1)
	go func() { done <- post(t, base, httpToken, sid, body) }()
	<-g.in
	r := post(t, base, httpToken, sid, body)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.errorCode() != -32000 {
		t.Fatalf("over budget: %d %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	g.open()
	if r := <-done; r.Status != http.StatusOK {
		t.Fatalf("held call: %d %s", r.Status, r.Body)
	}
}

func TestLimitsDefaults(t *testing.T) {
	// A session's share never exceeds the process's, and one message always
	// fits in a session's share.
	s, err := kit.New(kit.Info{Name: "t"}, testTools(nil), kit.Options{Limits: kit.Limits{MaxInflightBytes: 1 << 20, MaxMessageBytes: 8 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	p := startStdioPeer(t, s, "")
	p.send(t, strings.Repeat(" ", 2<<20)+`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if m := p.recv(t); m["error"] == nil || !strings.Contains(fmt.Sprint(m), "longer than 1048576") {
		t.Fatalf("message over the clamped cap: %v", m)
	}
}
