package retry

import (
	"context"
	"errors"
)

// Do calls fn until it succeeds, returns an error that is not retryable, or
// p.MaxAttempts calls have been made; it returns the last error unchanged
// (fn's, or the breaker's rejection under WithBreaker) so callers can still
// inspect it. Between attempts it waits p's backoff, or
// longer if the error asks for it (see RetryAfter). If ctx ends first, the
// returned error wraps both ctx.Err() and fn's last error.
func Do(ctx context.Context, p Policy, fn func(ctx context.Context) error, opts ...Option) error {
	s := newSettings(opts)
	p = p.normalized()
	var last error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return interrupted(err, last, attempt-1)
		}
		err := s.call(ctx, fn)
		if err == nil {
			return nil
		}
		last = err
		if cerr := ctx.Err(); cerr != nil {
			return interrupted(cerr, err, attempt)
		}
		if attempt >= p.MaxAttempts || !IsRetryable(err) {
			return err
		}
		requested, has := RetryAfterOf(err)
		d, ok := p.delay(attempt, requested, has, errors.Is(err, ErrCircuitOpen), s.rand)
		if !ok || s.outlives(ctx, d) {
			return err
		}
		if serr := s.clock.Sleep(ctx, d); serr != nil {
			return interrupted(serr, err, attempt)
		}
	}
}
