package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

func TestSleep(t *testing.T) {
	began := time.Now()
	if err := retry.Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < 20*time.Millisecond {
		t.Errorf("slept %v, want at least 20ms", waited)
	}
	if err := retry.Sleep(context.Background(), -time.Second); err != nil {
		t.Errorf("a negative wait: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := retry.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("a done context, no wait: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	began = time.Now()
	if err := retry.Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a context that ends first: %v", err)
	}
	if waited := time.Since(began); waited > 10*time.Second {
		t.Errorf("waited %v past the context's end", waited)
	}
}
