package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

func TestFromStatus(t *testing.T) {
	soon := time.Now().Add(2 * time.Minute).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		status     int
		header     map[string]string
		hints      []Hint
		code       mcperr.Code
		retryable  bool
		retryAfter time.Duration // exact, or -1 for "between 1 and 2 minutes"
		words      string
	}{
		{400, nil, nil, mcperr.Validation, false, 0, "rejected the request as invalid"},
		{413, nil, nil, mcperr.Validation, false, 0, "HTTP 413 Request Entity Too Large"},
		{414, nil, nil, mcperr.Validation, false, 0, "HTTP 414"},
		{415, nil, nil, mcperr.Validation, false, 0, "HTTP 415"},
		{422, nil, nil, mcperr.Validation, false, 0, "HTTP 422 Unprocessable Entity"},
		{401, nil, nil, mcperr.Authentication, false, 0, "rejected the server's credentials"},
		{407, nil, nil, mcperr.Authentication, false, 0, "HTTP 407"},
		{403, nil, nil, mcperr.PermissionDeny, false, 0, "denied access (HTTP 403 Forbidden)"},
		{403, map[string]string{"Retry-After": "12"}, []Hint{RateLimited(), Detail("userRateLimitExceeded")}, mcperr.RateLimit, true, 12 * time.Second, "(HTTP 403 Forbidden): userRateLimitExceeded; retry after 12s"},
		{404, nil, nil, mcperr.NotFound, false, 0, "no such resource (HTTP 404 Not Found)"},
		{410, nil, nil, mcperr.NotFound, false, 0, "HTTP 410 Gone"},
		{409, nil, nil, mcperr.Conflict, false, 0, "conflict"},
		{412, nil, nil, mcperr.Conflict, false, 0, "the resource changed"},
		{429, map[string]string{"Retry-After": "30"}, nil, mcperr.RateLimit, true, 30 * time.Second, "HTTP 429 Too Many Requests); retry after 30s"},
		{429, nil, nil, mcperr.RateLimit, true, 0, "limiting the rate"},
		{429, map[string]string{"Retry-After": "soon"}, nil, mcperr.RateLimit, true, 0, "HTTP 429"},
		{429, map[string]string{"Retry-After": "99999999999999999"}, nil, mcperr.RateLimit, true, 24 * time.Hour, "retry after 86400s"},
		{408, nil, nil, mcperr.Timeout, true, 0, "timed out (HTTP 408 Request Timeout)"},
		{504, nil, nil, mcperr.Timeout, true, 0, "HTTP 504 Gateway Timeout"},
		{500, nil, nil, mcperr.Upstream, true, 0, "failed (HTTP 500 Internal Server Error)"},
		{502, nil, nil, mcperr.Upstream, true, 0, "HTTP 502"},
		{503, map[string]string{"Retry-After": soon}, nil, mcperr.Upstream, true, -1, "unavailable (HTTP 503 Service Unavailable); retry after"},
		{599, nil, nil, mcperr.Upstream, true, 0, "(HTTP 599)"},
		{501, nil, nil, mcperr.Upstream, false, 0, "does not support"},
		{505, nil, nil, mcperr.Upstream, false, 0, "HTTP 505"},
		{418, nil, nil, mcperr.Upstream, false, 0, "refused the request (HTTP 418"},
		{302, nil, nil, mcperr.Upstream, false, 0, "unexpected HTTP 302 Found"},
		{200, nil, []Hint{RateLimited()}, mcperr.Upstream, false, 0, "unexpected HTTP 200"},
		{404, nil, []Hint{Detail("aircraft N123\n\tnot\x00 listed"), nil}, mcperr.NotFound, false, 0, "(HTTP 404 Not Found): aircraft N123 not listed"},
		// Any retryable status carries the wait the upstream asked for.
		{502, map[string]string{"Retry-After": "7"}, nil, mcperr.Upstream, true, 7 * time.Second, "HTTP 502 Bad Gateway); retry after 7s"},
		{504, map[string]string{"Retry-After": soon}, nil, mcperr.Timeout, true, -1, "retry after"},
		{404, map[string]string{"Retry-After": "7"}, nil, mcperr.NotFound, false, 0, "HTTP 404 Not Found"},
		// A request that is not safe to repeat: a failure while the
		// upstream handled it leaves its outcome unknown.
		{500, nil, []Hint{Method("POST")}, mcperr.Upstream, false, 0, "may have applied the POST request before failing, so the outcome is unknown"},
		{502, map[string]string{"Retry-After": "7"}, []Hint{Method("post")}, mcperr.Upstream, false, 0, "the outcome is unknown"},
		{504, nil, []Hint{Method("PATCH")}, mcperr.Timeout, false, 0, "PATCH request"},
		{408, nil, []Hint{Method("POST")}, mcperr.Timeout, false, 0, "the outcome is unknown"},
		{503, nil, []Hint{Method("POST")}, mcperr.Upstream, false, 0, "the outcome is unknown"},
		{503, map[string]string{"Retry-After": "7"}, []Hint{Method("POST")}, mcperr.Upstream, true, 7 * time.Second, "retry after 7s"},
		{429, map[string]string{"Retry-After": "7"}, []Hint{Method("POST")}, mcperr.RateLimit, true, 7 * time.Second, "retry after 7s"},
		{501, nil, []Hint{Method("POST")}, mcperr.Upstream, false, 0, "does not support"},
		{500, nil, []Hint{Method("POST"), Repeatable()}, mcperr.Upstream, true, 0, "HTTP 500"},
		{500, nil, []Hint{Method("GET")}, mcperr.Upstream, true, 0, "HTTP 500"},
		{500, nil, []Hint{Method("PUT")}, mcperr.Upstream, true, 0, "HTTP 500"},
		{500, nil, []Hint{Request(httptestRequest("POST", ""))}, mcperr.Upstream, false, 0, "the outcome is unknown"},
		{500, nil, []Hint{Request(httptestRequest("POST", "k-1"))}, mcperr.Upstream, true, 0, "HTTP 500"},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.words), func(t *testing.T) {
			var h http.Header
			if tc.header != nil {
				h = http.Header{}
				for k, v := range tc.header {
					h.Set(k, v)
				}
			}
			e := FromStatus("svc", tc.status, h, tc.hints...)
			if e.Code != tc.code || e.Retryable() != tc.retryable {
				t.Fatalf("%d → %s retryable=%v, want %s retryable=%v", tc.status, e.Code, e.Retryable(), tc.code, tc.retryable)
			}
			if !strings.HasPrefix(e.Message, `upstream "svc" `) && !strings.Contains(e.Message, `"svc"`) {
				t.Fatalf("message %q does not name the upstream", e.Message)
			}
			if !strings.Contains(e.Message, tc.words) {
				t.Fatalf("message %q lacks %q", e.Message, tc.words)
			}
			switch {
			case tc.retryAfter == -1:
				if e.RetryAfter < time.Minute || e.RetryAfter > 2*time.Minute {
					t.Fatalf("RetryAfter %s from an HTTP-date two minutes ahead", e.RetryAfter)
				}
			case e.RetryAfter != tc.retryAfter:
				t.Fatalf("RetryAfter %s, want %s", e.RetryAfter, tc.retryAfter)
			}
		})
	}
}

func TestDetailIsCut(t *testing.T) {
	long := strings.Repeat("é", 300)
	e := FromStatus("svc", 400, nil, Detail(long))
	detail := e.Message[strings.Index(e.Message, ": ")+2:]
	if len(detail) > maxDetail+len("…") || !strings.HasSuffix(detail, "…") || !strings.HasPrefix(detail, "éé") {
		t.Fatalf("detail of %d bytes: %q", len(detail), detail)
	}
	if strings.ContainsRune(detail, '\uFFFD') {
		t.Fatal("detail cut inside a character")
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestFromError(t *testing.T) {
	const secret = "abc123secretvalue"
	wrapURL := func(op string, err error) error {
		return &url.Error{Op: op, URL: "https://api.example.com/v1/x?api_key=" + secret, Err: err}
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
	keyed, _ := http.NewRequest(http.MethodPost, "http://x", nil)
	keyed.Header.Set("Idempotency-Key", "k")
	marked, _ := http.NewRequestWithContext(MarkIdempotent(context.Background()), http.MethodPost, "http://x", nil)
	plainPost, _ := http.NewRequest(http.MethodPost, "http://x", nil)
	for _, tc := range []struct {
		name      string
		err       error
		hints     []Hint
		code      mcperr.Code
		retryable bool
		words     string
	}{
		{"cancelled", wrapURL("Get", context.Canceled), nil, mcperr.Cancelled, false, "was cancelled"},
		{"deadline GET", wrapURL("Get", context.DeadlineExceeded), nil, mcperr.Timeout, true, "did not answer in time"},
		{"deadline POST", wrapURL("Post", context.DeadlineExceeded), nil, mcperr.Timeout, false, "POST request may still have been applied"},
		{"timeout PATCH", wrapURL("Patch", timeoutErr{}), nil, mcperr.Timeout, false, "PATCH request may still"},
		{"attempt timeout GET", wrapURL("Get", &attemptTimeoutError{d: time.Second}), nil, mcperr.Timeout, true, "in time"},
		{"timeout POST with key", context.DeadlineExceeded, []Hint{Request(keyed)}, mcperr.Timeout, true, "in time"},
		{"timeout POST marked", context.DeadlineExceeded, []Hint{Request(marked)}, mcperr.Timeout, true, "in time"},
		{"timeout POST from hint", context.DeadlineExceeded, []Hint{Request(plainPost)}, mcperr.Timeout, false, "POST request"},
		{"timeout without method", timeoutErr{}, nil, mcperr.Timeout, true, "in time"},
		{"refused POST", wrapURL("Post", refused), nil, mcperr.Transport, true, "connection refused"},
		{"dial timeout", wrapURL("Post", &net.OpError{Op: "dial", Err: timeoutErr{}}), nil, mcperr.Timeout, true, "could not connect to upstream \"svc\" in time"},
		{"dial other", &net.OpError{Op: "dial", Err: errBoom}, nil, mcperr.Transport, true, "could not connect"},
		{"no such host", wrapURL("Get", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}), nil, mcperr.Transport, false, "does not resolve"},
		{"dns temporary", &net.DNSError{Err: "server misbehaving", IsTemporary: true}, nil, mcperr.Transport, true, "DNS lookup"},
		{"reset GET", wrapURL("Get", reset), nil, mcperr.Transport, true, "connection to upstream \"svc\" was lost"},
		{"reset POST", wrapURL("Post", reset), nil, mcperr.Transport, false, "POST request may have been applied"},
		{"EOF DELETE", wrapURL("Delete", io.EOF), nil, mcperr.Transport, true, "was lost"},
		{"unexpected EOF", io.ErrUnexpectedEOF, nil, mcperr.Transport, true, "was lost"},
		{"unknown authority", wrapURL("Get", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), nil, mcperr.Transport, false, "unknown authority"},
		{"hostname", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "x"}, nil, mcperr.Transport, false, "does not match the host name"},
		{"expired", x509.CertificateInvalidError{Reason: x509.Expired}, nil, mcperr.Transport, false, "expired"},
		{"invalid cert", x509.CertificateInvalidError{Reason: x509.NotAuthorizedToSign}, nil, mcperr.Transport, false, "is not valid"},
		{"verification", &tls.CertificateVerificationError{Err: errBoom}, nil, mcperr.Transport, false, "could not be verified"},
		{"not TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, nil, mcperr.Transport, false, "did not answer with TLS"},
		{"alert", tls.AlertError(40), nil, mcperr.Transport, false, "handshake was refused"},
		{"too large", &BodyTooLargeError{Limit: 10}, nil, mcperr.Upstream, false, "limit of 10 bytes"},
		{"not JSON", &decodeError{err: errBoom}, nil, mcperr.Upstream, false, "not the expected JSON"},
		{"redirect", wrapURL("Get", &redirectError{from: "https://a", to: "https://b"}), nil, mcperr.Upstream, false, "redirected the request"},
		{"auth", &authError{err: errBoom}, nil, mcperr.Authentication, false, "could not obtain credentials"},
		{"unknown", wrapURL("Get", errBoom), nil, mcperr.Internal, false, "request to upstream \"svc\" failed"},
		{"detail", io.EOF, []Hint{Detail("while listing quotes")}, mcperr.Transport, true, "was lost: while listing quotes"},
		{"timeout POST from Method", context.DeadlineExceeded, []Hint{Method("POST")}, mcperr.Timeout, false, "POST request may still"},
		{"reset POST repeatable", wrapURL("Post", reset), []Hint{Method("POST"), Repeatable()}, mcperr.Transport, true, "was lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := FromError("svc", tc.err, tc.hints...)
			if e.Code != tc.code || e.Retryable() != tc.retryable {
				t.Fatalf("→ %s retryable=%v (%q), want %s retryable=%v", e.Code, e.Retryable(), e.Message, tc.code, tc.retryable)
			}
			if !strings.Contains(e.Message, tc.words) || !strings.Contains(e.Message, `"svc"`) {
				t.Fatalf("message %q lacks %q or the upstream's name", e.Message, tc.words)
			}
			if strings.Contains(e.Message, secret) || strings.Contains(e.Message, "api.example.com") || strings.Contains(e.Message, "boom") {
				t.Fatalf("message %q shows the URL or the cause", e.Message)
			}
			cause := errors.Unwrap(e)
			if cause == nil || strings.Contains(cause.Error(), secret) {
				t.Fatalf("cause %v missing or unredacted", cause)
			}
			if !errors.Is(e, errors.Unwrap(tc.err)) && !errors.Is(e, tc.err) {
				t.Fatalf("cause chain lost the original error %v", tc.err)
			}
		})
	}
}

func TestFromErrorKeepsMCPError(t *testing.T) {
	if FromError("svc", nil) != nil {
		t.Fatal("nil error mapped to non-nil")
	}
	own := mcperr.New(mcperr.Upstream, "circuit open")
	if got := FromError("svc", fmt.Errorf("wrapped: %w", own), Detail("ignored")); got != own {
		t.Fatalf("got %v, want the error itself", got)
	}
	c := newTestClient(t, testConfig(newFakeClock()))
	if c.Error(nil) != nil {
		t.Fatal("Client.Error(nil) != nil")
	}
	var e *mcperr.Error
	if err := c.Error(io.EOF); !errors.As(err, &e) || !strings.Contains(e.Message, `"avinode"`) {
		t.Fatalf("Client.Error = %v", err)
	}
}

func TestRealNetworkErrors(t *testing.T) {
	c := newTestClient(t, testConfig(newFakeClock()))
	_, err := c.HTTPClient().Get("http://" + retrytest.ClosedAddr(t) + "/?token=abcdef123456")
	e := mustMCP(t, "avinode", err, mcperr.Transport, true)
	if strings.Contains(errors.Unwrap(e).Error(), "abcdef123456") {
		t.Fatalf("cause keeps the secret query: %v", errors.Unwrap(e))
	}
}

// httptestRequest is a request of method, with an Idempotency-Key when key
// is set.
func httptestRequest(method, key string) *http.Request {
	req, _ := http.NewRequest(method, "https://svc.example/x", nil)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return req
}

// TestFromStatusOutcomeUnknown: the error of a request whose outcome is
// unknown says so in its chain, for callers that record it.
func TestFromStatusOutcomeUnknown(t *testing.T) {
	if e := FromStatus("svc", 500, nil, Method("POST")); !errors.Is(e, ErrOutcomeUnknown) {
		t.Errorf("POST 500: %v lacks ErrOutcomeUnknown", e)
	}
	for _, e := range []*mcperr.Error{FromStatus("svc", 500, nil, Method("GET")), FromStatus("svc", 429, nil, Method("POST")), FromStatus("svc", 500, nil)} {
		if errors.Is(e, ErrOutcomeUnknown) {
			t.Errorf("%s: marked unknown", e.Message)
		}
	}
}

// TestFromErrorOutcomeUnknown: a failure after a POST was sent carries
// ErrOutcomeUnknown; one before sending, or of a GET, does not.
func TestFromErrorOutcomeUnknown(t *testing.T) {
	reset := &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}}
	if e := FromError("svc", reset); !errors.Is(e, ErrOutcomeUnknown) || !errors.Is(e, syscall.ECONNRESET) {
		t.Errorf("POST reset: %v", e)
	}
	refused := &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	getReset := &url.Error{Op: "Get", URL: "https://x", Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}}
	for _, err := range []error{refused, getReset} {
		if e := FromError("svc", err); errors.Is(e, ErrOutcomeUnknown) {
			t.Errorf("%v: marked unknown", err)
		}
	}
}
