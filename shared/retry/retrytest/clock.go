// Package retrytest holds test doubles for code that retries: a Clock whose
// waits are instantaneous and recorded, and an Upstream that fails as a
// test scripts it.
package retrytest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// Clock is a retry.Clock whose waits are instantaneous and recorded, so a
// test can assert the exact delays the code chose. Safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewClock returns a clock that reads start until it sleeps or is advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and moves the clock on by it at once; a done ctx is
// returned as its error instead.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

// Advance moves the clock on by d without recording a sleep.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Slept returns the sleeps so far, in order.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// AssertSlept fails t unless the clock's sleeps so far are exactly want, in
// order.
func (c *Clock) AssertSlept(t testing.TB, want ...time.Duration) {
	t.Helper()
	if got := c.Slept(); !slices.Equal(got, want) {
		t.Fatalf("slept %v, want %v", got, want)
	}
}
