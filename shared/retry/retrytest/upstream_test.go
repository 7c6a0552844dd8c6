package retrytest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

func TestUpstreamScript(t *testing.T) {
	u := retrytest.NewUpstream(t,
		retrytest.Reply{Status: 503, Header: map[string]string{"Retry-After": "3"}, Body: "busy"},
		retrytest.Reply{Body: "ok"},
	)
	for _, want := range []struct {
		status     int
		retryAfter string
		body       string
	}{{503, "3", "busy"}, {200, "", "ok"}, {200, "", "{}"}, {200, "", "{}"}} {
		resp, err := http.Post(u.URL+"/book?x=1", "text/plain", strings.NewReader("payload"))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != want.status || resp.Header.Get("Retry-After") != want.retryAfter || string(body) != want.body {
			t.Fatalf("got %d %q %q (%v), want %+v", resp.StatusCode, resp.Header.Get("Retry-After"), body, err, want)
		}
	}
	if u.Hits() != 4 {
		t.Fatalf("Hits = %d, want 4", u.Hits())
	}
	for _, r := range u.Seen() {
		if r.Method != http.MethodPost || r.URL != "/book?x=1" || r.Body != "payload" || r.Header.Get("Content-Type") != "text/plain" {
			t.Fatalf("recorded %+v", r)
		}
	}
}

func TestUpstreamServe(t *testing.T) {
	u := retrytest.Serve(t, func(n int) retrytest.Reply {
		return retrytest.Reply{Status: 500 + n}
	})
	for n := range 3 {
		resp, err := http.Get(u.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 500+n {
			t.Fatalf("request %d: status %d", n, resp.StatusCode)
		}
	}
}

func TestUpstreamHangAndReset(t *testing.T) {
	u := retrytest.NewUpstream(t, retrytest.Reply{Hang: true}, retrytest.Reply{Reset: true})
	// The client gives up once the hanging reply has the request: the next
	// request is the second reply's, however slowly the first arrived.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a guard: cancelled long before
	defer cancel()
	go func() {
		for u.Hits() < 1 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("hang: %v, want the client's cancellation", err)
	}
	if _, err := http.Get(u.URL); err == nil {
		t.Fatal("reset: a response came")
	}
	if u.Hits() != 2 {
		t.Fatalf("Hits = %d, want 2", u.Hits())
	}
}

func TestClosedAddr(t *testing.T) {
	conn, err := net.Dial("tcp", retrytest.ClosedAddr(t))
	if err == nil {
		conn.Close()
		t.Fatal("something listens on the closed address")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial: %v, want connection refused", err)
	}
}
