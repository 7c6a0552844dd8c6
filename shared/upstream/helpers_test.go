package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

// fakeClock makes backoff waits instantaneous and records them. It starts at
// the wall clock's current second, so that contexts with real deadlines and
// HTTP-dates (whole seconds) agree with it.
type fakeClock = retrytest.Clock

func newFakeClock() *fakeClock { return retrytest.NewClock(time.Now().Truncate(time.Second)) }

func equalDurations(t *testing.T, got []time.Duration, want ...time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("slept %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("slept %v, want %v", got, want)
		}
	}
}

// reply is one scripted answer of a fake upstream.
type reply struct {
	status int
	header map[string]string
	body   string
	// hang blocks until the client gives up on the request.
	hang bool
	// reset closes the connection without answering.
	reset bool
}

// seen is what the fake upstream recorded of one request.
type seen struct {
	method string
	url    string
	header http.Header
	body   string
}

// fakeUpstream is an httptest server that answers with a script of replies
// (then 200 "{}") and records every request that reached it.
type fakeUpstream struct {
	*httptest.Server
	mu      sync.Mutex
	script  []reply
	records []seen
}

func newFakeUpstream(t *testing.T, script ...reply) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{script: script}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	n := len(u.records)
	u.records = append(u.records, seen{method: r.Method, url: r.URL.String(), header: r.Header.Clone(), body: string(body)})
	rep := reply{status: http.StatusOK, body: "{}"}
	if n < len(u.script) {
		rep = u.script[n]
	}
	u.mu.Unlock()
	switch {
	case rep.hang:
		<-r.Context().Done()
		return
	case rep.reset:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST rather than FIN
			}
			conn.Close()
		}
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

func (u *fakeUpstream) hits() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.records)
}

func (u *fakeUpstream) seen() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.records...)
}

// testConfig is a valid Config with a fake clock and no jitter, so the
// default policy's delays are exactly 200ms, 400ms, 800ms.
func testConfig(clock *fakeClock) Config {
	return Config{
		Name: "avinode", Server: "avinode-mcp", Version: "1.2.3",
		Clock: clock,
		Rand:  func() float64 { return 0 },
	}
}

func newTestClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func do(t *testing.T, c *Client, ctx context.Context, method, url string, body io.Reader) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.HTTPClient().Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

// mustMCP asserts err maps to an *mcperr.Error of code with the given
// retry advice, and returns it.
func mustMCP(t *testing.T, name string, err error, code mcperr.Code, retryable bool) *mcperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", code)
	}
	e := FromError(name, err)
	if e.Code != code || e.Retryable() != retryable {
		t.Fatalf("FromError(%v) = %s retryable=%v (%q), want %s retryable=%v", err, e.Code, e.Retryable(), e.Message, code, retryable)
	}
	return e
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

var errBoom = errors.New("boom")

func TestFakeClockHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newFakeClock().Sleep(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a dead context = %v", err)
	}
}

var _ retry.Clock = (*fakeClock)(nil)

func ExampleFromStatus() {
	e := FromStatus("gmail", http.StatusForbidden, nil, RateLimited(), Detail("userRateLimitExceeded"))
	fmt.Println(e.Code, e.Retryable())
	fmt.Println(e.Message)
	// Output:
	// RATE_LIMIT_ERROR true
	// upstream "gmail" is limiting the rate of requests (HTTP 403 Forbidden): userRateLimitExceeded
}
