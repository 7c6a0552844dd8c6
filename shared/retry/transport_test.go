package retry

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

// newUpstream answers with statuses, then 200s; the body of its n-th answer
// is "response n".
func newUpstream(t *testing.T, statuses ...int) *retrytest.Upstream {
	return newUpstreamRetryAfter(t, "", statuses...)
}

// newUpstreamRetryAfter is newUpstream whose first answer carries a
// Retry-After header.
func newUpstreamRetryAfter(t *testing.T, retryAfter string, statuses ...int) *retrytest.Upstream {
	return retrytest.Serve(t, func(n int) retrytest.Reply {
		r := retrytest.Reply{Body: fmt.Sprintf("response %d", n+1)}
		if n < len(statuses) {
			r.Status = statuses[n]
		}
		if n == 0 && retryAfter != "" {
			r.Header = map[string]string{"Retry-After": retryAfter}
		}
		return r
	})
}

func newClient(clock Clock, p Policy, opts ...Option) *http.Client {
	return &http.Client{Transport: NewTransport(nil, p, append([]Option{WithClock(clock)}, opts...)...)}
}

func newRequest(t *testing.T, ctx context.Context, method, url, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTransportStatusRetries(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name       string
		method     string
		mark       func(*http.Request) *http.Request
		statuses   []int
		wantStatus int
		wantSeen   int
		wantSlept  []time.Duration
	}{
		{"GET 503 then success", http.MethodGet, nil, []int{503, 503}, 200, 3, []time.Duration{ms(100), ms(200)}},
		{"GET gives up after MaxAttempts", http.MethodGet, nil, []int{503, 503, 503, 503}, 503, 3, []time.Duration{ms(100), ms(200)}},
		{"GET 429", http.MethodGet, nil, []int{429}, 200, 2, []time.Duration{ms(100)}},
		{"GET 500", http.MethodGet, nil, []int{500}, 200, 2, []time.Duration{ms(100)}},
		{"GET 502", http.MethodGet, nil, []int{502}, 200, 2, []time.Duration{ms(100)}},
		{"GET 504", http.MethodGet, nil, []int{504}, 200, 2, []time.Duration{ms(100)}},
		{"GET 404 not retried", http.MethodGet, nil, []int{404}, 404, 1, nil},
		{"GET 403 not retried", http.MethodGet, nil, []int{403}, 403, 1, nil},
		{"HEAD", http.MethodHead, nil, []int{503}, 200, 2, []time.Duration{ms(100)}},
		{"OPTIONS", http.MethodOptions, nil, []int{503}, 200, 2, []time.Duration{ms(100)}},
		{"PUT", http.MethodPut, nil, []int{503}, 200, 2, []time.Duration{ms(100)}},
		{"DELETE", http.MethodDelete, nil, []int{503}, 200, 2, []time.Duration{ms(100)}},
		{"POST 503 not retried", http.MethodPost, nil, []int{503}, 503, 1, nil},
		{"POST 500 not retried", http.MethodPost, nil, []int{500}, 500, 1, nil},
		{"POST 429 not retried", http.MethodPost, nil, []int{429}, 429, 1, nil},
		{"PATCH 503 not retried", http.MethodPatch, nil, []int{503}, 503, 1, nil},
		{"POST marked by context", http.MethodPost, func(r *http.Request) *http.Request {
			return r.WithContext(MarkIdempotent(r.Context()))
		}, []int{503, 503}, 200, 3, []time.Duration{ms(100), ms(200)}},
		{"POST with Idempotency-Key", http.MethodPost, func(r *http.Request) *http.Request {
			r.Header.Set("Idempotency-Key", "k-1")
			return r
		}, []int{503}, 200, 2, []time.Duration{ms(100)}},
		{"POST with X-Idempotency-Key", http.MethodPost, func(r *http.Request) *http.Request {
			r.Header.Set("X-Idempotency-Key", "k-1")
			return r
		}, []int{500}, 200, 2, []time.Duration{ms(100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, tt.statuses...)
			clock := newFakeClock()
			req := newRequest(t, context.Background(), tt.method, u.URL, "")
			if tt.mark != nil {
				req = tt.mark(req)
			}
			resp, err := newClient(clock, testPolicy(3)).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readBody(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if got := u.Hits(); got != tt.wantSeen {
				t.Fatalf("server saw %d requests, want %d", got, tt.wantSeen)
			}
			// The caller gets the last response, body intact.
			if want := fmt.Sprintf("response %d", tt.wantSeen); tt.method != http.MethodHead && body != want {
				t.Fatalf("body %q, want %q", body, want)
			}
			clock.AssertSlept(t, tt.wantSlept...)
		})
	}
}

func TestTransportRetryAfter(t *testing.T) {
	base := newFakeClock().Now()
	tests := []struct {
		name       string
		retryAfter string
		wantSeen   int
		wantSlept  []time.Duration
	}{
		{"delta seconds", "3", 2, []time.Duration{3 * time.Second}},
		{"HTTP date", base.Add(7 * time.Second).Format(http.TimeFormat), 2, []time.Duration{7 * time.Second}},
		{"date in the past", base.Add(-time.Hour).Format(http.TimeFormat), 2, []time.Duration{100 * time.Millisecond}},
		{"shorter than backoff", "0", 2, []time.Duration{100 * time.Millisecond}},
		{"garbage ignored", "soon", 2, []time.Duration{100 * time.Millisecond}},
		{"beyond MaxRetryAfter", "120", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstreamRetryAfter(t, tt.retryAfter, 429)
			clock := newFakeClock()
			resp, err := newClient(clock, testPolicy(3)).Get(u.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := u.Hits(); got != tt.wantSeen {
				t.Fatalf("server saw %d requests, want %d", got, tt.wantSeen)
			}
			if tt.wantSeen == 1 && (resp.StatusCode != 429 || resp.Header.Get("Retry-After") != tt.retryAfter) {
				t.Fatalf("caller should get the 429 and its Retry-After, got %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			clock.AssertSlept(t, tt.wantSlept...)
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"  ", 0, false},
		{"5", 5 * time.Second, true},
		{" 12 ", 12 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"99999999999999999", 1<<63 - 1, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"Mon, 02 Jan 2006", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestTransportReplaysBody(t *testing.T) {
	u := newUpstream(t, 503, 502)
	clock := newFakeClock()
	const payload = `{"tail":"N123AB","legs":[{"from":"EGLF","to":"LFMN"}]}`
	ctx := MarkIdempotent(context.Background())
	resp, err := newClient(clock, testPolicy(4)).Do(newRequest(t, ctx, http.MethodPost, u.URL, payload))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := u.Seen()
	if len(got) != 3 {
		t.Fatalf("server saw %d requests, want 3", len(got))
	}
	for i, r := range got {
		if r.Body != payload {
			t.Fatalf("attempt %d sent body %q, want %q", i+1, r.Body, payload)
		}
	}
}

func TestTransportNoReplayWithoutGetBody(t *testing.T) {
	u := newUpstream(t, 503)
	req, err := http.NewRequestWithContext(MarkIdempotent(context.Background()), http.MethodPost, u.URL,
		io.NopCloser(strings.NewReader("once")))
	if err != nil {
		t.Fatal(err)
	}
	if req.GetBody != nil {
		t.Fatal("test needs a request without GetBody")
	}
	resp, err := newClient(newFakeClock(), testPolicy(3)).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || u.Hits() != 1 {
		t.Fatalf("status %d after %d requests; a body that cannot be rebuilt must not be resent", resp.StatusCode, u.Hits())
	}
}

func TestTransportGetBodyFailure(t *testing.T) {
	u := newUpstream(t, 503)
	req := newRequest(t, context.Background(), http.MethodPut, u.URL, "x")
	req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("spooled body gone") }
	resp, err := newClient(newFakeClock(), testPolicy(3)).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != 503 || body != "response 1" || u.Hits() != 1 {
		t.Fatalf("got %d %q after %d requests; want the intact first response", resp.StatusCode, body, u.Hits())
	}
}

func TestTransportPOSTRetriedOnDialError(t *testing.T) {
	var attempts atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		attempts.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})
	clock := newFakeClock()
	client := &http.Client{Transport: NewTransport(base, testPolicy(3), WithClock(clock))}
	_, err := client.Post("http://"+retrytest.ClosedAddr(t)+"/v1/quotes", "application/json", strings.NewReader(`{}`))
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Fatalf("got %v, want a dial error", err)
	}
	if got := attempts.Load(); got != 3 {
		t.Fatalf("POST attempted %d times, want 3: a refused dial proves it was never sent", got)
	}
	clock.AssertSlept(t, 100*time.Millisecond, 200*time.Millisecond)
}

func TestTransportPOSTDialErrorThenSuccess(t *testing.T) {
	u := newUpstream(t)
	var attempts atomic.Int32
	down := retrytest.ClosedAddr(t)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if attempts.Add(1) == 1 {
			r = r.Clone(r.Context())
			r.URL.Host = down
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	client := &http.Client{Transport: NewTransport(base, testPolicy(3), WithClock(newFakeClock()))}
	resp, err := client.Post(u.URL, "text/plain", strings.NewReader("book it"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := u.Seen(); len(got) != 1 || got[0].Body != "book it" {
		t.Fatalf("server saw %+v, want exactly one %q", got, "book it")
	}
}

func TestTransportErrorRetries(t *testing.T) {
	dialRefused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name      string
		method    string
		err       error
		wantCalls int
	}{
		{"GET after read reset", http.MethodGet, &net.OpError{Op: "read", Err: errors.New("connection reset")}, 3},
		{"GET after timeout", http.MethodGet, &net.OpError{Op: "read", Err: timeoutError{}}, 3},
		{"GET after deadline", http.MethodGet, fmt.Errorf("round trip: %w", context.DeadlineExceeded), 3},
		{"GET after EOF", http.MethodGet, io.ErrUnexpectedEOF, 3},
		{"GET bad certificate", http.MethodGet, &tls.CertificateVerificationError{Err: errors.New("unknown authority")}, 1},
		{"GET unknown host", http.MethodGet, &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}, 1},
		{"GET permanent", http.MethodGet, Permanent(dialRefused), 1},
		{"GET non-retryable mcperr", http.MethodGet, mcperr.Invalid("url", "x", "https", "bad scheme"), 1},
		{"GET cancelled", http.MethodGet, context.Canceled, 1},
		{"POST dial refused", http.MethodPost, dialRefused, 3},
		{"POST dial timeout", http.MethodPost, &net.OpError{Op: "dial", Err: timeoutError{}}, 1},
		{"POST read timeout", http.MethodPost, &net.OpError{Op: "read", Err: timeoutError{}}, 1},
		{"POST deadline", http.MethodPost, context.DeadlineExceeded, 1},
		{"POST read reset", http.MethodPost, &net.OpError{Op: "read", Err: errors.New("connection reset")}, 1},
		{"POST write error", http.MethodPost, &net.OpError{Op: "write", Err: errors.New("broken pipe")}, 1},
		{"POST EOF", http.MethodPost, io.EOF, 1},
		{"POST retryable mcperr", http.MethodPost, mcperr.New(mcperr.Transport, "lost"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls++
				if r.Body != nil {
					r.Body.Close()
				}
				return nil, tt.err
			})
			rt := NewTransport(base, testPolicy(3), WithClock(newFakeClock()))
			_, err := rt.RoundTrip(newRequest(t, context.Background(), tt.method, "http://upstream.test/", "x"))
			if !errors.Is(err, tt.err) {
				t.Fatalf("got %v, want %v", err, tt.err)
			}
			if calls != tt.wantCalls {
				t.Fatalf("%d attempts, want %d", calls, tt.wantCalls)
			}
		})
	}
}

func TestTransportDrainsDiscardedResponses(t *testing.T) {
	var bodies []*trackedBody
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b := newTrackedBody(strings.Repeat("e", 1000))
		bodies = append(bodies, b)
		code := 503
		if len(bodies) == 3 {
			code = 200
		}
		return response(r, code, b), nil
	})
	rt := NewTransport(base, testPolicy(3), WithClock(newFakeClock()))
	resp, err := rt.RoundTrip(newRequest(t, context.Background(), http.MethodGet, "http://upstream.test/", ""))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v", resp, err)
	}
	for i, b := range bodies[:2] {
		if !b.eof.Load() || !b.closed.Load() {
			t.Fatalf("discarded body %d: drained=%v closed=%v", i, b.eof.Load(), b.closed.Load())
		}
	}
	if bodies[2].closed.Load() {
		t.Fatal("the returned response's body was closed")
	}
}

func TestTransportCancelDuringWait(t *testing.T) {
	u := newUpstreamRetryAfter(t, "30", 503, 503, 503)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Real waiting (30s) that only cancellation can cut short.
	clock := sleepHook{before: cancel}
	start := time.Now()
	_, err := newClient(clock, testPolicy(3)).Do(newRequest(t, ctx, http.MethodGet, u.URL, ""))
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("cancellation took %v", elapsed)
	}
	var se *StatusError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || se.StatusCode != 503 {
		t.Fatalf("got %v, want cancellation wrapping the 503", err)
	}
	if u.Hits() != 1 {
		t.Fatalf("server saw %d requests, want 1", u.Hits())
	}
}

// sleepHook runs before, then really sleeps.
type sleepHook struct{ before func() }

func (sleepHook) Now() time.Time { return time.Now() }
func (h sleepHook) Sleep(ctx context.Context, d time.Duration) error {
	h.before()
	return realClock{}.Sleep(ctx, d)
}

func TestTransportCancelledCloseNextBody(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var replay *trackedBody
	req := newRequest(t, ctx, http.MethodPut, "http://upstream.test/", "x")
	req.GetBody = func() (io.ReadCloser, error) { replay = newTrackedBody("x"); return replay, nil }
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return response(r, 503, io.NopCloser(strings.NewReader(""))), nil
	})
	_, err := NewTransport(base, testPolicy(3), WithClock(sleepHook{before: cancel})).RoundTrip(req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if replay == nil || !replay.closed.Load() {
		t.Fatal("the prepared replay body was not closed")
	}
}

func TestTransportStopsWhenContextEndsDuringAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		cancel()
		return response(r, 503, io.NopCloser(strings.NewReader("bye"))), nil
	})
	resp, err := NewTransport(base, testPolicy(3), WithClock(newFakeClock())).RoundTrip(
		newRequest(t, ctx, http.MethodGet, "http://upstream.test/", ""))
	if err != nil || resp.StatusCode != 503 || calls != 1 {
		t.Fatalf("got %v, %v after %d calls; want the 503 and no retry", resp, err, calls)
	}
}

func TestTransportGivesUpBeforeDeadline(t *testing.T) {
	u := newUpstreamRetryAfter(t, "50", 503, 503)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clock := retrytest.NewClock(time.Now())
	resp, err := newClient(clock, testPolicy(3)).Do(newRequest(t, ctx, http.MethodGet, u.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || u.Hits() != 1 || len(clock.Slept()) != 0 {
		t.Fatalf("status %d, %d requests, slept %v; want the 503 at once", resp.StatusCode, u.Hits(), clock.Slept())
	}
}

func TestTransportBreakerRejectsWithoutCallingServer(t *testing.T) {
	u := newUpstream(t, 503, 503, 503, 503, 503)
	clock := newFakeClock()
	b := NewBreaker("avinode", 2, time.Minute, WithBreakerClock(clock))
	client := newClient(clock, testPolicy(5), WithBreaker(b))

	_, err := client.Get(u.URL)
	if !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("got %v, want the circuit to open mid-retry", err)
	}
	var me *mcperr.Error
	if !errors.As(err, &me) || me.Code != mcperr.Upstream || me.RetryAfter != time.Minute-200*time.Millisecond {
		t.Fatalf("got %#v, want an UPSTREAM_ERROR with the remaining cooldown", me)
	}
	if u.Hits() != 2 {
		t.Fatalf("server saw %d requests, want 2", u.Hits())
	}
	if want := `circuit open after 2 consecutive failures; next attempt in 60s`; !strings.HasSuffix(me.Message, want) {
		t.Fatalf("message %q, want suffix %q", me.Message, want)
	}
	// Further calls are turned away without touching the server.
	for range 3 {
		if _, err := client.Get(u.URL); !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("got %v", err)
		}
	}
	if u.Hits() != 2 {
		t.Fatalf("open breaker let %d requests through", u.Hits()-2)
	}
	// After the cooldown one trial goes through; the server answers 503
	// again (third scripted status), so the breaker reopens and the retry of
	// that 503 is turned away, reporting the now longer failure streak.
	clock.Advance(time.Minute)
	_, err = client.Get(u.URL)
	if !errors.As(err, &me) || !strings.Contains(me.Message, "after 3 consecutive failures") {
		t.Fatalf("got %v, want the reopened circuit", err)
	}
	if u.Hits() != 3 || b.State() != StateOpen {
		t.Fatalf("%d requests, state %v; want exactly one trial that reopens", u.Hits(), b.State())
	}
}

func TestTransportBreakerClosesOnSuccessAndIgnores4xx(t *testing.T) {
	u := newUpstream(t, 503, 404, 404, 404)
	clock := newFakeClock()
	b := NewBreaker("postgrest", 2, time.Second, WithBreakerClock(clock))
	client := newClient(clock, testPolicy(1), WithBreaker(b))
	for range 4 {
		resp, err := client.Get(u.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if b.State() != StateClosed {
		t.Fatalf("state %v: 4xx answers must not open the circuit", b.State())
	}
}

// A POST turned away by an open breaker never left the process, so it may be
// retried once the circuit lets it through; and the rejected attempt's body
// must still be closed, as RoundTrip promises.
func TestTransportPOSTRetriedAfterBreakerRejection(t *testing.T) {
	u := newUpstream(t)
	clock := newFakeClock()
	b := NewBreaker("gmail", 1, 300*time.Millisecond, WithBreakerClock(clock))
	_ = b.Do(context.Background(), fail)

	first := newTrackedBody("send")
	req, err := http.NewRequest(http.MethodPost, u.URL, first)
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("send")), nil }
	resp, err := NewTransport(nil, testPolicy(3), WithClock(clock), WithBreaker(b)).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !first.closed.Load() {
		t.Fatal("body of the rejected attempt was not closed")
	}
	if got := u.Seen(); len(got) != 1 || got[0].Body != "send" {
		t.Fatalf("server saw %+v, want one %q", got, "send")
	}
	clock.AssertSlept(t, 300*time.Millisecond)
	if b.State() != StateClosed {
		t.Fatalf("state %v, want closed after the successful trial", b.State())
	}
}

func TestTransportGoogleRateLimit(t *testing.T) {
	const limited = `{"error":{"code":403,"message":"User Rate Limit Exceeded","errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded"}]}}`
	const denied = `{"error":{"code":403,"message":"Insufficient Permission","errors":[{"domain":"global","reason":"insufficientPermissions"}]}}`
	for _, tt := range []struct {
		name     string
		body     string
		wantSeen int
	}{
		{"rate limit retried", limited, 2},
		{"permission denied not retried", denied, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					w.WriteHeader(http.StatusForbidden)
					io.WriteString(w, tt.body)
					return
				}
				io.WriteString(w, "ok")
			}))
			defer srv.Close()
			clock := newFakeClock()
			resp, err := newClient(clock, testPolicy(3), WithRetryableStatus(nil), WithRetryableStatus(GoogleRateLimited)).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			body := readBody(t, resp)
			if int(n.Load()) != tt.wantSeen {
				t.Fatalf("server saw %d requests, want %d", n.Load(), tt.wantSeen)
			}
			if tt.wantSeen == 1 && body != denied {
				t.Fatalf("caller got body %q; peeking must not consume it", body)
			}
		})
	}
}

func TestTransportCloseIdleConnections(t *testing.T) {
	closed := false
	NewTransport(idleCloser{roundTripFunc(nil), &closed}, DefaultPolicy()).CloseIdleConnections()
	if !closed {
		t.Fatal("CloseIdleConnections not forwarded")
	}
	// A base without the method is fine.
	NewTransport(roundTripFunc(nil), DefaultPolicy()).CloseIdleConnections()
	if NewTransport(nil, DefaultPolicy()).base != http.DefaultTransport {
		t.Fatal("nil base should mean http.DefaultTransport")
	}
}

type idleCloser struct {
	http.RoundTripper
	closed *bool
}

func (c idleCloser) CloseIdleConnections() { *c.closed = true }

func TestTransportConcurrent(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		first := seen[r.URL.Path] == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, r.URL.Path)
	}))
	defer srv.Close()
	clock := newFakeClock()
	b := NewBreaker("sheets", 1000, time.Second, WithBreakerClock(clock))
	client := newClient(clock, testPolicy(3), WithBreaker(b))
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("/sheet/%d", i)
			resp, err := client.Get(srv.URL + path)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !bytes.Equal(body, []byte(path)) {
				errs <- fmt.Errorf("%s: %d %q", path, resp.StatusCode, body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for path, n := range seen {
		if n != 2 {
			t.Errorf("%s requested %d times, want 2", path, n)
		}
	}
	if len(clock.Slept()) != 32 {
		t.Errorf("%d waits, want 32", len(clock.Slept()))
	}
}

func BenchmarkTransportNoRetry(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 16}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: NewTransport(base, DefaultPolicy(), WithBreaker(NewBreaker("bench", 5, time.Second)))}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

func TestTransportErrorsCountTowardsBreaker(t *testing.T) {
	calls := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		return nil, &net.OpError{Op: "read", Err: errors.New("connection reset")}
	})
	clock := newFakeClock()
	b := NewBreaker("avinode", 2, time.Minute, WithBreakerClock(clock))
	_, err := NewTransport(base, testPolicy(5), WithClock(clock), WithBreaker(b)).RoundTrip(
		newRequest(t, context.Background(), http.MethodGet, "http://upstream.test/", ""))
	if !errors.Is(err, ErrCircuitOpen) || calls != 2 {
		t.Fatalf("got %v after %d calls; want the circuit open after 2", err, calls)
	}
}
