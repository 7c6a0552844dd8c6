package retry

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

// fakeClock makes waits instantaneous and records them, so tests can assert
// the exact delays the code chose.
type fakeClock = retrytest.Clock

func newFakeClock() *fakeClock {
	return retrytest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// testPolicy has no jitter so delays are exact: 100ms, 200ms, 400ms, ...
func testPolicy(attempts int) Policy {
	return Policy{
		MaxAttempts:   attempts,
		BaseDelay:     100 * time.Millisecond,
		MaxDelay:      time.Second,
		Multiplier:    2,
		MaxRetryAfter: time.Minute,
	}
}

// roundTripFunc lets a test script what the network does.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trackedBody records whether it was read to the end and closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
	eof    atomic.Bool
}

func newTrackedBody(s string) *trackedBody { return &trackedBody{Reader: strings.NewReader(s)} }

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof.Store(true)
	}
	return n, err
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func response(req *http.Request, code int, body io.ReadCloser) *http.Response {
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: body, Request: req}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
