package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// ErrCircuitOpen is the cause of every rejection by an open Breaker; test for
// it with errors.Is. Such a call never reached the upstream.
var ErrCircuitOpen = errors.New("retry: circuit open")

// DefaultCooldown applies when NewBreaker is given a non-positive cooldown.
const DefaultCooldown = 30 * time.Second

// State is a Breaker's position.
type State int

const (
	// StateClosed lets every call through.
	StateClosed State = iota
	// StateOpen rejects every call until the cooldown has passed.
	StateOpen
	// StateHalfOpen lets one trial call through to find out whether the
	// upstream has recovered.
	StateHalfOpen
)

func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateOpen:
		return "open"
	case StateHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Breaker is a circuit breaker for one upstream. While the upstream keeps
// failing, waiting for each call to time out wastes the caller's deadline and
// adds load to a service that is already struggling; an open breaker answers
// at once with an error that says when to try again. Safe for concurrent use.
type Breaker struct {
	name      string
	threshold int
	cooldown  time.Duration
	isFailure func(error) bool
	clock     Clock

	mu        sync.Mutex
	state     State
	failures  int // consecutive
	openUntil time.Time
	probing   bool
	// gen changes on every transition, so the result of a call admitted
	// under an earlier state cannot move the current one; a slow success
	// from before the circuit opened proves nothing about now.
	gen uint64
}

// BreakerOption configures a Breaker.
type BreakerOption func(*Breaker)

// WithFailureClassifier replaces IsUpstreamFailure as the test for which
// errors count towards opening the circuit. Errors it rejects count as
// successes: the upstream answered, so it is up.
func WithFailureClassifier(f func(error) bool) BreakerOption {
	return func(b *Breaker) {
		if f != nil {
			b.isFailure = f
		}
	}
}

// WithBreakerClock replaces the wall clock, for tests.
func WithBreakerClock(c Clock) BreakerOption {
	return func(b *Breaker) {
		if c != nil {
			b.clock = c
		}
	}
}

// NewBreaker returns a closed breaker for the upstream called name (shown to
// clients in error messages). It opens after failureThreshold consecutive
// failures (at least 1) and allows a trial call after cooldown.
func NewBreaker(name string, failureThreshold int, cooldown time.Duration, opts ...BreakerOption) *Breaker {
	b := &Breaker{
		name:      name,
		threshold: max(failureThreshold, 1),
		cooldown:  cooldown,
		isFailure: IsUpstreamFailure,
		clock:     realClock{},
	}
	if b.cooldown <= 0 {
		b.cooldown = DefaultCooldown
	}
	for _, o := range opts {
		o(b)
	}
	return b
}

// State reports the breaker's position. An open breaker whose cooldown has
// passed reports half-open: the next call will be the trial.
func (b *Breaker) State() State {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == StateOpen && !now.Before(b.openUntil) {
		return StateHalfOpen
	}
	return b.state
}

// Do calls fn unless the circuit is open, and records the outcome. It returns
// fn's error unchanged, or, when rejecting, an *mcperr.Error (code
// UPSTREAM_ERROR, retryable, RetryAfter set to the remaining cooldown) whose
// cause is ErrCircuitOpen. A cancelled call does not count either way: the
// caller gave up, which says nothing about the upstream.
func (b *Breaker) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		// Spending the half-open trial on a dead context would waste it.
		return err
	}
	gen, err := b.admit()
	if err != nil {
		return err
	}
	settled := false
	defer func() {
		if !settled {
			// fn panicked; count it so the half-open trial slot is not
			// held forever.
			b.settle(gen, outcomeFailure)
		}
	}()
	err = fn(ctx)
	settled = true
	b.settle(gen, b.classify(err))
	return err
}

type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeIgnored
)

func (b *Breaker) classify(err error) outcome {
	switch {
	case err == nil:
		return outcomeSuccess
	case errors.Is(err, context.Canceled):
		return outcomeIgnored
	case b.isFailure(err):
		return outcomeFailure
	}
	return outcomeSuccess
}

func (b *Breaker) admit() (uint64, error) {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case StateOpen:
		if now.Before(b.openUntil) {
			return 0, b.openError(b.openUntil.Sub(now))
		}
		b.state = StateHalfOpen
		b.gen++
		b.probing = true
	case StateHalfOpen:
		if b.probing {
			e := mcperr.New(mcperr.Upstream,
				"upstream %q is unavailable: circuit half-open after %d consecutive failures; a trial call is in progress",
				b.name, b.failures)
			return 0, e.WithRetryable(true).WithCause(ErrCircuitOpen)
		}
		b.probing = true
	}
	return b.gen, nil
}

func (b *Breaker) openError(remaining time.Duration) error {
	// Whole seconds, rounded up, read better than "1m0.2s" and agree with
	// mcperr's retry_after_seconds.
	shown := int64((remaining + time.Second - 1) / time.Second)
	e := mcperr.New(mcperr.Upstream,
		"upstream %q is unavailable: circuit open after %d consecutive failures; next attempt in %ds",
		b.name, b.failures, shown)
	e.RetryAfter = remaining
	return e.WithRetryable(true).WithCause(ErrCircuitOpen)
}

func (b *Breaker) settle(gen uint64, o outcome) {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen != b.gen {
		return
	}
	switch o {
	case outcomeIgnored:
		if b.state == StateHalfOpen {
			b.probing = false
		}
	case outcomeSuccess:
		b.failures = 0
		if b.state == StateHalfOpen {
			b.state = StateClosed
			b.probing = false
			b.gen++
		}
	case outcomeFailure:
		b.failures++
		if b.state == StateHalfOpen || b.failures >= b.threshold {
			b.state = StateOpen
			b.openUntil = now.Add(b.cooldown)
			b.probing = false
			b.gen++
		}
	}
}

// IsUpstreamFailure is the default failure classifier. It counts what points
// at the upstream being unwell: 5xx responses, transport errors, timeouts and
// retryable errors. It does not count 4xx responses (our request was wrong,
// the upstream is fine) nor rate limiting: that is the upstream working as
// designed, and opening the circuit on one user's quota would cut off
// everyone.
func IsUpstreamFailure(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, ErrCircuitOpen) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500
	}
	var me *mcperr.Error
	if errors.As(err, &me) {
		return me.Code != mcperr.RateLimit && me.Retryable()
	}
	var r retryabler
	if errors.As(err, &r) {
		return r.Retryable()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
