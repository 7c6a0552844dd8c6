package retry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func fail(context.Context) error    { return upstreamErr() }
func succeed(context.Context) error { return nil }

func newTestBreaker(threshold int, cooldown time.Duration) (*Breaker, *fakeClock) {
	clock := newFakeClock()
	return NewBreaker("avinode", threshold, cooldown, WithBreakerClock(clock)), clock
}

func mustState(t *testing.T, b *Breaker, want State) {
	t.Helper()
	if got := b.State(); got != want {
		t.Fatalf("state %v, want %v", got, want)
	}
}

func TestBreakerLifecycle(t *testing.T) {
	b, clock := newTestBreaker(3, 30*time.Second)
	ctx := context.Background()

	// Failures must be consecutive: a success in between resets the count.
	for _, fn := range []func(context.Context) error{fail, fail, succeed, fail, fail} {
		_ = b.Do(ctx, fn)
	}
	mustState(t, b, StateClosed)

	if err := b.Do(ctx, fail); err == nil || errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("the threshold-reaching call should return its own error, got %v", err)
	}
	mustState(t, b, StateOpen)

	// Open: rejected without calling fn.
	clock.Advance(3 * time.Second)
	called := false
	err := b.Do(ctx, func(context.Context) error { called = true; return nil })
	if called {
		t.Fatal("open breaker called fn")
	}
	if !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("got %v, want ErrCircuitOpen", err)
	}

	// Half-open once the cooldown has passed; a failed trial reopens it
	// for a fresh cooldown.
	clock.Advance(27 * time.Second)
	mustState(t, b, StateHalfOpen)
	calls := 0
	_ = b.Do(ctx, func(context.Context) error { calls++; return upstreamErr() })
	if calls != 1 {
		t.Fatalf("half-open trial called fn %d times, want 1", calls)
	}
	mustState(t, b, StateOpen)
	clock.Advance(29 * time.Second)
	err = b.Do(ctx, succeed)
	if !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("reopened breaker let a call through early: %v", err)
	}
	if want := `UPSTREAM_ERROR: upstream "avinode" is unavailable: circuit open after 4 consecutive failures; next attempt in 1s`; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}

	// A successful trial closes it.
	clock.Advance(time.Second)
	if err := b.Do(ctx, succeed); err != nil {
		t.Fatalf("trial = %v", err)
	}
	mustState(t, b, StateClosed)
	// And the failure count starts again from zero.
	_ = b.Do(ctx, fail)
	_ = b.Do(ctx, fail)
	mustState(t, b, StateClosed)
}

func TestBreakerOpenErrorShape(t *testing.T) {
	b, clock := newTestBreaker(5, 30*time.Second)
	for range 5 {
		_ = b.Do(context.Background(), fail)
	}
	clock.Advance(3*time.Second + 500*time.Millisecond)
	err := b.Do(context.Background(), succeed)

	var me *mcperr.Error
	if !errors.As(err, &me) {
		t.Fatalf("%T is not an *mcperr.Error", err)
	}
	wantMsg := `upstream "avinode" is unavailable: circuit open after 5 consecutive failures; next attempt in 27s`
	if me.Code != mcperr.Upstream || me.Message != wantMsg || !me.Retryable() {
		t.Fatalf("got code=%s retryable=%v message=%q", me.Code, me.Retryable(), me.Message)
	}
	if me.RetryAfter != 26*time.Second+500*time.Millisecond {
		t.Fatalf("RetryAfter = %v, want the remaining cooldown", me.RetryAfter)
	}
	if !errors.Is(err, ErrCircuitOpen) || !IsRetryable(err) {
		t.Fatal("open error must be ErrCircuitOpen and retryable")
	}
	if s := me.Body().Data.RetryAfterSeconds; s == nil || *s != 27 {
		t.Fatalf("client sees retry_after_seconds %v, want 27", s)
	}
}

func TestBreakerIgnoresNonUpstreamErrors(t *testing.T) {
	b, _ := newTestBreaker(2, time.Minute)
	errs := []error{
		mcperr.Invalid("id", "x", "uuid", "bad id"),
		&StatusError{StatusCode: 404},
		&StatusError{StatusCode: 429},
		mcperr.New(mcperr.RateLimit, "quota"),
		errPlain,
	}
	for _, e := range errs {
		for range 3 {
			if got := b.Do(context.Background(), func(context.Context) error { return e }); got != e {
				t.Fatalf("Do changed the error: %v", got)
			}
		}
	}
	mustState(t, b, StateClosed)
}

func TestBreakerCustomClassifier(t *testing.T) {
	clock := newFakeClock()
	b := NewBreaker("pg", 2, time.Minute, WithBreakerClock(clock),
		WithFailureClassifier(func(err error) bool { return errors.Is(err, errPlain) }))
	_ = b.Do(context.Background(), fail) // upstream error, but not counted by this classifier
	_ = b.Do(context.Background(), fail)
	mustState(t, b, StateClosed)
	_ = b.Do(context.Background(), func(context.Context) error { return errPlain })
	_ = b.Do(context.Background(), func(context.Context) error { return errPlain })
	mustState(t, b, StateOpen)
}

func TestBreakerCancelledTrialDoesNotDecide(t *testing.T) {
	b, clock := newTestBreaker(1, time.Second)
	_ = b.Do(context.Background(), fail)
	clock.Advance(time.Second)
	_ = b.Do(context.Background(), func(context.Context) error { return fmt.Errorf("x: %w", context.Canceled) })
	mustState(t, b, StateHalfOpen)
	// The slot was released: another trial may run.
	if err := b.Do(context.Background(), succeed); err != nil {
		t.Fatalf("second trial rejected: %v", err)
	}
	mustState(t, b, StateClosed)
}

func TestBreakerDeadContextSkipsCall(t *testing.T) {
	b, _ := newTestBreaker(1, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	if err := b.Do(ctx, func(context.Context) error { called = true; return nil }); err != context.Canceled || called {
		t.Fatalf("err=%v called=%v", err, called)
	}
}

func TestBreakerPanicCountsAsFailure(t *testing.T) {
	b, clock := newTestBreaker(1, time.Second)
	_ = b.Do(context.Background(), fail)
	clock.Advance(time.Second)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic was swallowed")
			}
		}()
		_ = b.Do(context.Background(), func(context.Context) error { panic("boom") })
	}()
	mustState(t, b, StateOpen)
}

func TestBreakerDefaults(t *testing.T) {
	b, clock := newTestBreaker(0, 0)
	_ = b.Do(context.Background(), fail)
	mustState(t, b, StateOpen) // threshold below 1 means 1
	var me *mcperr.Error
	if err := b.Do(context.Background(), succeed); !errors.As(err, &me) || me.RetryAfter != DefaultCooldown {
		t.Fatalf("got %v, want RetryAfter %v", err, DefaultCooldown)
	}
	clock.Advance(DefaultCooldown)
	mustState(t, b, StateHalfOpen)
	// nil options are ignored rather than crashing later.
	b = NewBreaker("x", 1, time.Second, WithFailureClassifier(nil), WithBreakerClock(nil))
	if b.isFailure == nil || b.clock == nil {
		t.Fatal("nil option replaced a default")
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{StateClosed: "closed", StateOpen: "open", StateHalfOpen: "half-open", State(9): "State(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), want)
		}
	}
}

// A call admitted before the circuit opened must not close it by succeeding
// late: its success says nothing about the upstream now.
func TestBreakerIgnoresStaleResults(t *testing.T) {
	b, _ := newTestBreaker(2, time.Minute)
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- b.Do(context.Background(), func(context.Context) error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	_ = b.Do(context.Background(), fail)
	_ = b.Do(context.Background(), fail)
	mustState(t, b, StateOpen)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustState(t, b, StateOpen)
}

// In half-open exactly one trial runs; everyone else is turned away until
// it reports.
func TestBreakerHalfOpenAdmitsOneTrial(t *testing.T) {
	b, clock := newTestBreaker(1, time.Second)
	_ = b.Do(context.Background(), fail)
	clock.Advance(time.Second)

	const n = 50
	release := make(chan struct{})
	var inside atomic.Int32
	results := make(chan error, n)
	for range n {
		go func() {
			results <- b.Do(context.Background(), func(context.Context) error {
				inside.Add(1)
				<-release
				return nil
			})
		}()
	}
	for i := range n - 1 {
		select {
		case err := <-results:
			if !errors.Is(err, ErrCircuitOpen) {
				t.Fatalf("result %d: %v, want rejection", i, err)
			}
			var me *mcperr.Error
			if !errors.As(err, &me) || !me.Retryable() || me.Code != mcperr.Upstream {
				t.Fatalf("rejection has wrong shape: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d rejections: more than one trial admitted", i)
		}
	}
	close(release)
	if err := <-results; err != nil {
		t.Fatalf("trial = %v", err)
	}
	if got := inside.Load(); got != 1 {
		t.Fatalf("%d trials ran, want 1", got)
	}
	mustState(t, b, StateClosed)
}

func TestBreakerHalfOpenBusyMessage(t *testing.T) {
	b, clock := newTestBreaker(1, time.Second)
	_ = b.Do(context.Background(), fail)
	clock.Advance(time.Second)
	release := make(chan struct{})
	entered := make(chan struct{})
	go func() {
		_ = b.Do(context.Background(), func(context.Context) error { close(entered); <-release; return nil })
	}()
	<-entered
	defer close(release)
	err := b.Do(context.Background(), succeed)
	want := `UPSTREAM_ERROR: upstream "avinode" is unavailable: circuit half-open after 1 consecutive failures; a trial call is in progress`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestBreakerConcurrentUse(t *testing.T) {
	b, clock := newTestBreaker(3, 10*time.Millisecond)
	var wg sync.WaitGroup
	var calls, rejected, other atomic.Int64
	const workers, each = 16, 200
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := b.Do(context.Background(), func(context.Context) error {
					calls.Add(1)
					if (w+i)%3 == 0 {
						return upstreamErr()
					}
					return nil
				})
				switch {
				case errors.Is(err, ErrCircuitOpen):
					rejected.Add(1)
				case err != nil:
					var me *mcperr.Error
					if !errors.As(err, &me) {
						other.Add(1)
					}
				}
				if i%10 == 0 {
					clock.Advance(time.Millisecond)
					_ = b.State()
				}
			}
		}()
	}
	wg.Wait()
	if other.Load() != 0 {
		t.Fatalf("%d unexpected errors", other.Load())
	}
	if calls.Load()+rejected.Load() != workers*each {
		t.Fatalf("calls %d + rejected %d != %d", calls.Load(), rejected.Load(), workers*each)
	}
	if s := b.State(); s != StateClosed && s != StateOpen && s != StateHalfOpen {
		t.Fatalf("invalid state %v", s)
	}
}
