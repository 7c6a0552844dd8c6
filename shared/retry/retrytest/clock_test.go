package retrytest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/retry"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

var _ retry.Clock = (*retrytest.Clock)(nil)

func TestClock(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := retrytest.NewClock(start)
	if err := c.Sleep(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	if err := c.Sleep(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := c.Now(), start.Add(time.Minute+3*time.Second); !got.Equal(want) {
		t.Errorf("Now = %v, want %v", got, want)
	}
	if got := c.Slept(); !slices.Equal(got, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("Slept = %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err != context.Canceled || len(c.Slept()) != 2 {
		t.Errorf("a cancelled sleep: %v, %v", err, c.Slept())
	}
}

// recorder is a testing.TB that notes a failure instead of stopping the
// test, so that an assertion can be seen to fail.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestAssertSlept(t *testing.T) {
	c := retrytest.NewClock(time.Now())
	r := &recorder{TB: t}
	c.AssertSlept(r)
	if r.failed != "" {
		t.Fatalf("no sleeps: %s", r.failed)
	}
	_ = c.Sleep(context.Background(), time.Second)
	_ = c.Sleep(context.Background(), 2*time.Second)
	c.AssertSlept(r, time.Second, 2*time.Second)
	if r.failed != "" {
		t.Fatalf("the exact sleeps: %s", r.failed)
	}
	for _, want := range [][]time.Duration{{time.Second}, {2 * time.Second, time.Second}, {time.Second, 2 * time.Second, time.Second}} {
		r.failed = ""
		c.AssertSlept(r, want...)
		if r.failed != fmt.Sprintf("slept [1s 2s], want %v", want) {
			t.Errorf("want %v: failure %q", want, r.failed)
		}
	}
}
