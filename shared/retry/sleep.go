package retry

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx is done, returning ctx.Err() in the latter
// case: the wall clock's wait, for code that pauses outside a retry loop.
func Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
