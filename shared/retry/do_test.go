package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

var errPlain = errors.New("plain failure")

func upstreamErr() error { return mcperr.New(mcperr.Upstream, "avinode returned 503") }

func TestIsRetryable(t *testing.T) {
	checkErrors(t, "IsRetryable", IsRetryable, []errCase{
		{"nil", nil, false},
		{"plain error says nothing", errPlain, false},
		{"mcperr upstream", upstreamErr(), true},
		{"mcperr validation", mcperr.Invalid("id", 1, "string", "bad id"), false},
		{"mcperr overridden", mcperr.New(mcperr.Validation, "x").WithRetryable(true), true},
		{"wrapped mcperr", fmt.Errorf("calling sheets: %w", upstreamErr()), true},
		{"Retryable marker", Retryable(errPlain), true},
		{"RetryAfter marker", RetryAfter(errPlain, time.Second), true},
		{"Permanent overrides retryable cause", Permanent(upstreamErr()), false},
		{"outermost opinion wins", Retryable(Permanent(errPlain)), true},
		{"context cancelled", context.Canceled, false},
	})
}

// errCase is an error and what a predicate on errors must say of it.
type errCase struct {
	name string
	err  error
	want bool
}

// checkErrors runs the predicate called name on every case.
func checkErrors(t *testing.T, name string, predicate func(error) bool, cases []errCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := predicate(tt.err); got != tt.want {
				t.Fatalf("%s(%v) = %v, want %v", name, tt.err, got, tt.want)
			}
		})
	}
}

func TestMarkersPreserveError(t *testing.T) {
	if Permanent(nil) != nil || Retryable(nil) != nil || RetryAfter(nil, time.Second) != nil {
		t.Fatal("marking nil must stay nil")
	}
	for _, err := range []error{Permanent(errPlain), Retryable(errPlain), RetryAfter(errPlain, time.Second)} {
		if err.Error() != errPlain.Error() || !errors.Is(err, errPlain) {
			t.Fatalf("marker changed the error: %q", err)
		}
	}
}

func TestRetryAfterOf(t *testing.T) {
	withField := mcperr.New(mcperr.RateLimit, "slow down")
	withField.RetryAfter = 5 * time.Second
	tests := []struct {
		name   string
		err    error
		want   time.Duration
		wantOK bool
	}{
		{"none", errPlain, 0, false},
		{"marker", RetryAfter(errPlain, 3*time.Second), 3 * time.Second, true},
		{"negative marker clamps", RetryAfter(errPlain, -time.Second), 0, false},
		{"mcperr field", withField, 5 * time.Second, true},
		{"wrapped mcperr field", fmt.Errorf("gmail: %w", withField), 5 * time.Second, true},
		{"marker beats mcperr", RetryAfter(withField, 9*time.Second), 9 * time.Second, true},
		{"zero marker falls through to mcperr", Retryable(withField), 5 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RetryAfterOf(tt.err)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("RetryAfterOf = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// script returns an fn that yields errs in turn (nil once exhausted) and a
// pointer to the call count.
func script(errs ...error) (func(context.Context) error, *int) {
	calls := 0
	return func(context.Context) error {
		calls++
		if calls <= len(errs) {
			return errs[calls-1]
		}
		return nil
	}, &calls
}

func TestDo(t *testing.T) {
	rateLimited := mcperr.New(mcperr.RateLimit, "quota")
	rateLimited.RetryAfter = 5 * time.Second
	tests := []struct {
		name      string
		attempts  int
		errs      []error
		wantCalls int
		wantErr   error // nil means success expected
		wantSlept []time.Duration
	}{
		{"success first time", 4, nil, 1, nil, nil},
		{"transient then success", 4, []error{upstreamErr(), upstreamErr()}, 3, nil,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"not retryable", 4, []error{mcperr.Invalid("f", 1, "x", "bad")}, 1, &mcperr.Error{}, nil},
		{"unclassified error not retried", 4, []error{errPlain}, 1, errPlain, nil},
		{"permanent", 4, []error{Permanent(upstreamErr())}, 1, &mcperr.Error{}, nil},
		{"opted in", 4, []error{Retryable(errPlain)}, 2, nil, []time.Duration{100 * time.Millisecond}},
		{"exhausted returns last error", 3, []error{upstreamErr(), upstreamErr(), Retryable(errPlain), upstreamErr()}, 3, errPlain,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"retry-after longer than backoff", 4, []error{RetryAfter(errPlain, 3*time.Second)}, 2, nil, []time.Duration{3 * time.Second}},
		{"retry-after shorter than backoff", 4, []error{RetryAfter(errPlain, time.Millisecond)}, 2, nil, []time.Duration{100 * time.Millisecond}},
		{"mcperr RetryAfter honoured", 4, []error{rateLimited}, 2, nil, []time.Duration{5 * time.Second}},
		{"retry-after beyond cap gives up", 4, []error{RetryAfter(errPlain, 2*time.Minute)}, 1, errPlain, nil},
		{"single attempt policy", 1, []error{upstreamErr()}, 1, &mcperr.Error{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			fn, calls := script(tt.errs...)
			err := Do(context.Background(), testPolicy(tt.attempts), fn, WithClock(clock))
			switch want := tt.wantErr.(type) {
			case nil:
				if err != nil {
					t.Fatalf("Do = %v, want success", err)
				}
			case *mcperr.Error:
				var me *mcperr.Error
				if !errors.As(err, &me) {
					t.Fatalf("Do = %v, want an *mcperr.Error", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("Do = %v, want %v", err, want)
				}
			}
			if *calls != tt.wantCalls {
				t.Fatalf("fn called %d times, want %d", *calls, tt.wantCalls)
			}
			clock.AssertSlept(t, tt.wantSlept...)
		})
	}
}

func TestDoUsesInjectedRand(t *testing.T) {
	clock := newFakeClock()
	p := testPolicy(3)
	p.Jitter = 1
	fn, _ := script(upstreamErr(), upstreamErr())
	if err := Do(context.Background(), p, fn, WithClock(clock), WithRand(func() float64 { return 0.75 })); err != nil {
		t.Fatal(err)
	}
	clock.AssertSlept(t, 25*time.Millisecond, 50*time.Millisecond)
}

func TestDoContextCancelledByAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := newFakeClock()
	calls := 0
	last := upstreamErr()
	err := Do(ctx, testPolicy(5), func(context.Context) error {
		calls++
		cancel()
		return last
	}, WithClock(clock))
	if calls != 1 {
		t.Fatalf("fn called %d times after cancellation, want 1", calls)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, last) {
		t.Fatalf("error %v should wrap both context.Canceled and the last error", err)
	}
	if !strings.Contains(err.Error(), "after 1 attempt(s)") {
		t.Fatalf("error %q does not say how far it got", err)
	}
	if len(clock.Slept()) != 0 {
		t.Fatalf("slept %v after cancellation", clock.Slept())
	}
}

func TestDoContextErrorFromFnReturnedAsIs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want := fmt.Errorf("query: %w", context.Canceled)
	err := Do(ctx, testPolicy(5), func(context.Context) error {
		cancel()
		return want
	}, WithClock(newFakeClock()))
	if err != want {
		t.Fatalf("Do = %v, want the fn's own error %v", err, want)
	}
}

func TestDoAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fn, calls := script()
	if err := Do(ctx, testPolicy(3), fn); err != context.Canceled {
		t.Fatalf("Do = %v, want context.Canceled", err)
	}
	if *calls != 0 {
		t.Fatalf("fn called %d times on a dead context", *calls)
	}
}

// TestDoCancelDuringRealSleep uses the real clock with an hour-long backoff:
// only cancellation can end the wait.
func TestDoCancelDuringRealSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := testPolicy(3)
	p.BaseDelay, p.MaxDelay = time.Hour, time.Hour
	called := make(chan struct{})
	go func() { <-called; cancel() }()
	start := time.Now()
	calls := 0
	err := Do(ctx, p, func(context.Context) error {
		calls++
		close(called)
		return upstreamErr()
	})
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("cancellation took %v", elapsed)
	}
	if calls != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("calls=%d err=%v; want 1 call and context.Canceled", calls, err)
	}
	var me *mcperr.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v lost the last upstream error", err)
	}
}

func TestDoGivesUpBeforeDeadline(t *testing.T) {
	clock := retrytest.NewClock(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fn, calls := script(RetryAfter(errPlain, 50*time.Second), RetryAfter(errPlain, 50*time.Second))
	err := Do(ctx, testPolicy(5), fn, WithClock(clock))
	// The first 50s wait fits in the minute; the second would not.
	if !errors.Is(err, errPlain) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do = %v, want the upstream error, not a timeout", err)
	}
	if *calls != 2 {
		t.Fatalf("fn called %d times, want 2", *calls)
	}
	clock.AssertSlept(t, 50*time.Second)
}

func TestDoThroughBreaker(t *testing.T) {
	t.Run("fails fast on a long cooldown", func(t *testing.T) {
		clock := newFakeClock()
		b := NewBreaker("sheets", 2, time.Minute, WithBreakerClock(clock))
		fn, calls := script(upstreamErr(), upstreamErr(), upstreamErr(), upstreamErr(), upstreamErr())
		err := Do(context.Background(), testPolicy(5), fn, WithClock(clock), WithBreaker(b))
		if !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("Do = %v, want circuit open", err)
		}
		if *calls != 2 {
			t.Fatalf("fn called %d times, want 2 (then the circuit opened)", *calls)
		}
		clock.AssertSlept(t, 100*time.Millisecond, 200*time.Millisecond)
	})
	t.Run("waits out a short cooldown", func(t *testing.T) {
		clock := newFakeClock()
		b := NewBreaker("sheets", 2, 500*time.Millisecond, WithBreakerClock(clock))
		fn, calls := script(upstreamErr(), upstreamErr())
		if err := Do(context.Background(), testPolicy(5), fn, WithClock(clock), WithBreaker(b)); err != nil {
			t.Fatalf("Do = %v, want success after the cooldown", err)
		}
		// 100ms, 200ms backoff; then rejected with 300ms left but backoff
		// (400ms) is longer; then the trial succeeds.
		clock.AssertSlept(t, 100*time.Millisecond, 200*time.Millisecond, 400*time.Millisecond)
		if *calls != 3 || b.State() != StateClosed {
			t.Fatalf("calls=%d state=%v; want 3 and closed", *calls, b.State())
		}
	})
}

func TestRealClock(t *testing.T) {
	c := realClock{}
	if d := time.Since(c.Now()); d < 0 || d > time.Second {
		t.Fatalf("Now is off by %v", d)
	}
	if err := c.Sleep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.Sleep(context.Background(), time.Millisecond); err != nil || time.Since(start) < time.Millisecond {
		t.Fatalf("Sleep(1ms) = %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on cancelled ctx = %v", err)
	}
}

func TestIsUpstreamFailure(t *testing.T) {
	checkErrors(t, "IsUpstreamFailure", IsUpstreamFailure, []errCase{
		{"nil", nil, false},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"circuit open", NewBreaker("x", 1, time.Second).openError(time.Second), false},
		{"5xx", &StatusError{StatusCode: 503}, true},
		{"4xx", &StatusError{StatusCode: 404}, false},
		{"429", &StatusError{StatusCode: 429}, false},
		{"mcperr upstream", upstreamErr(), true},
		{"mcperr rate limit", mcperr.New(mcperr.RateLimit, "quota"), false},
		{"mcperr validation", mcperr.Invalid("a", 1, "b", "c"), false},
		{"retryable marker", Retryable(errPlain), true},
		{"permanent marker", Permanent(&net.OpError{Op: "dial", Err: errPlain}), false},
		{"deadline", context.DeadlineExceeded, true},
		{"net error", &net.OpError{Op: "read", Err: errPlain}, true},
		{"unexpected EOF", fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), true},
		{"EOF", io.EOF, true},
		{"plain", errPlain, false},
	})
}

func TestInterrupted(t *testing.T) {
	if got := interrupted(context.Canceled, nil, 0); got != context.Canceled {
		t.Fatalf("no last error: got %v", got)
	}
	err := interrupted(context.DeadlineExceeded, &StatusError{StatusCode: 503}, 2)
	want := "retry: context deadline exceeded after 2 attempt(s); last error: upstream responded 503 Service Unavailable"
	if err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	var se *StatusError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) {
		t.Fatalf("%v does not wrap both errors", err)
	}
}
