package ratelimit

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/retry/retrytest"
)

// withClock freezes l's clock; the test moves it on with Advance.
func withClock(l *Limiter) *retrytest.Clock {
	c := retrytest.NewClock(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC))
	l.now = c.Now
	return c
}

func TestParse(t *testing.T) {
	tests := []struct {
		spec          string
		wantNil       bool
		wantPerMinute float64
		wantBurst     int
		wantErr       string
	}{
		{spec: "", wantNil: true},
		{spec: "   ", wantNil: true},
		{spec: "off", wantNil: true},
		{spec: " off ", wantNil: true},
		{spec: "0", wantNil: true},
		{spec: "60/min", wantPerMinute: 60, wantBurst: 2},
		{spec: "60/m", wantPerMinute: 60, wantBurst: 2},
		{spec: "60/minute", wantPerMinute: 60, wantBurst: 2},
		{spec: "30/min", wantPerMinute: 30, wantBurst: 1},
		{spec: "10/s", wantPerMinute: 600, wantBurst: 11},
		{spec: "10/sec", wantPerMinute: 600, wantBurst: 11},
		{spec: "10/second", wantPerMinute: 600, wantBurst: 11},
		{spec: "0.5/s", wantPerMinute: 30, wantBurst: 1},
		{spec: "3600/h", wantPerMinute: 60, wantBurst: 2},
		{spec: "120/hour", wantPerMinute: 2, wantBurst: 1},
		{spec: " 60 / min ", wantPerMinute: 60, wantBurst: 2},
		{spec: "60/min,burst=5", wantPerMinute: 60, wantBurst: 5},
		{spec: "60/min, burst=5", wantPerMinute: 60, wantBurst: 5},
		{spec: "10/s,burst=1", wantPerMinute: 600, wantBurst: 1},
		{spec: "3600/h,burst=100", wantPerMinute: 60, wantBurst: 100},

		{spec: "60", wantErr: "want N/s, N/min or N/h"},
		{spec: "sixty/min", wantErr: "is not a positive number"},
		{spec: "/min", wantErr: "is not a positive number"},
		{spec: "0/min", wantErr: "is not a positive number"},
		{spec: "-5/min", wantErr: "is not a positive number"},
		{spec: "NaN/min", wantErr: "is not a positive number"},
		{spec: "nan/s", wantErr: "is not a positive number"},
		{spec: "Inf/min", wantErr: "is not a positive number"},
		{spec: "+Inf/h", wantErr: "is not a positive number"},
		{spec: "1e400/min", wantErr: "is not a positive number"},
		{spec: "60/day", wantErr: "unit must be s, min or h"},
		{spec: "60/", wantErr: "unit must be s, min or h"},
		{spec: "60/MIN", wantErr: "unit must be s, min or h"},
		{spec: "60/min,burst=0", wantErr: "want ,burst=N"},
		{spec: "60/min,burst=-1", wantErr: "want ,burst=N"},
		{spec: "60/min,burst=x", wantErr: "want ,burst=N"},
		{spec: "60/min,burst", wantErr: "want ,burst=N"},
		{spec: "60/min,burst=", wantErr: "want ,burst=N"},
		{spec: "60/min,bust=5", wantErr: "want ,burst=N"},
		{spec: "60/min,burst=2.5", wantErr: "want ,burst=N"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			l, err := Parse(tc.spec)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Parse(%q) = %+v, want error %q", tc.spec, l, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error %q does not contain %q", tc.spec, err, tc.wantErr)
				}
				if l != nil {
					t.Errorf("Parse(%q) returned a limiter with its error", tc.spec)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.spec, err)
			}
			if tc.wantNil {
				if l != nil {
					t.Fatalf("Parse(%q) = %+v, want nil (disabled)", tc.spec, l)
				}
				return
			}
			if l == nil {
				t.Fatalf("Parse(%q) = nil", tc.spec)
			}
			if l.perMinute != tc.wantPerMinute || l.burst != tc.wantBurst {
				t.Errorf("Parse(%q): perMinute=%v burst=%d, want %v and %d", tc.spec, l.perMinute, l.burst, tc.wantPerMinute, tc.wantBurst)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		perMinute float64
		burst     int
		wantNil   bool
		wantBurst int
	}{
		{0, 5, true, 0},
		{-1, 5, true, 0},
		{60, 0, false, 1},
		{60, -3, false, 1},
		{60, 7, false, 7},
	}
	for _, tc := range tests {
		l := New(tc.perMinute, tc.burst)
		if tc.wantNil {
			if l != nil {
				t.Errorf("New(%v, %d) = %+v, want nil", tc.perMinute, tc.burst, l)
			}
			continue
		}
		if l == nil || l.burst != tc.wantBurst || l.perMinute != tc.perMinute || l.now == nil || l.buckets == nil {
			t.Errorf("New(%v, %d) = %+v, want burst %d", tc.perMinute, tc.burst, l, tc.wantBurst)
		}
	}
}

func TestNilLimiterAllows(t *testing.T) {
	var l *Limiter
	for i := 0; i < 1000; i++ {
		if ok, wait := l.Allow("a", "t"); !ok || wait != 0 {
			t.Fatalf("nil limiter refused call %d (wait %v)", i, wait)
		}
	}
	off, err := Parse("off")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := off.Allow("a", "t"); !ok {
		t.Fatal(`Parse("off") limiter refused a call`)
	}
}

func TestBurstThenRefusal(t *testing.T) {
	tests := []struct {
		spec     string
		burst    int
		wantWait time.Duration // wait right after the burst is spent
	}{
		{"60/min,burst=3", 3, time.Second},
		{"60/min", 2, time.Second},
		{"10/s", 11, 100 * time.Millisecond},
		{"3600/h,burst=1", 1, time.Second},
		{"2/min,burst=1", 1, 30 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			l, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			withClock(l)
			for i := 0; i < tc.burst; i++ {
				if ok, wait := l.Allow("agent", "tool"); !ok {
					t.Fatalf("call %d of the burst refused (wait %v)", i+1, wait)
				}
			}
			ok, wait := l.Allow("agent", "tool")
			if ok {
				t.Fatalf("call %d beyond burst %d allowed", tc.burst+1, tc.burst)
			}
			if wait <= 0 {
				t.Fatalf("refusal with non-positive wait %v", wait)
			}
			if diff := wait - tc.wantWait; diff < -time.Millisecond || diff > time.Millisecond {
				t.Errorf("wait = %v, want about %v", wait, tc.wantWait)
			}
			// A refused call does not consume a token: asking again at the
			// same instant reports the same wait, not a longer one.
			for i := 0; i < 5; i++ {
				ok2, wait2 := l.Allow("agent", "tool")
				if ok2 || wait2 != wait {
					t.Fatalf("repeat refusal %d: ok=%v wait=%v, want false and %v", i, ok2, wait2, wait)
				}
			}
		})
	}
}

func TestRefillAfterTimePasses(t *testing.T) {
	l := New(60, 2) // one token per second, burst 2
	clk := withClock(l)
	for i := 0; i < 2; i++ {
		if ok, _ := l.Allow("a", "t"); !ok {
			t.Fatalf("burst call %d refused", i)
		}
	}
	ok, wait := l.Allow("a", "t")
	if ok || wait != time.Second {
		t.Fatalf("after burst: ok=%v wait=%v, want false, 1s", ok, wait)
	}

	clk.Advance(400 * time.Millisecond)
	ok, wait = l.Allow("a", "t")
	if ok {
		t.Fatal("allowed before a token refilled")
	}
	if diff := wait - 600*time.Millisecond; diff < -time.Millisecond || diff > time.Millisecond {
		t.Errorf("wait after 400ms = %v, want ~600ms", wait)
	}

	clk.Advance(600 * time.Millisecond)
	if ok, wait := l.Allow("a", "t"); !ok {
		t.Fatalf("refused after waiting the advised time (wait %v)", wait)
	}
	if ok, _ := l.Allow("a", "t"); ok {
		t.Fatal("second call allowed though only one token refilled")
	}

	// A long pause refills up to the burst, not beyond.
	clk.Advance(time.Hour)
	for i := 0; i < 2; i++ {
		if ok, _ := l.Allow("a", "t"); !ok {
			t.Fatalf("after a long pause, call %d refused", i)
		}
	}
	if ok, _ := l.Allow("a", "t"); ok {
		t.Fatal("bucket refilled beyond its burst")
	}
}

func TestSeparateBuckets(t *testing.T) {
	l := New(60, 1)
	withClock(l)
	if ok, _ := l.Allow("orchestrator", "supabase_query"); !ok {
		t.Fatal("first call refused")
	}
	if ok, _ := l.Allow("orchestrator", "supabase_query"); ok {
		t.Fatal("second call on the same pair allowed")
	}
	others := []struct{ agent, tool string }{
		{"orchestrator", "supabase_insert"}, // same agent, other tool
		{"communication", "supabase_query"}, // other agent, same tool
		{"communication", "send_email"},
		{"", "supabase_query"},
		{"orchestrator", ""},
		// The key joins agent and tool; these must not collide.
		{"orchestratorsupabase", "_query"},
		{"orchestrator\x00supabase", "query"},
	}
	for _, o := range others {
		if ok, wait := l.Allow(o.agent, o.tool); !ok {
			t.Errorf("Allow(%q, %q) refused (wait %v); buckets must be per agent and tool", o.agent, o.tool, wait)
		}
	}
	// The spent bucket is still spent.
	if ok, _ := l.Allow("orchestrator", "supabase_query"); ok {
		t.Error("spent bucket was refilled by other pairs")
	}
}

func TestConcurrentAllow(t *testing.T) {
	l := New(60, 10)
	withClock(l) // frozen clock: exactly the burst is allowed
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := map[string]int{}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			agent := []string{"a", "b"}[g%2]
			for i := 0; i < 50; i++ {
				if ok, _ := l.Allow(agent, "t"); ok {
					mu.Lock()
					allowed[agent]++
					mu.Unlock()
				}
			}
		}(g)
	}
	wg.Wait()
	if allowed["a"] != 10 || allowed["b"] != 10 {
		t.Fatalf("allowed = %v, want exactly the burst (10) per agent", allowed)
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Rate
		err  string
	}{
		{"", Rate{}, ""},
		{"off", Rate{}, ""},
		{"10/s", Rate{PerMinute: 600, Burst: 11}, ""},
		{"60/min,burst=5", Rate{PerMinute: 60, Burst: 5}, ""},
		{"60/min, burst = 5", Rate{PerMinute: 60, Burst: 5}, ""},
		{"120/h", Rate{PerMinute: 2, Burst: 1}, ""},
		{"60", Rate{}, "want N/s, N/min or N/h"},
		{"x/min", Rate{}, `"x" is not a positive number`},
		{"5/day", Rate{}, `not "day"`},
		{"5/min,burst=0", Rate{}, "want ,burst=N"},
		{"5/min,size=3", Rate{}, "want ,burst=N"},
	} {
		got, err := ParseRate(tc.spec)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseRate(%q) = %+v, %v; want %+v, error with %q", tc.spec, got, err, tc.want, tc.err)
		}
	}
	for _, r := range []Rate{{}, {PerMinute: 0.5, Burst: 1}, {PerMinute: 1200, Burst: 200}} {
		if back, err := ParseRate(r.String()); err != nil || back != r {
			t.Errorf("%+v renders as %q, which reads back as %+v, %v", r, r.String(), back, err)
		}
	}
	if _, err := Parse("5/day"); err == nil || !strings.Contains(err.Error(), `rate limit "5/day"`) {
		t.Errorf("Parse does not name the setting it refuses: %v", err)
	}
}
