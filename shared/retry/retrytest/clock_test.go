package retrytest_test

import (
	"context"
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
