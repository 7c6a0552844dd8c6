package kit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source for the session table.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newTestSessions(max int, idle time.Duration) (*sessions, *clock) {
	c := &clock{t: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}
	s := newSessions(max, idle)
	s.now = c.now
	return s, c
}

func TestSessionIDs(t *testing.T) {
	s, _ := newTestSessions(0, 0)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		id := s.generate("a")
		if !strings.HasPrefix(id, sessionPrefix) || len(id) != len(sessionPrefix)+32 {
			t.Fatalf("session id %q: want %s + 32 hex digits", id, sessionPrefix)
		}
		if seen[id] {
			t.Fatalf("duplicate session id %q", id)
		}
		seen[id] = true
	}
	if s.count() != 50 {
		t.Fatalf("count %d", s.count())
	}
}

func TestSessionBoundToAgent(t *testing.T) {
	s, _ := newTestSessions(0, time.Minute)
	id := s.generate("reader")
	if term, err := s.validate(id, "reader", false); term || err != nil {
		t.Fatalf("owner: terminated=%v err=%v", term, err)
	}
	if _, err := s.validate(id, "writer", false); !errors.Is(err, errSessionUnknown) {
		t.Fatalf("other agent: err %v, want errSessionUnknown", err)
	}
	if _, err := s.validate(id, "", false); !errors.Is(err, errSessionUnknown) {
		t.Fatalf("no agent: err %v", err)
	}
	if term, err := s.validate(id, "writer", true); term || err != nil {
		t.Fatalf("anyAgent (mcp-go's sweeper): terminated=%v err=%v", term, err)
	}
	if _, err := s.validate("mcp-session-unknown", "reader", false); !errors.Is(err, errSessionUnknown) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := s.validate("", "reader", false); !errors.Is(err, errSessionUnknown) {
		t.Fatalf("empty id: %v", err)
	}

	// Terminate: another agent may not, the owner may.
	if notAllowed, err := s.terminate(id, "writer", false); !notAllowed || err != nil {
		t.Fatalf("foreign terminate: notAllowed=%v err=%v", notAllowed, err)
	}
	if s.count() != 1 {
		t.Fatal("a foreign terminate removed the session")
	}
	if notAllowed, err := s.terminate(id, "reader", false); notAllowed || err != nil {
		t.Fatalf("owner terminate: notAllowed=%v err=%v", notAllowed, err)
	}
	if term, err := s.validate(id, "reader", false); !term || err != nil {
		t.Fatalf("after terminate: terminated=%v err=%v, want terminated", term, err)
	}
	if notAllowed, err := s.terminate(id, "reader", false); notAllowed || err != nil {
		t.Fatalf("second terminate: notAllowed=%v err=%v", notAllowed, err)
	}
	if notAllowed, err := s.terminate("mcp-session-unknown", "x", false); notAllowed || err != nil {
		t.Fatalf("terminate unknown: notAllowed=%v err=%v", notAllowed, err)
	}
	other := s.generate("writer")
	if notAllowed, _ := s.terminate(other, "", true); notAllowed || s.count() != 0 {
		t.Fatalf("anyAgent terminate: notAllowed=%v count=%d", notAllowed, s.count())
	}
}

func TestSessionIdleExpiry(t *testing.T) {
	s, clk := newTestSessions(0, time.Minute)
	id := s.generate("a")
	clk.advance(50 * time.Second)
	if _, err := s.validate(id, "a", false); err != nil {
		t.Fatalf("within idle time: %v", err)
	}
	// Use refreshed lastSeen: 50s more is still within a minute of the last use.
	clk.advance(50 * time.Second)
	if _, err := s.validate(id, "a", false); err != nil {
		t.Fatalf("activity did not extend the session: %v", err)
	}
	clk.advance(time.Minute + time.Second)
	term, err := s.validate(id, "a", false)
	if err != nil || !term {
		t.Fatalf("expired session: terminated=%v err=%v, want terminated", term, err)
	}
	if s.count() != 0 {
		t.Fatalf("expired session still counted")
	}
	// The "terminated" answer is remembered for an hour, then forgotten.
	clk.advance(2 * time.Hour)
	s.sweepLocked(clk.now())
	if _, err := s.validate(id, "a", false); !errors.Is(err, errSessionUnknown) {
		t.Fatalf("long-gone session: %v, want errSessionUnknown", err)
	}
}

func TestSessionIdleZeroNeverExpires(t *testing.T) {
	s, clk := newTestSessions(1, 0)
	id := s.generate("a")
	clk.advance(1000 * time.Hour)
	if term, err := s.validate(id, "a", false); term || err != nil {
		t.Fatalf("terminated=%v err=%v", term, err)
	}
	if s.hasRoom() {
		t.Fatal("an idle session without expiry must keep its place")
	}
}

func TestSessionCap(t *testing.T) {
	s, clk := newTestSessions(2, time.Minute)
	if !s.hasRoom() {
		t.Fatal("empty table has no room")
	}
	a := s.generate("a")
	if !s.hasRoom() {
		t.Fatal("one of two used, no room")
	}
	clk.advance(30 * time.Second)
	b := s.generate("b")
	if s.hasRoom() {
		t.Fatal("full table reports room")
	}
	// a expires first; b is still fresh.
	clk.advance(31 * time.Second)
	if !s.hasRoom() {
		t.Fatal("an expired session did not free its place")
	}
	if s.count() != 1 {
		t.Fatalf("count %d after sweep, want 1", s.count())
	}
	if term, _ := s.validate(a, "a", false); !term {
		t.Fatal("the swept session should answer terminated")
	}
	if term, err := s.validate(b, "b", false); term || err != nil {
		t.Fatalf("fresh session swept: %v %v", term, err)
	}
	s.generate("c")
	if s.hasRoom() {
		t.Fatal("full again, yet room reported")
	}

	unlimited, _ := newTestSessions(0, 0)
	for i := 0; i < 100; i++ {
		unlimited.generate("a")
	}
	if !unlimited.hasRoom() {
		t.Fatal("MaxSessions 0 means no limit")
	}
}

func TestResolveSessionIdManager(t *testing.T) {
	s, _ := newTestSessions(0, 0)
	req := httptest.NewRequest("POST", "/mcp", nil)
	req = req.WithContext(WithAgent(context.Background(), "reader"))
	mgr := s.ResolveSessionIdManager(req)
	id := mgr.Generate()
	if term, err := mgr.Validate(id); term || err != nil {
		t.Fatalf("own session: %v %v", term, err)
	}
	other := s.ResolveSessionIdManager(httptest.NewRequest("POST", "/mcp", nil).WithContext(WithAgent(context.Background(), "writer")))
	if _, err := other.Validate(id); err == nil {
		t.Fatal("another agent's manager validated the session")
	}
	if notAllowed, _ := other.Terminate(id); !notAllowed {
		t.Fatal("another agent's manager may terminate the session")
	}
	sweeper := s.ResolveSessionIdManager(nil)
	if _, err := sweeper.Validate(id); err != nil {
		t.Fatalf("sweeper (nil request) must see every session: %v", err)
	}
	if notAllowed, err := sweeper.Terminate(id); notAllowed || err != nil {
		t.Fatalf("sweeper terminate: %v %v", notAllowed, err)
	}
	if term, _ := mgr.Validate(id); !term {
		t.Fatal("session not terminated")
	}
}

// TestSessionReservations: a slot held for an initialize in progress counts
// against the limit until its session is generated or the slot released.
func TestSessionReservations(t *testing.T) {
	s, _ := newTestSessions(2, time.Minute)
	r1, r2 := s.reserve(), s.reserve()
	if r1 == nil || r2 == nil {
		t.Fatal("two slots of two should be reservable")
	}
	if s.reserve() != nil || s.hasRoom() {
		t.Fatal("a third reservation past the limit")
	}
	s.generateFor("a", r1)
	s.release(r1) // already used: no effect
	if s.reserve() != nil {
		t.Fatal("one session and one reservation fill two slots")
	}
	s.release(r2)
	s.release(r2) // twice: no effect
	r3 := s.reserve()
	if r3 == nil || s.reserve() != nil {
		t.Fatal("a released slot should be reservable exactly once")
	}
	s.generateFor("b", r3)
	if s.count() != 2 || s.hasRoom() {
		t.Fatalf("count %d", s.count())
	}
}

// TestConcurrentInitializesRespectTheLimit: many initializes at once never
// create more sessions than MaxSessions.
func TestConcurrentInitializesRespectTheLimit(t *testing.T) {
	srv, err := New(Info{Name: "t"}, []Tool{{Name: "noop", Description: "x", InputSchema: []byte(`{"type":"object"}`),
		Effect: ReadOnly, Handler: func(context.Context, *Call) (any, error) { return "ok", nil }}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, shutdown, err := srv.HTTPHandler(HTTPOptions{Addr: "127.0.0.1:0", AuthToken: "token-0123456789abcdef", MaxSessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(context.Background()) }()
	const n = 12
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer token-0123456789abcdef")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			codes <- rec.Code
		})
	}
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		if c == http.StatusOK {
			ok++
		}
	}
	if ok != 3 {
		t.Fatalf("%d initializes succeeded with MaxSessions=3", ok)
	}
}
