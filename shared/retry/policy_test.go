package retry

import (
	"math"
	"testing"
	"time"
)

func TestBackoffGrowthAndCap(t *testing.T) {
	p := testPolicy(10)
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{0, 100 * time.Millisecond}, // treated as the first attempt
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{4, 800 * time.Millisecond},
		{5, time.Second},
		{6, time.Second},
		{5000, time.Second}, // Pow overflows to +Inf
	}
	for _, tt := range tests {
		if got := p.Backoff(tt.attempt); got != tt.want {
			t.Errorf("Backoff(%d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

func TestBackoffJitterPinned(t *testing.T) {
	p := testPolicy(10)
	p.Jitter = 0.5
	tests := []struct {
		name string
		r    float64
		want time.Duration
	}{
		{"no randomisation", 0, 400 * time.Millisecond},
		{"half", 0.5, 300 * time.Millisecond},
		{"max", 1, 200 * time.Millisecond},
		{"negative clamped", -3, 400 * time.Millisecond},
		{"above one clamped", 7, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.backoff(3, func() float64 { return tt.r }); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	for _, jitter := range []float64{0.25, 0.5, 1} {
		p := testPolicy(10)
		p.Jitter = jitter
		for attempt := 1; attempt <= 6; attempt++ {
			ceiling := testPolicy(10).Backoff(attempt)
			floor := time.Duration(float64(ceiling) * (1 - jitter))
			seen := map[time.Duration]bool{}
			for range 200 {
				d := p.Backoff(attempt)
				if d < floor || d > ceiling {
					t.Fatalf("jitter %v attempt %d: %v outside [%v, %v]", jitter, attempt, d, floor, ceiling)
				}
				seen[d] = true
			}
			if len(seen) < 10 {
				t.Fatalf("jitter %v attempt %d: only %d distinct delays; not randomised", jitter, attempt, len(seen))
			}
		}
	}
}

func TestPolicyNormalized(t *testing.T) {
	got := Policy{}.normalized()
	want := DefaultPolicy()
	want.Jitter = 0
	if got != want {
		t.Fatalf("zero policy normalised to %+v, want %+v", got, want)
	}
	tests := []struct {
		name             string
		in               Policy
		wantMult, wantJi float64
	}{
		{"shrinking multiplier", Policy{Multiplier: 0.5}, DefaultMultiplier, 0},
		{"NaN multiplier", Policy{Multiplier: math.NaN()}, DefaultMultiplier, 0},
		{"constant backoff kept", Policy{Multiplier: 1}, 1, 0},
		{"negative jitter", Policy{Jitter: -1}, DefaultMultiplier, 0},
		{"NaN jitter", Policy{Jitter: math.NaN()}, DefaultMultiplier, 0},
		{"jitter above one", Policy{Jitter: 5}, DefaultMultiplier, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.in.normalized()
			if n.Multiplier != tt.wantMult || n.Jitter != tt.wantJi {
				t.Fatalf("got multiplier %v jitter %v, want %v %v", n.Multiplier, n.Jitter, tt.wantMult, tt.wantJi)
			}
		})
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy()
	if p.MaxAttempts != 4 || p.BaseDelay != 200*time.Millisecond || p.MaxDelay != 10*time.Second ||
		p.Multiplier != 2 || p.Jitter <= 0 || p.Jitter > 1 || p.MaxRetryAfter != time.Minute {
		t.Fatalf("unexpected default policy %+v", p)
	}
	if p.normalized() != p {
		t.Fatal("default policy is not a fixed point of normalisation")
	}
}

func TestPolicyDelay(t *testing.T) {
	p := testPolicy(5).normalized() // backoff after attempt 2 is 200ms
	zero := func() float64 { return 0 }
	tests := []struct {
		name      string
		requested time.Duration
		has       bool
		circuit   bool
		want      time.Duration
		wantOK    bool
	}{
		{"backoff only", 0, false, false, 200 * time.Millisecond, true},
		{"requested shorter than backoff", 50 * time.Millisecond, true, false, 200 * time.Millisecond, true},
		{"requested longer than backoff", 30 * time.Second, true, false, 30 * time.Second, true},
		{"requested at cap", time.Minute, true, false, time.Minute, true},
		{"requested beyond cap", time.Minute + 1, true, false, 0, false},
		{"circuit within max delay", 700 * time.Millisecond, true, true, 700 * time.Millisecond, true},
		{"circuit beyond max delay", 2 * time.Second, true, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := p.delay(2, tt.requested, tt.has, tt.circuit, zero)
			if d != tt.want || ok != tt.wantOK {
				t.Fatalf("delay = %v, %v; want %v, %v", d, ok, tt.want, tt.wantOK)
			}
		})
	}
}
