package retrytest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Reply is one scripted answer of an Upstream.
type Reply struct {
	// Status is the response's status; 0 is 200.
	Status int
	Header map[string]string
	Body   string
	// Hang blocks until the client gives up on the request.
	Hang bool
	// Reset closes the connection without answering.
	Reset bool
}

// Request is what an Upstream recorded of one request.
type Request struct {
	Method string
	// URL is the request's path and query, as the server saw it.
	URL    string
	Header http.Header
	Body   string
}

// Upstream is an httptest server that answers each request as its script
// says and records every request that reached it, so a test can script the
// failures a client must retry (or not) and count what was sent. Safe for
// concurrent use.
type Upstream struct {
	*httptest.Server
	reply func(n int) Reply
	mu    sync.Mutex
	seen  []Request
}

// NewUpstream starts an Upstream that answers with script, then 200 "{}".
// It is closed when the test ends.
func NewUpstream(t testing.TB, script ...Reply) *Upstream {
	t.Helper()
	return Serve(t, func(n int) Reply {
		if n < len(script) {
			return script[n]
		}
		return Reply{Body: "{}"}
	})
}

// Serve starts an Upstream that answers its n-th request (from 0) with
// reply(n). It is closed when the test ends.
func Serve(t testing.TB, reply func(n int) Reply) *Upstream {
	t.Helper()
	u := &Upstream{reply: reply}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	n := len(u.seen)
	u.seen = append(u.seen, Request{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: string(body)})
	u.mu.Unlock()
	rep := u.reply(n)
	switch {
	case rep.Hang:
		<-r.Context().Done()
		return
	case rep.Reset:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST rather than FIN
			}
			conn.Close()
		}
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status == 0 {
		rep.Status = http.StatusOK
	}
	w.WriteHeader(rep.Status)
	io.WriteString(w, rep.Body)
}

// Hits is how many requests reached the upstream.
func (u *Upstream) Hits() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.seen)
}

// Seen returns the requests so far, in the order they arrived.
func (u *Upstream) Seen() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.seen...)
}

// ClosedAddr returns a loopback address nothing listens on, so that dialing
// it fails with "connection refused" before any byte of a request is sent.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
