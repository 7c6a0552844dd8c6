package retry

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxDrain bounds how much of a discarded response we read so its connection
// can be reused; past this, dropping the connection is cheaper.
const maxDrain = 64 << 10

type idempotentKey struct{}

// MarkIdempotent returns a context under which Transport may repeat a request
// whose method alone does not make that safe, e.g. a POST that the upstream
// deduplicates or that only reads. Use it only when a duplicate is harmless:
// a retried POST whose first attempt did reach the server is applied twice.
func MarkIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func isIdempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	if v, _ := req.Context().Value(idempotentKey{}).(bool); v {
		return true
	}
	// The same headers net/http's own transport trusts for this.
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// Transport is an http.RoundTripper that retries transient failures: errors
// from the connection and 429, 500, 502, 503 and 504 responses. It never
// risks doing a request's work twice: a request that is not idempotent (by
// method, MarkIdempotent or an Idempotency-Key header) is repeated only when
// the failure proves it never left this process (a refused dial, an open
// breaker), and never after a timeout. A request whose body cannot be
// rebuilt (GetBody is nil) is not repeated either.
//
// When it stops retrying on a response, that response is returned as is, so
// callers handle a final 503 just as they would without retries. Safe for
// concurrent use.
type Transport struct {
	base http.RoundTripper
	// send is base, behind the breaker when there is one.
	send   http.RoundTripper
	policy Policy
	s      settings
}

// NewTransport wraps base (http.DefaultTransport if nil).
func NewTransport(base http.RoundTripper, p Policy, opts ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &Transport{base: base, send: base, policy: p.normalized(), s: newSettings(opts)}
	if t.s.breaker != nil {
		t.send = t.s.breaker.Guard(base)
	}
	return t
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	idempotent := isIdempotent(req)
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	r := req
	for attempt := 1; ; attempt++ {
		resp, err := t.send.RoundTrip(r)
		var again bool
		var requested time.Duration
		var has bool
		if err != nil {
			again = retryableError(err, idempotent)
			requested, has = RetryAfterOf(err)
		} else {
			again = idempotent && t.retryableStatus(resp)
			if again {
				requested, has = ParseRetryAfter(resp.Header.Get("Retry-After"), t.s.clock.Now())
			}
		}
		if !again || !replayable || attempt >= t.policy.MaxAttempts || ctx.Err() != nil {
			return resp, err
		}
		d, ok := t.policy.delay(attempt, requested, has, errors.Is(err, ErrCircuitOpen), t.s.rand)
		if !ok || t.s.outlives(ctx, d) {
			return resp, err
		}
		next, gerr := rewind(req)
		if gerr != nil {
			return resp, err
		}
		last := err
		if resp != nil {
			last = &StatusError{StatusCode: resp.StatusCode}
			discard(resp)
		}
		if serr := t.s.clock.Sleep(ctx, d); serr != nil {
			if next.Body != nil {
				next.Body.Close()
			}
			return nil, interrupted(serr, last, attempt)
		}
		r = next
	}
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// wrapped transport.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t *Transport) retryableStatus(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	for _, f := range t.s.retryableStatus {
		if f(resp) {
			return true
		}
	}
	return false
}

// retryableError decides whether a request that failed without a response
// may be sent again.
func retryableError(err error, idempotent bool) bool {
	if errors.Is(err, ErrCircuitOpen) {
		// Rejected before it left the process.
		return true
	}
	var r retryabler
	if errors.As(err, &r) && !r.Retryable() {
		return false
	}
	// Failures that will recur identically on every attempt.
	var cert *tls.CertificateVerificationError
	var dns *net.DNSError
	if errors.As(err, &cert) || (errors.As(err, &dns) && dns.IsNotFound) || errors.Is(err, context.Canceled) {
		return false
	}
	if idempotent {
		return true
	}
	// After a timeout the server may be processing the request right now.
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return false
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}

func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	resp.Body.Close()
}

// ParseRetryAfter reads a Retry-After header value, either delta-seconds or
// an HTTP-date (relative to now). A date in the past means "now". It is
// exported for clients that turn a final 429 into an mcperr.Error with
// RetryAfter set.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > math.MaxInt64/int64(time.Second) {
			// Absurdly far away; saturate so it is still "too long".
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
