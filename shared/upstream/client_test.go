package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

func TestRetryAfterSecondsThenSuccess(t *testing.T) {
	clock := newFakeClock()
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 429, Header: map[string]string{"Retry-After": "7"}})
	c := newTestClient(t, testConfig(clock))
	resp, err := do(t, c, context.Background(), http.MethodGet, up.URL+"/flights", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v; want 200", resp, err)
	}
	if up.Hits() != 2 {
		t.Fatalf("upstream saw %d requests, want 2", up.Hits())
	}
	// The server asked for 7s, more than the 200ms backoff.
	clock.AssertSlept(t, 7*time.Second)
}

func TestRetryAfterHTTPDate(t *testing.T) {
	clock := newFakeClock()
	at := clock.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 503, Header: map[string]string{"Retry-After": at}})
	c := newTestClient(t, testConfig(clock))
	resp, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v; want 200", resp, err)
	}
	clock.AssertSlept(t, 3*time.Second)
}

func TestServiceUnavailableRetriedWithJitter(t *testing.T) {
	clock := newFakeClock()
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 503}, retrytest.Reply{Status: 502}, retrytest.Reply{Status: 504})
	cfg := testConfig(clock)
	// Default jitter is half of each delay; a draw of 0.5 takes a quarter off.
	cfg.Rand = func() float64 { return 0.5 }
	c := newTestClient(t, cfg)
	resp, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v; want 200", resp, err)
	}
	if up.Hits() != 4 {
		t.Fatalf("upstream saw %d requests, want 4", up.Hits())
	}
	clock.AssertSlept(t, 150*time.Millisecond, 300*time.Millisecond, 600*time.Millisecond)
}

func TestServerErrorOnGETRetriedUpToPolicy(t *testing.T) {
	clock := newFakeClock()
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 500}, retrytest.Reply{Status: 500}, retrytest.Reply{Status: 500}, retrytest.Reply{Status: 500})
	cfg := testConfig(clock)
	cfg.Retry = retry.Policy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond}
	c := newTestClient(t, cfg)
	req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL+"/aircraft", nil)
	err := c.DoJSON(req, nil)
	if up.Hits() != 3 {
		t.Fatalf("upstream saw %d requests, want 3 (the policy's MaxAttempts)", up.Hits())
	}
	clock.AssertSlept(t, 100*time.Millisecond, 200*time.Millisecond)
	e := mustMCP(t, "avinode", err, mcperr.Upstream, true)
	if !strings.Contains(e.Message, `"avinode"`) || !strings.Contains(e.Message, "HTTP 500") {
		t.Fatalf("message %q should name the upstream and the status", e.Message)
	}
}

func TestUnsafeRequestsNotResentAfterAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		status int
		mark   func(*http.Request) *http.Request
		hits   int
	}{
		{"POST 503", http.MethodPost, 503, nil, 1},
		{"POST 500", http.MethodPost, 500, nil, 1},
		{"POST 429", http.MethodPost, 429, nil, 1},
		{"PATCH 502", http.MethodPatch, 502, nil, 1},
		{"POST 503 with Idempotency-Key", http.MethodPost, 503, func(r *http.Request) *http.Request {
			r.Header.Set("Idempotency-Key", "k-1")
			return r
		}, 2},
		{"POST 503 marked idempotent", http.MethodPost, 503, func(r *http.Request) *http.Request {
			return r.WithContext(MarkIdempotent(r.Context()))
		}, 2},
		{"PUT 503", http.MethodPut, 503, nil, 2},
		{"DELETE 503", http.MethodDelete, 503, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := retrytest.NewUpstream(t, retrytest.Reply{Status: tc.status})
			c := newTestClient(t, testConfig(newFakeClock()))
			req, _ := NewJSONRequest(context.Background(), tc.method, up.URL+"/quotes", map[string]string{"tail": "N1"})
			if tc.mark != nil {
				req = tc.mark(req)
			}
			resp, err := c.HTTPClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if up.Hits() != tc.hits {
				t.Fatalf("upstream saw %d requests, want %d", up.Hits(), tc.hits)
			}
			for _, s := range up.Seen() {
				if s.Body != `{"tail":"N1"}` {
					t.Fatalf("attempt carried body %q", s.Body)
				}
			}
		})
	}
}

func TestPOSTTimeoutNotResent(t *testing.T) {
	up := retrytest.NewUpstream(t, retrytest.Reply{Hang: true}, retrytest.Reply{Hang: true})
	cfg := testConfig(newFakeClock())
	cfg.AttemptTimeout = 500 * time.Millisecond // room for the request to reach the upstream under load
	c := newTestClient(t, cfg)
	req, _ := NewJSONRequest(context.Background(), http.MethodPost, up.URL+"/bookings", map[string]int{"n": 1})
	err := c.DoJSON(req, nil)
	if up.Hits() > 1 {
		t.Fatalf("upstream saw %d requests, want 1: a POST that may have arrived must not be resent", up.Hits())
	}
	var e *mcperr.Error
	if !errors.As(err, &e) || e.Code != mcperr.Timeout || e.Retryable() {
		t.Fatalf("err = %v, want a non-retryable TIMEOUT_ERROR", err)
	}
	if !strings.Contains(e.Message, "POST request may still have been applied") {
		t.Fatalf("message %q should warn that the POST may have been applied", e.Message)
	}
	if c.BreakerState() != retry.StateClosed {
		t.Fatalf("one timeout must not open the circuit")
	}
}

func TestGETAttemptTimeoutRetried(t *testing.T) {
	clock := newFakeClock()
	up := retrytest.NewUpstream(t, retrytest.Reply{Hang: true})
	cfg := testConfig(clock)
	cfg.AttemptTimeout = 500 * time.Millisecond // room for the request to reach the upstream under load
	c := newTestClient(t, cfg)
	resp, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v; want 200 on the second attempt", resp, err)
	}
	if up.Hits() != 2 {
		t.Fatalf("upstream saw %d requests, want 2", up.Hits())
	}
	clock.AssertSlept(t, 200*time.Millisecond)
}

func TestConnectionReset(t *testing.T) {
	t.Run("GET retried", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Reset: true})
		c := newTestClient(t, testConfig(newFakeClock()))
		resp, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("got %v, %v; want 200 after the reset", resp, err)
		}
		if up.Hits() != 2 {
			t.Fatalf("upstream saw %d requests, want 2", up.Hits())
		}
	})
	t.Run("POST not resent", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Reset: true}, retrytest.Reply{Reset: true})
		c := newTestClient(t, testConfig(newFakeClock()))
		_, err := do(t, c, context.Background(), http.MethodPost, up.URL, strings.NewReader("x"))
		if up.Hits() != 1 {
			t.Fatalf("upstream saw %d requests, want 1", up.Hits())
		}
		e := mustMCP(t, "avinode", err, mcperr.Transport, false)
		if !strings.Contains(e.Message, "may have been applied") {
			t.Fatalf("message %q should warn that the POST may have been applied", e.Message)
		}
	})
}

func TestPOSTDialFailureRetried(t *testing.T) {
	up := retrytest.NewUpstream(t)
	dead := retrytest.ClosedAddr(t)
	c := newTestClient(t, testConfig(newFakeClock()))
	var dials atomic.Int32
	d := &net.Dialer{}
	c.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			addr = dead // a real refused connection: the request never left
		}
		return d.DialContext(ctx, network, addr)
	}
	req, _ := NewJSONRequest(context.Background(), http.MethodPost, up.URL+"/bookings", map[string]int{"n": 1})
	var out map[string]any
	if err := c.DoJSON(req, &out); err != nil {
		t.Fatalf("DoJSON: %v", err)
	}
	if dials.Load() != 2 || up.Hits() != 1 {
		t.Fatalf("dials=%d hits=%d, want a second dial and exactly one delivery", dials.Load(), up.Hits())
	}
}

func TestConnectionRefusedEveryAttempt(t *testing.T) {
	clock := newFakeClock()
	c := newTestClient(t, testConfig(clock))
	req, _ := NewJSONRequest(context.Background(), http.MethodPost, "http://"+retrytest.ClosedAddr(t)+"/x", map[string]int{})
	err := c.DoJSON(req, nil)
	e := mustMCP(t, "avinode", err, mcperr.Transport, true)
	if !strings.Contains(e.Message, "connection refused") {
		t.Fatalf("message %q", e.Message)
	}
	// Four attempts, three waits: a refused dial proves nothing was sent.
	clock.AssertSlept(t, 200*time.Millisecond, 400*time.Millisecond, 800*time.Millisecond)
}

func TestBreakerOpensThenHalfOpens(t *testing.T) {
	clock := newFakeClock()
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 500}, retrytest.Reply{Status: 500})
	cfg := testConfig(clock)
	cfg.BreakerThreshold = 2
	cfg.BreakerCooldown = 30 * time.Second
	cfg.Retry = retry.Policy{MaxAttempts: 1}
	c := newTestClient(t, cfg)
	get := func() error {
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL, nil)
		return c.DoJSON(req, nil)
	}
	for i := 0; i < 2; i++ {
		mustMCP(t, "avinode", get(), mcperr.Upstream, true)
	}
	if c.BreakerState() != retry.StateOpen {
		t.Fatalf("breaker %s after 2 failures, want open", c.BreakerState())
	}
	health := c.HealthCheck("the test API")
	if err := health(context.Background()); err == nil || !strings.Contains(err.Error(), "the test API failed repeatedly") {
		t.Fatalf("health with the circuit open: %v", err)
	}
	err := get()
	if up.Hits() != 2 {
		t.Fatalf("an open circuit let a request through (%d hits)", up.Hits())
	}
	e := mustMCP(t, "avinode", err, mcperr.Upstream, true)
	if !errors.Is(err, retry.ErrCircuitOpen) || e.RetryAfter != 30*time.Second {
		t.Fatalf("err %v RetryAfter %s, want the circuit's rejection with 30s", err, e.RetryAfter)
	}
	for _, want := range []string{`"avinode"`, "circuit open", "next attempt in 30s"} {
		if !strings.Contains(e.Message, want) {
			t.Fatalf("message %q lacks %q", e.Message, want)
		}
	}
	clock.Advance(30 * time.Second)
	if c.BreakerState() != retry.StateHalfOpen {
		t.Fatalf("breaker %s after the cooldown, want half-open", c.BreakerState())
	}
	if err := get(); err != nil {
		t.Fatalf("trial request: %v", err)
	}
	if c.BreakerState() != retry.StateClosed || up.Hits() != 3 {
		t.Fatalf("breaker %s, hits %d after a good trial; want closed, 3", c.BreakerState(), up.Hits())
	}
	if err := health(context.Background()); err != nil {
		t.Fatalf("health with the circuit closed again: %v", err)
	}
}

func TestOpenCircuitFailsFastDespiteRetries(t *testing.T) {
	clock := newFakeClock()
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 503}, retrytest.Reply{Status: 503})
	cfg := testConfig(clock)
	cfg.BreakerThreshold = 2
	c := newTestClient(t, cfg)
	// The default policy retries; the second failure opens the circuit, so
	// the third attempt is rejected without reaching the upstream, and as
	// the 30s cooldown is longer than any backoff, nothing waits for it.
	resp, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
	if resp != nil {
		t.Fatalf("got response %d, want the circuit's error", resp.StatusCode)
	}
	mustMCP(t, "avinode", err, mcperr.Upstream, true)
	if up.Hits() != 2 {
		t.Fatalf("upstream saw %d requests, want 2", up.Hits())
	}
	clock.AssertSlept(t, 200*time.Millisecond, 400*time.Millisecond)
}

func TestGoogleRateLimitRetried(t *testing.T) {
	const rateLimited = `{"error":{"code":403,"errors":[{"reason":"userRateLimitExceeded"}]}}`
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 403, Body: rateLimited})
	cfg := testConfig(newFakeClock())
	cfg.Name = "gmail"
	cfg.RetryableStatus = retry.GoogleRateLimited
	c := newTestClient(t, cfg)
	resp, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
	if err != nil || resp.StatusCode != 200 || up.Hits() != 2 {
		t.Fatalf("got %v, %v, %d hits; want 200 after one retry", resp, err, up.Hits())
	}
}

func TestHeadersSent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		header  string
		disable bool
		id      string
		ua      string
		wantHdr string
		wantVal string
		wantUA  string
	}{
		{"default header", "", false, "cid-123", "", "X-Correlation-ID", "cid-123", "avinode-mcp/1.2.3"},
		{"custom header", "X-Request-Id", false, "cid-9", "", "X-Request-Id", "cid-9", "avinode-mcp/1.2.3"},
		{"disabled", "", true, "cid-123", "", "X-Correlation-ID", "", "avinode-mcp/1.2.3"},
		{"no id", "", false, "", "", "X-Correlation-ID", "", "avinode-mcp/1.2.3"},
		{"unsafe id dropped", "", false, "a\r\nInjected: x", "", "X-Correlation-ID", "", "avinode-mcp/1.2.3"},
		{"library user agent kept", "", false, "", "google-api-go-client/0.5", "X-Correlation-ID", "", "avinode-mcp/1.2.3 google-api-go-client/0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := retrytest.NewUpstream(t)
			cfg := testConfig(newFakeClock())
			cfg.CorrelationHeader, cfg.DisableCorrelation = tc.header, tc.disable
			c := newTestClient(t, cfg)
			ctx := context.Background()
			if tc.id != "" {
				ctx = logging.WithCorrelationID(ctx, tc.id)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, up.URL, nil)
			if tc.ua != "" {
				req.Header.Set("User-Agent", tc.ua)
			}
			resp, err := c.HTTPClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := up.Seen()[0].Header
			if v := got.Get(tc.wantHdr); v != tc.wantVal {
				t.Fatalf("%s = %q, want %q", tc.wantHdr, v, tc.wantVal)
			}
			if tc.disable && got.Get("X-Correlation-ID") != "" {
				t.Fatal("correlation header sent although disabled")
			}
			if v := got.Get("User-Agent"); v != tc.wantUA {
				t.Fatalf("User-Agent = %q, want %q", v, tc.wantUA)
			}
			if req.Header.Get("User-Agent") != tc.ua || req.Header.Get(tc.wantHdr) != "" {
				t.Fatal("the caller's request was modified")
			}
		})
	}
}

func TestDebugLogNamesRequestButNoSecrets(t *testing.T) {
	const bearer = "sekrit-bearer-token-123"
	const apiKey = "supersecretqueryvalue"
	const configured = "configured-secret-in-path"
	up := retrytest.NewUpstream(t, retrytest.Reply{Status: 503})
	var buf bytes.Buffer
	red := logging.NewRedactor(configured)
	log := logging.New(&buf, "debug", red, "avinode-mcp")
	cfg := testConfig(newFakeClock())
	cfg.Logger, cfg.Redactor = &log, red
	cfg.Auth = func(r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+bearer)
		r.Header.Set("X-Avinode-ApiToken", apiKey)
		return nil
	}
	c := newTestClient(t, cfg)
	ctx := logging.WithCorrelationID(context.Background(), "cid-log")
	resp, err := do(t, c, ctx, http.MethodGet, up.URL+"/v1/"+configured+"?api_key="+apiKey+"&page=2#frag", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v", resp, err)
	}
	// A failed attempt logs its error, whose text must not leak either.
	_, err = do(t, c, ctx, http.MethodGet, "http://"+retrytest.ClosedAddr(t)+"/x?token="+apiKey, nil)
	if err == nil {
		t.Fatal("request to a closed port succeeded")
	}
	out := buf.String()
	for _, secret := range []string{bearer, apiKey, configured, "Authorization", "X-Avinode-ApiToken"} {
		if strings.Contains(out, secret) {
			t.Fatalf("log holds %q:\n%s", secret, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 { // 503 + 200, then four refused attempts
		t.Fatalf("%d log lines, want 6:\n%s", len(lines), out)
	}
	for _, want := range []string{`"level":"debug"`, `"upstream":"avinode"`, `"method":"GET"`, `"attempt":1`,
		`"status":503`, `"correlation_id":"cid-log"`, `page=2`, `"duration":`} {
		if !strings.Contains(lines[0], want) {
			t.Fatalf("first line lacks %s: %s", want, lines[0])
		}
	}
	if !strings.Contains(lines[1], `"attempt":2`) || !strings.Contains(lines[1], `"status":200`) {
		t.Fatalf("second line: %s", lines[1])
	}
	if !strings.Contains(lines[5], `"attempt":4`) || !strings.Contains(lines[5], `"error":`) {
		t.Fatalf("last line: %s", lines[5])
	}
	if strings.Contains(out, "frag") {
		t.Fatalf("log holds the URL fragment:\n%s", out)
	}

	// At info level nothing is logged.
	buf.Reset()
	quiet := logging.New(&buf, "info", red, "avinode-mcp")
	cfg.Logger = &quiet
	c = newTestClient(t, cfg)
	if _, err := do(t, c, ctx, http.MethodGet, up.URL, nil); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("info-level logger got %q", buf.String())
	}
}

func TestContextDeadline(t *testing.T) {
	t.Run("no wait past the deadline", func(t *testing.T) {
		clock := newFakeClock()
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 503, Header: map[string]string{"Retry-After": "5"}})
		c := newTestClient(t, testConfig(clock))
		ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(2*time.Second))
		defer cancel()
		resp, err := do(t, c, ctx, http.MethodGet, up.URL, nil)
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("got %v, %v; want the 503 itself", resp, err)
		}
		if up.Hits() != 1 || len(clock.Slept()) != 0 {
			t.Fatalf("hits %d, slept %v; want one attempt and no wait", up.Hits(), clock.Slept())
		}
		e := FromStatus("avinode", resp.StatusCode, resp.Header)
		if e.RetryAfter != 5*time.Second || !strings.Contains(e.Message, "retry after 5s") {
			t.Fatalf("FromStatus: %q RetryAfter %s", e.Message, e.RetryAfter)
		}
	})
	t.Run("caller deadline ends a hung request", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Hang: true}, retrytest.Reply{Hang: true})
		c := newTestClient(t, testConfig(newFakeClock()))
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond) // room to reach the upstream under load
		defer cancel()
		_, err := do(t, c, ctx, http.MethodGet, up.URL, nil)
		mustMCP(t, "avinode", err, mcperr.Timeout, true)
		if up.Hits() > 1 {
			t.Fatalf("upstream saw %d requests after the deadline passed, want 1", up.Hits())
		}
	})
	t.Run("configured overall timeout", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Hang: true}, retrytest.Reply{Hang: true})
		cfg := testConfig(newFakeClock())
		cfg.Timeout = 100 * time.Millisecond
		c := newTestClient(t, cfg)
		_, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the overall deadline", err)
		}
		mustMCP(t, "avinode", err, mcperr.Timeout, true)
	})
	t.Run("cancelled", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Hang: true})
		c := newTestClient(t, testConfig(newFakeClock()))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for up.Hits() == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := do(t, c, ctx, http.MethodGet, up.URL, nil)
		mustMCP(t, "avinode", err, mcperr.Cancelled, false)
		if up.Hits() != 1 {
			t.Fatalf("a cancelled request was retried (%d hits)", up.Hits())
		}
	})
}

func TestAuthHook(t *testing.T) {
	t.Run("runs for every attempt", func(t *testing.T) {
		up := retrytest.NewUpstream(t, retrytest.Reply{Status: 503})
		var calls atomic.Int32
		cfg := testConfig(newFakeClock())
		cfg.Auth = func(r *http.Request) error {
			n := calls.Add(1)
			r.Header.Set("X-Avinode-SentTimestamp", time.Unix(int64(n), 0).UTC().Format(time.RFC3339))
			return nil
		}
		c := newTestClient(t, cfg)
		if _, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil); err != nil {
			t.Fatal(err)
		}
		s := up.Seen()
		if calls.Load() != 2 || s[0].Header.Get("X-Avinode-SentTimestamp") == s[1].Header.Get("X-Avinode-SentTimestamp") {
			t.Fatalf("hook calls %d, headers %q %q; want a fresh header per attempt", calls.Load(),
				s[0].Header.Get("X-Avinode-SentTimestamp"), s[1].Header.Get("X-Avinode-SentTimestamp"))
		}
	})
	t.Run("failure is not retried and spares the breaker", func(t *testing.T) {
		up := retrytest.NewUpstream(t)
		var calls atomic.Int32
		cfg := testConfig(newFakeClock())
		cfg.BreakerThreshold = 1
		cfg.Auth = func(*http.Request) error { calls.Add(1); return errBoom }
		c := newTestClient(t, cfg)
		for i := 0; i < 3; i++ {
			_, err := do(t, c, context.Background(), http.MethodGet, up.URL, nil)
			e := mustMCP(t, "avinode", err, mcperr.Authentication, false)
			if !errors.Is(e, errBoom) || strings.Contains(e.Message, "boom") {
				t.Fatalf("error %v: the cause must be kept, out of the message", e)
			}
		}
		if calls.Load() != 3 || up.Hits() != 0 {
			t.Fatalf("hook calls %d, hits %d; want one hook call per request and no request sent", calls.Load(), up.Hits())
		}
		if c.BreakerState() != retry.StateClosed {
			t.Fatal("credential failures opened the circuit")
		}
	})
	t.Run("an mcperr from the hook is kept", func(t *testing.T) {
		up := retrytest.NewUpstream(t)
		cfg := testConfig(newFakeClock())
		own := mcperr.New(mcperr.Upstream, "token endpoint of upstream \"avinode\" is unavailable")
		cfg.Auth = func(*http.Request) error { return own }
		c := newTestClient(t, cfg)
		req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL, nil)
		if err := c.DoJSON(req, nil); err != own {
			t.Fatalf("err = %v, want the hook's own error", err)
		}
	})
}

func TestRedirects(t *testing.T) {
	other := retrytest.NewUpstream(t)
	up := retrytest.NewUpstream(t,
		retrytest.Reply{Status: 302, Header: map[string]string{"Location": "/moved"}},
		retrytest.Reply{Status: 302, Header: map[string]string{"Location": other.URL + "/steal"}})
	cfg := testConfig(newFakeClock())
	cfg.Auth = func(r *http.Request) error { r.Header.Set("Authorization", "Bearer abcdefgh"); return nil }
	c := newTestClient(t, cfg)
	req, _ := NewJSONRequest(context.Background(), http.MethodGet, up.URL+"/start", nil)
	err := c.DoJSON(req, nil)
	e := mustMCP(t, "avinode", err, mcperr.Upstream, false)
	if !strings.Contains(e.Message, "redirected") {
		t.Fatalf("message %q", e.Message)
	}
	if other.Hits() != 0 {
		t.Fatal("a redirect carried the request to another host")
	}
	if s := up.Seen(); len(s) != 2 || s[1].URL != "/moved" || s[1].Header.Get("Authorization") == "" {
		t.Fatalf("same-host redirect not followed with credentials: %+v", s)
	}

	loop := retrytest.Serve(t, func(int) retrytest.Reply {
		return retrytest.Reply{Status: 302, Header: map[string]string{"Location": "/again"}}
	})
	req, _ = NewJSONRequest(context.Background(), http.MethodGet, loop.URL, nil)
	e = mustMCP(t, "avinode", c.DoJSON(req, nil), mcperr.Upstream, false)
	if !strings.Contains(e.Message, "more than 5 redirects") || loop.Hits() != 6 {
		t.Fatalf("message %q after %d hits", e.Message, loop.Hits())
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	valid := func() Config { return Config{Name: "avinode", Server: "avinode-mcp", Version: "1.0.0"} }
	for _, tc := range []struct {
		field  string
		mutate func(*Config)
	}{
		{"Config.Name", func(c *Config) { c.Name = " " }},
		{"Config.Server", func(c *Config) { c.Server = "" }},
		{"Config.Version", func(c *Config) { c.Version = "" }},
		{"Config.Server", func(c *Config) { c.Server = "avinode mcp" }},
		{"Config.Name", func(c *Config) { c.Name = "a\nb" }},
		{"Config.Timeout", func(c *Config) { c.Timeout = -time.Second }},
		{"Config.DialTimeout", func(c *Config) { c.DialTimeout = -1 }},
		{"Config.AttemptTimeout", func(c *Config) { c.Timeout, c.AttemptTimeout = time.Second, 2*time.Second }},
		{"Config.MaxConnsPerHost", func(c *Config) { c.MaxConnsPerHost = -1 }},
		{"Config.BreakerThreshold", func(c *Config) { c.BreakerThreshold = -2 }},
		{"Config.MaxResponseBytes", func(c *Config) { c.MaxResponseBytes = -1 }},
		{"Config.Retry.MaxAttempts", func(c *Config) { c.Retry.MaxAttempts = -1 }},
		{"Config.CorrelationHeader", func(c *Config) { c.CorrelationHeader = "X Bad" }},
	} {
		cfg := valid()
		tc.mutate(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("New with bad %s: err = %v", tc.field, err)
		}
	}
	c, err := New(valid())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "avinode" || c.HTTPClient() == nil || c.transport.MaxIdleConnsPerHost != DefaultMaxIdleConnsPerHost ||
		c.transport.TLSClientConfig.MinVersion < 0x0303 || c.transport.ResponseHeaderTimeout != DefaultResponseHeaderTimeout {
		t.Fatalf("defaults not applied: %+v", c.transport)
	}
	short := valid()
	short.Timeout = 5 * time.Second
	if _, err := New(short); err != nil {
		t.Fatalf("a short Timeout with the default AttemptTimeout must be accepted: %v", err)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "{}")
	}))
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	c := newTestClient(t, testConfig(newFakeClock()))
	req, _ := NewJSONRequest(context.Background(), http.MethodGet, srv.URL, nil)
	err := c.DoJSON(req, nil)
	e := mustMCP(t, "avinode", err, mcperr.Transport, false)
	if !strings.Contains(e.Message, "unknown authority") {
		t.Fatalf("message %q", e.Message)
	}

	cfg := testConfig(newFakeClock())
	cfg.TLS = srv.Client().Transport.(*http.Transport).TLSClientConfig
	trusted := newTestClient(t, cfg)
	req, _ = NewJSONRequest(context.Background(), http.MethodGet, srv.URL, nil)
	if err := trusted.DoJSON(req, nil); err != nil {
		t.Fatalf("with the test CA: %v", err)
	}
}

func TestCloseIdleConnectionsReachesThePool(t *testing.T) {
	closed := make(chan struct{}, 8)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	c := newTestClient(t, testConfig(newFakeClock()))
	resp, err := do(t, c, context.Background(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.HTTPClient().CloseIdleConnections()
	<-closed // the pooled connection was closed by the client
}

func TestHookErrorTextScrubbedInLog(t *testing.T) {
	const secret = "abcdef123456"
	var buf bytes.Buffer
	log := logging.New(&buf, "debug", nil, "avinode-mcp")
	cfg := testConfig(newFakeClock())
	cfg.Logger = &log
	cfg.Auth = func(*http.Request) error {
		return errors.New(`token request "https://auth.example.com/token?client_secret=` + secret + `": refused`)
	}
	c := newTestClient(t, cfg)
	_, err := do(t, c, context.Background(), http.MethodGet, "http://127.0.0.1:1/", nil)
	mustMCP(t, "avinode", err, mcperr.Authentication, false)
	if out := buf.String(); strings.Contains(out, secret) || !strings.Contains(out, "auth.example.com/token") {
		t.Fatalf("log: %s", out)
	}
}

// TestDoJSONOutcomeUnknown: DoJSON tells a caller whether to repeat a POST
// that failed: not after a 5xx (the upstream may have applied it), yes
// after a 429 or a 503 that says when to come back, and a GET's 500 stays
// retryable.
func TestDoJSONOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name       string
		method     string
		reply      retrytest.Reply
		code       mcperr.Code
		retryable  bool
		retryAfter int
	}{
		{"POST 500", http.MethodPost, retrytest.Reply{Status: 500}, mcperr.Upstream, false, 0},
		{"POST 503", http.MethodPost, retrytest.Reply{Status: 503}, mcperr.Upstream, false, 0},
		{"POST 503 with Retry-After", http.MethodPost, retrytest.Reply{Status: 503, Header: map[string]string{"Retry-After": "7"}}, mcperr.Upstream, true, 7},
		{"POST 429 with Retry-After", http.MethodPost, retrytest.Reply{Status: 429, Header: map[string]string{"Retry-After": "7"}}, mcperr.RateLimit, true, 7},
		{"GET 500", http.MethodGet, retrytest.Reply{Status: 500}, mcperr.Upstream, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := retrytest.NewUpstream(t, tc.reply, tc.reply, tc.reply)
			cfg := testConfig(newFakeClock())
			cfg.Retry = retry.Policy{MaxAttempts: 1}
			c := newTestClient(t, cfg)
			req, _ := NewJSONRequest(context.Background(), tc.method, up.URL+"/bookings", map[string]int{"n": 1})
			e := mustMCP(t, "avinode", c.DoJSON(req, nil), tc.code, tc.retryable)
			if got := e.Body().Data.RetryAfterSeconds; (got == nil) != (tc.retryAfter == 0) || (got != nil && *got != tc.retryAfter) {
				t.Errorf("retry_after_seconds %v, want %d", got, tc.retryAfter)
			}
			if unknown := errors.Is(e, ErrOutcomeUnknown); unknown == tc.retryable {
				t.Errorf("ErrOutcomeUnknown in the chain: %v (%s)", unknown, e.Message)
			}
		})
	}
}
