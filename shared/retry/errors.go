package retry

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// retryabler is the contract by which an error states its own retry advice.
// *mcperr.Error satisfies it, as do the markers below.
type retryabler interface{ Retryable() bool }

// Permanent marks err as not worth repeating, whatever it wraps. Use it when
// the caller knows more than the error, e.g. a 503 from an endpoint that is
// known to be switched off.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &markedError{err: err, retryable: false}
}

// Retryable marks err as worth repeating after the normal backoff. Errors
// that say nothing about themselves are not retried, so an upstream client
// uses this to opt in the failures it knows to be transient.
func Retryable(err error) error {
	return RetryAfter(err, 0)
}

// RetryAfter marks err as worth repeating no sooner than d, typically the
// upstream's Retry-After. Do waits the longer of d and its own backoff, and
// gives up rather than wait past Policy.MaxRetryAfter.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &markedError{err: err, retryable: true, after: max(d, 0)}
}

// markedError carries advice without changing the message, so logs and
// mcperr.Wrap see the original error.
type markedError struct {
	err       error
	retryable bool
	after     time.Duration
}

func (e *markedError) Error() string   { return e.err.Error() }
func (e *markedError) Unwrap() error   { return e.err }
func (e *markedError) Retryable() bool { return e.retryable }

// IsRetryable reports whether repeating the call that returned err may
// succeed. The outermost error in the chain with an opinion wins, so a marker
// overrides what it wraps.
func IsRetryable(err error) bool {
	var r retryabler
	return errors.As(err, &r) && r.Retryable()
}

// RetryAfterOf returns the delay err asks for: from RetryAfter, or from an
// *mcperr.Error's RetryAfter field.
func RetryAfterOf(err error) (time.Duration, bool) {
	var m *markedError
	if errors.As(err, &m) && m.after > 0 {
		return m.after, true
	}
	var e *mcperr.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}

// StatusError is how Transport tells a Breaker's failure classifier about an
// HTTP error response, since a RoundTripper reports those as responses, not
// errors. Transport never returns it to callers.
type StatusError struct {
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("upstream responded %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// interrupted builds the error for a context that ended between attempts.
// It wraps both so errors.Is(err, context.Canceled) holds and the log still
// shows why we were retrying in the first place.
func interrupted(ctxErr, last error, attempts int) error {
	if last == nil {
		return ctxErr
	}
	if errors.Is(last, ctxErr) {
		return last
	}
	return fmt.Errorf("retry: %w after %d attempt(s); last error: %w", ctxErr, attempts, last)
}
