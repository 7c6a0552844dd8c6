package kit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// slowServer serves the test tools with "slow" waiting up to a minute, so
// that only a cancellation ends it.
func slowServer(t *testing.T, p *probe) *kit.Server {
	t.Helper()
	tools := testTools(p)
	tools[3].Timeout = time.Minute
	s, err := kit.New(kit.Info{Name: "t"}, tools, kit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rawPost is post for a goroutine: it reports failures instead of calling t.Fatal.
func rawPost(url, sid, body string) (status int, contentType, respBody string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+httpToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b), err
}

type rawResult struct {
	status      int
	contentType string
	body        string
	err         error
}

// TestHTTPCancelledRequestGetsNoAnswer: over streamable HTTP, a request the
// client cancels with notifications/cancelled is stopped and its POST ends
// as an event stream without the answer (a JSON-RPC answer would reach the
// client as a response to an unknown id). With a progress token the POST
// has already become an event stream carrying the progress notification. A
// cancellation sent on another session does not touch the request.
func TestHTTPCancelledRequestGetsNoAnswer(t *testing.T) {
	t.Run("plain", func(t *testing.T) { cancelOverHTTP(t, false) })
	t.Run("after progress", func(t *testing.T) { cancelOverHTTP(t, true) })
}

func cancelOverHTTP(t *testing.T, progress bool) {
	pr := &probe{started: make(chan struct{})}
	s := slowServer(t, pr)
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
	sid := initSession(t, base, httpToken)
	other := initSession(t, base, httpToken)
	params := `{"name":"slow","arguments":{}}`
	if progress {
		params = `{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}`
	}
	call := rpcCall(5, "tools/call", params)
	cancel5 := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`

	done := make(chan rawResult, 1)
	go func() {
		st, ct, b, err := rawPost(base+"/mcp", sid, call)
		done <- rawResult{st, ct, b, err}
	}()
	<-pr.started
	if r := post(t, base, httpToken, other, cancel5); r.Status != http.StatusAccepted {
		t.Fatalf("cancellation on another session: %d", r.Status)
	}
	select {
	case r := <-done:
		t.Fatalf("a cancellation on another session ended the call: %+v", r)
	case <-time.After(150 * time.Millisecond):
	}
	if r := post(t, base, httpToken, sid, cancel5); r.Status != http.StatusAccepted {
		t.Fatalf("cancellation: %d %s", r.Status, r.Body)
	}
	var r rawResult
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call's POST did not end")
	}
	waitCancelled(t, pr)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.status != http.StatusOK || !strings.HasPrefix(r.contentType, "text/event-stream") || strings.Contains(r.body, `"id":5`) {
		t.Fatalf("cancelled call: status %d, content type %q, body %q; want an event stream without the answer", r.status, r.contentType, r.body)
	}
	if progress != strings.Contains(r.body, `"notifications/progress"`) {
		t.Fatalf("progress %v, body %q", progress, r.body)
	}
	if got := post(t, base, httpToken, sid, rpcCall(6, "ping", "")); got.Status != http.StatusOK || got.Msg["result"] == nil {
		t.Fatalf("ping after the cancellation: %d %s", got.Status, got.Body)
	}
	// A call that is not cancelled is answered as before.
	if got := post(t, base, httpToken, sid, rpcCall(7, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)); got.Msg["result"] == nil {
		t.Fatalf("echo: %d %s", got.Status, got.Body)
	}
}

// TestHTTPSessionHeaderRequired: without Mcp-Session-Id, requests other than
// initialize get 400 ("Servers that require a session ID SHOULD respond to
// requests without an MCP-Session-Id header (other than initialization)
// with HTTP 400 Bad Request"); 404 is kept for unknown or ended sessions,
// which tells a client to initialize again. DELETE follows the same rules.
func TestHTTPSessionHeaderRequired(t *testing.T) {
	s := newServer(t, kit.Options{})
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken})
	for _, body := range []string{rpcCall(1, "tools/list", ""), rpcCall(2, "ping", ""), `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		if r := post(t, base, httpToken, "", body); r.Status != http.StatusBadRequest || r.errorCode() != -32600 {
			t.Fatalf("%s without a session: %d %s, want 400", body, r.Status, r.Body)
		}
	}
	if r := post(t, base, httpToken, "mcp-session-made-up", rpcCall(3, "tools/list", "")); r.Status != http.StatusNotFound {
		t.Fatalf("unknown session: %d, want 404", r.Status)
	}
	if r := do(t, http.MethodDelete, base+"/mcp", httpToken, "", "", nil); r.Status != http.StatusBadRequest {
		t.Fatalf("DELETE without a session: %d, want 400", r.Status)
	}
	if r := do(t, http.MethodDelete, base+"/mcp", httpToken, "mcp-session-made-up", "", nil); r.Status != http.StatusNotFound {
		t.Fatalf("DELETE of an unknown session: %d, want 404", r.Status)
	}
	sid := initSession(t, base, httpToken)
	if r := do(t, http.MethodDelete, base+"/mcp", httpToken, sid, "", nil); r.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	if r := do(t, http.MethodDelete, base+"/mcp", httpToken, sid, "", nil); r.Status != http.StatusNotFound {
		t.Fatalf("second DELETE: %d, want 404", r.Status)
	}
}

// TestSSECancelledRequestGetsNoAnswer: the same over the 2024-11-05 SSE
// transport, where answers travel on the event stream.
func TestSSECancelledRequestGetsNoAnswer(t *testing.T) {
	pr := &probe{started: make(chan struct{})}
	s := slowServer(t, pr)
	base := startHTTP(t, s, kit.HTTPOptions{AuthToken: httpToken, SSE: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp := openEventStream(ctx, t, base+"/sse", httpToken, "")
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case d, ok := <-events:
			if !ok {
				t.Fatal("the event stream ended")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("event %q is not JSON", d)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		return nil
	}
	_, query, ok := strings.Cut(strings.TrimSpace(<-events), "?")
	if !ok {
		t.Fatal("no endpoint event")
	}
	msgURL := base + "/message?" + query
	send := func(body string) {
		t.Helper()
		if r := do(t, http.MethodPost, msgURL, httpToken, "", body, nil); r.Status != http.StatusAccepted {
			t.Fatalf("POST %s: %d %s", body, r.Status, r.Body)
		}
	}
	send(rpcCall(1, "initialize", `{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`))
	if m := next(); m["id"] != float64(1) {
		t.Fatalf("initialize answer: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(rpcCall(2, "tools/call", `{"name":"slow","arguments":{}}`))
	<-pr.started
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	waitCancelled(t, pr)
	send(rpcCall(3, "ping", ""))
	if m := next(); m["id"] != float64(3) {
		t.Fatalf("want no answer to the cancelled call 2, only to ping 3; got %v", m)
	}
	send(rpcCall(4, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`))
	if m := next(); m["id"] != float64(4) || m["result"] == nil {
		t.Fatalf("echo after the cancellation: %v", m)
	}
}
