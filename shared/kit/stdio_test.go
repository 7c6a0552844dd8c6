package kit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
)

// stdioPeer runs ServeStdio on pipes and reads its stdout line by line.
type stdioPeer struct {
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func startStdioPeer(t *testing.T, s *kit.Server, agent string) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	p.out.Buffer(make([]byte, 1<<20), 1<<20)
	go func() { p.done <- s.ServeStdio(context.Background(), agent, inR, outW); _ = outW.Close() }()
	t.Cleanup(func() { _ = inW.Close() })
	return p
}

func (p *stdioPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioPeer) recv(t *testing.T) map[string]any {
	t.Helper()
	if !p.out.Scan() {
		t.Fatalf("no response: %v", p.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
		t.Fatalf("stdout line is not JSON: %q", p.out.Text())
	}
	return m
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestStdioTransport(t *testing.T) {
	s := newServer(t, kit.Options{})
	p := startStdioPeer(t, s, "")

	p.send(t, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if m := p.recv(t); m["error"] == nil || !strings.Contains(m["error"].(map[string]any)["message"].(string), "not initialized") {
		t.Fatalf("tools/list before initialize: %v", m)
	}
	p.send(t, initLine)
	if m := p.recv(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	p.send(t, `{not json`)
	if m := p.recv(t); m["error"].(map[string]any)["code"].(float64) != -32700 {
		t.Fatalf("parse error: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":"x","result":{}}`) // a stray client response is ignored
	p.send(t, "")                                       // and so is an empty line
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	m := p.recv(t)
	if m["id"].(float64) != 2 {
		t.Fatalf("response id: %v", m)
	}
	res := m["result"].(map[string]any)
	if res["isError"] == true || res["structuredContent"].(map[string]any)["text"] != "hi" {
		t.Fatalf("tools/call: %v", m)
	}

	// A call that is still running when stdin closes is cancelled, and
	// ServeStdio returns.
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	_ = p.in.Close()
	go func() {
		for p.out.Scan() { // the cancelled call's answer may still be written
		}
	}()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return after stdin closed")
	}
}

// TestStdioCancellation: notifications/cancelled stops the handler, and the
// cancelled request gets no answer ("Receivers of cancellation notifications
// SHOULD … not send a response for the cancelled request"; the TypeScript
// SDK reports one as an error). The next request is answered as usual.
func TestStdioCancellation(t *testing.T) {
	pr := &probe{}
	s := slowServer(t, pr)
	p := startStdioPeer(t, s, "")
	p.send(t, initLine)
	p.recv(t)
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"tok"}}}`)
	// The handler reports progress first: a notification on stdout.
	if m := p.recv(t); m["method"] != "notifications/progress" {
		t.Fatalf("want a progress notification, got %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`)
	waitCancelled(t, pr)
	p.send(t, `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if m := p.recv(t); m["id"] != float64(6) || m["result"] == nil {
		t.Fatalf("want only the answer to ping 6, got %v", m)
	}

	// A string id is matched as a string; a cancellation naming a request
	// that is not running changes nothing.
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"6"}}`)
	p.send(t, `{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo","arguments":{"text":"after"}}}`)
	if m := p.recv(t); m["id"] != "7" || m["result"] == nil {
		t.Fatalf("echo after a stray cancellation: %v", m)
	}
}

// waitCancelled waits until the slow handler has seen its context end.
func waitCancelled(t *testing.T, pr *probe) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pr.mu.Lock()
		done := pr.cancelled
		pr.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the handler did not see the cancellation")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStdioLineTooLong(t *testing.T) {
	s := newServer(t, kit.Options{})
	p := startStdioPeer(t, s, "")
	big := strings.Repeat("x", budget.DefaultMaxMessageBytes+10)
	go func() { _, _ = io.WriteString(p.in, big+"\n") }()
	if m := p.recv(t); m["error"].(map[string]any)["code"].(float64) != -32600 || m["id"] != nil {
		t.Fatalf("oversized line: %v", m)
	}
	p.send(t, initLine)
	if m := p.recv(t); m["result"] == nil {
		t.Fatalf("the server should keep going after an oversized line: %v", m)
	}
}

// TestStdioStopsOnContextWithStdinOpen: a signal (ctx) ends ServeStdio even
// though the client keeps stdin open and a reader is blocked on it.
func TestStdioStopsOnContextWithStdinOpen(t *testing.T) {
	s := newServer(t, kit.Options{})
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, "", inR, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return after its context ended")
	}
}

// TestStdioConcurrentRequests: a slow call does not hold up the next one,
// and each answer carries its own id.
func TestStdioConcurrentRequests(t *testing.T) {
	p := &probe{started: make(chan struct{})}
	s := slowServer(t, p)
	peer := startStdioPeer(t, s, "")
	peer.send(t, initLine)
	peer.recv(t)
	peer.send(t, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-p.started
	for i := 11; i <= 13; i++ {
		peer.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	}
	seen := map[float64]bool{}
	for i := 11; i <= 13; i++ {
		seen[peer.recv(t)["id"].(float64)] = true
	}
	if !seen[11] || !seen[12] || !seen[13] {
		t.Fatalf("want the answers to 11, 12 and 13 while 10 still runs, got %v", seen)
	}
	peer.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`)
	waitCancelled(t, p)
	peer.send(t, `{"jsonrpc":"2.0","id":14,"method":"ping"}`)
	if m := peer.recv(t); m["id"].(float64) != 14 {
		t.Fatalf("want no answer to the cancelled call 10, only to ping 14; got %v", m)
	}
}

// TestStdioShutdownCancelsCallsInFlight: at a shutdown signal a stdio
// server cancels its calls in flight at once — its client is done with it —
// instead of letting them run out the grace period, and their error says
// why: the server is shutting down, not "cancelled by the client".
func TestStdioShutdownCancelsCallsInFlight(t *testing.T) {
	pr := &probe{}
	tools := testTools(pr)
	tools[3].Timeout = time.Minute
	s, err := kit.New(kit.Info{Name: "t"}, tools, kit.Options{Grace: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	p := &stdioPeer{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { p.done <- s.ServeStdio(ctx, "", inR, outW); _ = outW.Close() }()
	p.send(t, initLine)
	p.recv(t)
	p.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"tok"}}}`)
	if m := p.recv(t); m["method"] != "notifications/progress" {
		t.Fatalf("want a progress notification, got %v", m)
	}
	t0 := time.Now()
	stop()
	m := p.recv(t)
	if took := time.Since(t0); took > 5*time.Second {
		t.Fatalf("the call ran %v after the signal (grace 30s): not cancelled at once", took)
	}
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(5) || res["isError"] != true {
		t.Fatalf("answer to the call in flight: %v", m)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	if sc["code"] != "CANCELLED" || sc["message"] != "the server is shutting down" {
		t.Errorf("error %v, want CANCELLED: the server is shutting down", sc)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return after its calls were cancelled")
	}
}
