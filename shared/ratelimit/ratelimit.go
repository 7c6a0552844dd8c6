// Package ratelimit gives each (agent, tool) pair its own token bucket, so a
// runaway agent loop is stopped with RATE_LIMIT_ERROR and a retry-after
// instead of hammering an upstream API or the host.
package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter holds the buckets. A nil *Limiter allows everything.
type Limiter struct {
	perMinute float64
	burst     int
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	now       func() time.Time
}

// New makes a limiter allowing perMinute calls per agent and tool, with the
// given burst. perMinute <= 0 disables limiting (returns nil).
func New(perMinute float64, burst int) *Limiter {
	if perMinute <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &Limiter{perMinute: perMinute, burst: burst, buckets: map[string]*rate.Limiter{}, now: time.Now}
}

// Rate is a request rate: PerMinute requests on average, in bursts of up to
// Burst. A zero Rate limits nothing.
type Rate struct {
	PerMinute float64
	Burst     int
}

// ParseRate reads the fleet's one rate grammar: "N/s", "N/min" or "N/h",
// optionally followed by ",burst=N" (default: one second's worth, plus
// one); "off" (or "", "0") is no limit, the zero Rate.
func ParseRate(spec string) (Rate, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "0" || spec == "off" {
		return Rate{}, nil
	}
	rateSpec, burstSpec, _ := strings.Cut(spec, ",")
	n, unit, ok := strings.Cut(rateSpec, "/")
	if !ok {
		return Rate{}, fmt.Errorf("want N/s, N/min or N/h (optionally ,burst=N), or off; got %q", spec)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
	// !(v > 0) also catches NaN, which would otherwise parse and then limit
	// nothing; an infinite rate likewise limits nothing ("off" says so).
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return Rate{}, fmt.Errorf("%q is not a positive number", strings.TrimSpace(n))
	}
	switch strings.TrimSpace(unit) {
	case "s", "sec", "second":
		v *= 60
	case "m", "min", "minute":
	case "h", "hour":
		v /= 60
	default:
		return Rate{}, fmt.Errorf("the unit must be s, min or h, not %q", strings.TrimSpace(unit))
	}
	r := Rate{PerMinute: v, Burst: int(v/60) + 1}
	if burstSpec != "" {
		k, val, ok := strings.Cut(strings.TrimSpace(burstSpec), "=")
		b, err := strconv.Atoi(strings.TrimSpace(val))
		if !ok || strings.TrimSpace(k) != "burst" || err != nil || b < 1 {
			return Rate{}, fmt.Errorf("want ,burst=N with N at least 1, got %q", burstSpec)
		}
		r.Burst = b
	}
	return r, nil
}

// String renders the rate in ParseRate's grammar.
func (r Rate) String() string {
	if r.PerMinute <= 0 {
		return "off"
	}
	return fmt.Sprintf("%s/min,burst=%d", strconv.FormatFloat(r.PerMinute, 'f', -1, 64), r.Burst)
}

// Parse reads a per-agent-and-tool limit in ParseRate's grammar; "off" is
// no limiter (nil).
func Parse(spec string) (*Limiter, error) {
	r, err := ParseRate(spec)
	if err != nil {
		return nil, fmt.Errorf("rate limit %q: %w", strings.TrimSpace(spec), err)
	}
	return New(r.PerMinute, r.Burst), nil
}

// Allow takes one token for (agent, tool). When the bucket is empty it
// returns false and how long until a token is available.
func (l *Limiter) Allow(agent, tool string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	key := agent + "\x00" + tool
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(l.perMinute/60), l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	now := l.now()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}
