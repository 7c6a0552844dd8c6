package retry

import (
	"math"
	"math/rand/v2"
	"time"
)

// Defaults suit an interactive tool call: the worst case of four attempts is a
// little over a second of backoff, short enough that the model is not left
// waiting, long enough to ride out a connection reset or a pod restart.
const (
	DefaultMaxAttempts   = 4
	DefaultBaseDelay     = 200 * time.Millisecond
	DefaultMaxDelay      = 10 * time.Second
	DefaultMultiplier    = 2.0
	DefaultJitter        = 0.5
	DefaultMaxRetryAfter = 60 * time.Second
)

// Policy says how often and how patiently to retry. A zero field takes its
// Default value, except Jitter, where zero means "no jitter"; so Policy{} is
// usable and Policy{MaxAttempts: 1} disables retries.
type Policy struct {
	// MaxAttempts counts the first call too.
	MaxAttempts int
	// BaseDelay is the wait after the first failure; each further failure
	// multiplies it by Multiplier, up to MaxDelay.
	BaseDelay  time.Duration
	MaxDelay   time.Duration
	Multiplier float64
	// Jitter is the fraction of each delay that is randomised: the wait is
	// drawn from [delay*(1-Jitter), delay]. 1 is "full jitter". Randomising
	// keeps clients that failed together from retrying in lockstep and
	// knocking the upstream over again.
	Jitter float64
	// MaxRetryAfter caps how long a server-requested delay (Retry-After) is
	// honoured. A server asking for longer is saying "not now"; sleeping that
	// long would hold a tool call hostage, so the error is returned instead
	// and the caller can report when to come back.
	MaxRetryAfter time.Duration
}

// DefaultPolicy returns the fleet's standard policy.
func DefaultPolicy() Policy {
	return Policy{
		MaxAttempts:   DefaultMaxAttempts,
		BaseDelay:     DefaultBaseDelay,
		MaxDelay:      DefaultMaxDelay,
		Multiplier:    DefaultMultiplier,
		Jitter:        DefaultJitter,
		MaxRetryAfter: DefaultMaxRetryAfter,
	}
}

func (p Policy) normalized() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	// Below 1 the delays would shrink, which defeats backing off; NaN would
	// poison every computation.
	if !(p.Multiplier >= 1) {
		p.Multiplier = DefaultMultiplier
	}
	if !(p.Jitter >= 0) {
		p.Jitter = 0
	}
	if p.Jitter > 1 {
		p.Jitter = 1
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return p
}

// Backoff returns the wait after the given failed attempt (1 is the first
// call), jittered from the process-wide random source. Do and Transport use
// their injected source instead, so tests can pin it.
func (p Policy) Backoff(attempt int) time.Duration {
	return p.backoff(attempt, rand.Float64)
}

func (p Policy) backoff(attempt int, rnd func() float64) time.Duration {
	p = p.normalized()
	if attempt < 1 {
		attempt = 1
	}
	d := float64(p.BaseDelay) * math.Pow(p.Multiplier, float64(attempt-1))
	// The cap applies before jitter so MaxDelay is a true upper bound; the
	// comparison also absorbs +Inf from large attempt numbers.
	if d > float64(p.MaxDelay) {
		d = float64(p.MaxDelay)
	}
	if p.Jitter > 0 {
		r := rnd()
		// A misbehaving injected source must not produce negative or
		// over-cap waits.
		r = min(max(r, 0), 1)
		d -= d * p.Jitter * r
	}
	return time.Duration(d)
}

// delay picks the wait before the next attempt, combining backoff with a
// requested delay. ok is false when the request cannot be honoured.
func (p Policy) delay(attempt int, requested time.Duration, hasRequested, circuit bool, rnd func() float64) (d time.Duration, ok bool) {
	d = p.backoff(attempt, rnd)
	if !hasRequested {
		return d, true
	}
	limit := p.MaxRetryAfter
	if circuit {
		// An open circuit exists to fail fast. Waiting out its whole cooldown
		// would turn it into a slow failure, so only wait when the remainder
		// is no longer than an ordinary backoff could have been.
		limit = p.MaxDelay
	}
	if requested > limit {
		return 0, false
	}
	return max(d, requested), true
}
