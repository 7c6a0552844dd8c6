package retry

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// Clock is the time source for waiting. It is an interface so tests can make
// every backoff instantaneous and assert the exact delays chosen.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, returning ctx.Err() in the
	// latter case.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error { return Sleep(ctx, d) }

// Option configures Do and Transport.
type Option func(*settings)

type settings struct {
	clock           Clock
	rand            func() float64
	breaker         *Breaker
	retryableStatus []func(*http.Response) bool
}

func newSettings(opts []Option) settings {
	s := settings{clock: realClock{}, rand: rand.Float64}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// WithClock replaces the wall clock, for tests.
func WithClock(c Clock) Option {
	return func(s *settings) {
		if c != nil {
			s.clock = c
		}
	}
}

// WithRand replaces the jitter source; f must return values in [0, 1).
func WithRand(f func() float64) Option {
	return func(s *settings) {
		if f != nil {
			s.rand = f
		}
	}
}

// WithBreaker routes every attempt through b, so a failing upstream is
// noticed across calls and rejected attempts never reach the network.
func WithBreaker(b *Breaker) Option {
	return func(s *settings) { s.breaker = b }
}

// WithRetryableStatus adds a test for responses that are transient although
// their status code does not say so (see GoogleRateLimited). It only affects
// Transport, and only requests that are safe to repeat. Several may be given;
// any one saying yes is enough.
func WithRetryableStatus(f func(resp *http.Response) bool) Option {
	return func(s *settings) {
		if f != nil {
			s.retryableStatus = append(s.retryableStatus, f)
		}
	}
}

func (s *settings) call(ctx context.Context, fn func(context.Context) error) error {
	if s.breaker != nil {
		return s.breaker.Do(ctx, fn)
	}
	return fn(ctx)
}

// outlives reports whether waiting d would run past ctx's deadline. Giving
// up now returns the upstream's error, which says far more than the
// "context deadline exceeded" we would get by sleeping into the deadline.
func (s *settings) outlives(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && s.clock.Now().Add(d).After(deadline)
}
