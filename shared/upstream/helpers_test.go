package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
