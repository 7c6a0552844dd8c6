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
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
)

// maxDetail bounds a caller's Detail: a message is for a model to act on,
// not a place for an upstream's whole error document.
const maxDetail = 200

// maxRetryAfter bounds a server-requested delay carried in an error, so an
// absurd Retry-After cannot overflow retry_after_seconds.
const maxRetryAfter = 24 * time.Hour

// Hint adds what the caller knows about a failure to FromStatus or FromError.
type Hint func(*hints)

type hints struct {
	detail      string
	rateLimited bool
	// method and repeatable say whether a failure after sending leaves the
	// outcome unknown; FromError otherwise reads the method from the
	// *url.Error of net/http.
	method     string
	repeatable bool
}

func collect(hs []Hint) hints {
	var h hints
	for _, f := range hs {
		if f != nil {
			f(&h)
		}
	}
	return h
}

// Detail appends a short text to the message, e.g. the upstream's error code
// or which record was missing. It must be safe to show: never a response
// body as is, a token or a URL with its query. Control characters are
// dropped and the text is cut at 200 bytes.
func Detail(text string) Hint {
	return func(h *hints) { h.detail = cleanDetail(text) }
}

// RateLimited says that the response is a rate limit although its status is
// not 429, as with a Google API 403 whose reason is rateLimitExceeded or
// userRateLimitExceeded. The error becomes a retryable RATE_LIMIT_ERROR.
func RateLimited() Hint {
	return func(h *hints) { h.rateLimited = true }
}

// Request names the request a failure belongs to, so that FromStatus and
// FromError can tell whether its outcome is unknown: a request that is not
// safe to repeat (a POST or PATCH not marked with MarkIdempotent or an
// idempotency key) may have been applied before a 5xx, a timeout or a lost
// connection. DoJSON passes it itself.
func Request(req *http.Request) Hint {
	return func(h *hints) {
		h.method = req.Method
		h.repeatable = isRepeatable(req)
	}
}

// Method names the request's method for a caller that has no
// *http.Request at hand (a Google API client's error); see Request. Add
// Repeatable when the request was marked with MarkIdempotent.
func Method(method string) Hint {
	return func(h *hints) { h.method = method }
}

// Repeatable says that the request is safe to repeat although its method is
// not idempotent: a POST that only reads, or that sets values rather than
// adding them.
func Repeatable() Hint {
	return func(h *hints) { h.repeatable = true }
}

// ErrOutcomeUnknown is in the chain of an error from a request that is not
// safe to repeat and may have been applied although no answer said so: a
// 5xx, a timeout or a lost connection after it was sent. Such an error is
// not retryable, since repeating the request may do it twice (a second
// mail, a second row); its message says to check first.
var ErrOutcomeUnknown = errors.New("the outcome of the request is unknown")

func cleanDetail(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r) || r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return textcut.Ellipsis(s, maxDetail)
}

func statusLine(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("HTTP %d %s", code, t)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// FromStatus maps an error response of the upstream called name to the
// mcperr taxonomy. header may be nil; its Retry-After (seconds or HTTP-date)
// sets RetryAfter on every retryable error. For a Google API error, pass its
// Code and Header, and RateLimited() when its reason says so.
//
// With Request or Method naming a request that is not safe to repeat (a
// POST), a 408 or a 5xx is not retryable and carries ErrOutcomeUnknown: the
// upstream may have applied it before failing. A 429, and a 503 with
// Retry-After, stay retryable: the upstream said it did not process it.
//
//	400 413 414 415 422       VALIDATION_ERROR      not retryable
//	401 407                   AUTHENTICATION_ERROR  not retryable
//	403                       PERMISSION_DENIED     not retryable (RATE_LIMIT_ERROR with RateLimited)
//	404 410                   NOT_FOUND             not retryable
//	409 412                   CONFLICT              not retryable
//	429                       RATE_LIMIT_ERROR      retryable, with Retry-After
//	408 504                   TIMEOUT_ERROR         retryable
//	501 505                   UPSTREAM_ERROR        not retryable
//	other 5xx                 UPSTREAM_ERROR        retryable (503 with Retry-After)
//	other 4xx, 1xx-3xx        UPSTREAM_ERROR        not retryable
func FromStatus(name string, status int, header http.Header, hs ...Hint) *mcperr.Error {
	h := collect(hs)
	line := statusLine(status)
	var e *mcperr.Error
	switch {
	case status == http.StatusTooManyRequests || (h.rateLimited && status >= 400):
		e = mcperr.New(mcperr.RateLimit, "upstream %q is limiting the rate of requests (%s)", name, line)
		// Set here, not only by the general line below: a rate-limited 5xx of
		// an unsafe request is made not retryable by the outcome check, and
		// keeps its Retry-After.
		e.RetryAfter = retryAfter(header)
	case status == http.StatusBadRequest, status == http.StatusRequestEntityTooLarge,
		status == http.StatusRequestURITooLong, status == http.StatusUnsupportedMediaType,
		status == http.StatusUnprocessableEntity:
		e = mcperr.New(mcperr.Validation, "upstream %q rejected the request as invalid (%s)", name, line)
	case status == http.StatusUnauthorized, status == http.StatusProxyAuthRequired:
		e = mcperr.New(mcperr.Authentication,
			"upstream %q rejected the server's credentials (%s); check the configured credentials", name, line)
	case status == http.StatusForbidden:
		e = mcperr.New(mcperr.PermissionDeny, "upstream %q denied access (%s)", name, line)
	case status == http.StatusNotFound, status == http.StatusGone:
		e = mcperr.New(mcperr.NotFound, "upstream %q has no such resource (%s)", name, line)
	case status == http.StatusConflict:
		e = mcperr.New(mcperr.Conflict, "upstream %q reports a conflict with the current state (%s)", name, line)
	case status == http.StatusPreconditionFailed:
		e = mcperr.New(mcperr.Conflict, "upstream %q reports that the resource changed (%s)", name, line)
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		e = mcperr.New(mcperr.Timeout, "upstream %q timed out (%s)", name, line)
	case status == http.StatusNotImplemented, status == http.StatusHTTPVersionNotSupported:
		e = mcperr.New(mcperr.Upstream, "upstream %q does not support the request (%s)", name, line).WithRetryable(false)
	case status == http.StatusServiceUnavailable:
		e = mcperr.New(mcperr.Upstream, "upstream %q is unavailable (%s)", name, line)
	case status >= 500 && status <= 599:
		e = mcperr.New(mcperr.Upstream, "upstream %q failed (%s)", name, line)
	case status >= 400 && status <= 499:
		e = mcperr.New(mcperr.Upstream, "upstream %q refused the request (%s)", name, line).WithRetryable(false)
	default:
		e = mcperr.New(mcperr.Upstream, "upstream %q answered with an unexpected %s", name, line).WithRetryable(false)
	}
	if h.detail != "" {
		e.Message += ": " + h.detail
	}
	if unknown := unsafeRequest(h); unknown != "" && e.Retryable() && statusLeavesOutcomeUnknown(status, header) {
		e.Message += fmt.Sprintf("; the upstream may have applied the %s before failing, so the outcome is unknown: check before repeating it", unknown)
		return e.WithRetryable(false).WithCause(ErrOutcomeUnknown)
	}
	if e.Retryable() && e.RetryAfter == 0 {
		e.RetryAfter = retryAfter(header)
	}
	if e.RetryAfter > 0 && e.Retryable() {
		e.Message += fmt.Sprintf("; retry after %ds", int64((e.RetryAfter+time.Second-1)/time.Second))
	}
	return e
}

// statusLeavesOutcomeUnknown: the upstream failed while it may have been
// handling the request. A 429 is refused before processing, and so is a
// 503 that says when to come back.
func statusLeavesOutcomeUnknown(status int, header http.Header) bool {
	switch {
	case status == http.StatusServiceUnavailable:
		return retryAfter(header) == 0
	case status == http.StatusRequestTimeout:
		return true
	}
	return status >= 500 && status <= 599
}

func retryAfter(header http.Header) time.Duration {
	if header == nil {
		return 0
	}
	d, ok := retry.ParseRetryAfter(header.Get("Retry-After"), time.Now())
	if !ok {
		return 0
	}
	return min(d, maxRetryAfter)
}

// FromError maps an error from a request to the upstream called name (from
// http.Client.Do, a body read, DecodeJSON or the Auth hook) to the mcperr
// taxonomy; nil stays nil. An *mcperr.Error in the chain (an open circuit,
// an Auth hook's own) is returned as it is. The error is kept as the cause,
// with secrets in its URL masked, for logs only.
//
//	context cancelled                    CANCELLED             not retryable
//	deadline, timeouts                   TIMEOUT_ERROR         retryable*
//	refused, reset, closed connection    TRANSPORT_ERROR       retryable*
//	DNS failure                          TRANSPORT_ERROR       retryable (not when the host does not exist)
//	TLS and certificate errors           TRANSPORT_ERROR       not retryable
//	Auth hook failure                    AUTHENTICATION_ERROR  not retryable
//	body over its cap, not JSON          UPSTREAM_ERROR        not retryable
//	redirect to another host             UPSTREAM_ERROR        not retryable
//	anything else                        INTERNAL_ERROR        not retryable
//
// * A timeout or lost connection after a request that is not idempotent
// (POST, PATCH) was sent is not retryable: the upstream may have applied it,
// and the message says to check before repeating.
func FromError(name string, err error, hs ...Hint) *mcperr.Error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*mcperr.Error](err); ok {
		return e
	}
	h := collect(hs)
	e, unknown := classify(name, err, h)
	if h.detail != "" {
		e.Message += ": " + h.detail
	}
	cause := scrubCause(err)
	if unknown {
		cause = fmt.Errorf("%w: %w", ErrOutcomeUnknown, cause)
	}
	return e.WithCause(cause)
}

// classify maps err; unknown reports that the request may have been applied.
func classify(name string, err error, h hints) (e *mcperr.Error, unknown bool) {
	if _, ok := errors.AsType[*authError](err); ok {
		return mcperr.New(mcperr.Authentication, "could not obtain credentials for upstream %q", name), false
	}
	if errors.Is(err, context.Canceled) {
		return mcperr.New(mcperr.Cancelled, "the request to upstream %q was cancelled", name), false
	}
	if re, ok := errors.AsType[*redirectError](err); ok {
		return mcperr.New(mcperr.Upstream, "upstream %q redirected the request (%s); not followed", name, re.reason()).
			WithRetryable(false), false
	}
	if be, ok := errors.AsType[*BodyTooLargeError](err); ok {
		return mcperr.New(mcperr.Upstream, "the response of upstream %q exceeds the limit of %d bytes", name, be.Limit).
			WithRetryable(false), false
	}
	if _, ok := errors.AsType[*decodeError](err); ok {
		return mcperr.New(mcperr.Upstream, "upstream %q sent a response that is not the expected JSON", name).
			WithRetryable(false), false
	}
	if reason, ok := tlsFailure(err); ok {
		return mcperr.New(mcperr.Transport, "the TLS connection to upstream %q failed: %s", name, reason).
			WithRetryable(false), false
	}
	if de, ok := errors.AsType[*net.DNSError](err); ok {
		if de.IsNotFound {
			// A name that does not exist will not exist on the next try
			// either; it is a configuration problem.
			return mcperr.New(mcperr.Transport, "the host of upstream %q does not resolve (no such host)", name).
				WithRetryable(false), false
		}
		return mcperr.New(mcperr.Transport, "the DNS lookup for upstream %q failed", name), false
	}
	if isDial(err) {
		// Never sent, so always safe to repeat.
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return mcperr.New(mcperr.Transport, "could not connect to upstream %q: connection refused", name), false
		case isTimeout(err):
			return mcperr.New(mcperr.Timeout, "could not connect to upstream %q in time", name), false
		}
		return mcperr.New(mcperr.Transport, "could not connect to upstream %q", name), false
	}
	what := outcomeUnknown(err, h)
	if isTimeout(err) {
		if what != "" {
			return mcperr.New(mcperr.Timeout, "upstream %q did not answer in time; the %s may still have been applied, so check before repeating it", name, what).
				WithRetryable(false), true
		}
		return mcperr.New(mcperr.Timeout, "upstream %q did not answer in time", name), false
	}
	if isConnectionLost(err) {
		if what != "" {
			return mcperr.New(mcperr.Transport, "the connection to upstream %q was lost; the %s may have been applied, so check before repeating it", name, what).
				WithRetryable(false), true
		}
		return mcperr.New(mcperr.Transport, "the connection to upstream %q was lost", name), false
	}
	return mcperr.New(mcperr.Internal, "the request to upstream %q failed", name), false
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

func isDial(err error) bool {
	op, ok := errors.AsType[*net.OpError](err)
	return ok && op.Op == "dial"
}

func isConnectionLost(err error) bool {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	_, ok := errors.AsType[*net.OpError](err)
	return ok
}

// outcomeUnknown names the request ("POST request") when err may have come
// after the upstream received it and repeating it is not known to be safe;
// otherwise it returns "".
func outcomeUnknown(err error, h hints) string {
	if h.method == "" {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			h.method = ue.Op
		}
	}
	return unsafeRequest(h)
}

// unsafeRequest names the request ("POST request") when the hints say it
// is not safe to repeat; "" when they say it is, or name no method.
func unsafeRequest(h hints) string {
	if h.repeatable || h.method == "" {
		return ""
	}
	method := strings.ToUpper(h.method)
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete, http.MethodTrace:
		return ""
	}
	return method + " request"
}

// isRepeatable mirrors retry.Transport's rule for requests it may resend.
func isRepeatable(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	if req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != "" {
		return true
	}
	marked, _ := req.Context().Value(repeatableKey{}).(bool)
	return marked
}

func tlsFailure(err error) (string, bool) {
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return "its certificate is signed by an unknown authority", true
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return "its certificate does not match the host name", true
	}
	if ce, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		if ce.Reason == x509.Expired {
			return "its certificate has expired or is not yet valid", true
		}
		return "its certificate is not valid", true
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return "its certificate could not be verified", true
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return "it did not answer with TLS", true
	}
	if _, ok := errors.AsType[tls.AlertError](err); ok {
		return "the handshake was refused", true
	}
	return "", false
}

// scrubCause returns err with the URL of net/http's *url.Error rid of
// secrets, since the cause reaches logs.
func scrubCause(err error) error {
	ue, ok := err.(*url.Error)
	if !ok {
		return err
	}
	u := ue.URL
	if r, changed := logging.RedactURL(u); changed {
		u = r
	} else if _, err := url.Parse(u); err != nil {
		// RedactURL cannot see into a URL that does not parse; drop what
		// could hide a secret.
		if i := strings.IndexAny(u, "?@"); i >= 0 {
			u = u[:i] + "[REDACTED]"
		}
	}
	return &url.Error{Op: ue.Op, URL: u, Err: ue.Err}
}
