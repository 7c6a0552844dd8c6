package metrics

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func snapshotOf(t *testing.T, r *Registry, tool string) ToolSnapshot {
	t.Helper()
	for _, s := range r.Snapshot() {
		if s.Tool == tool {
			return s
		}
	}
	t.Fatalf("no snapshot for %s", tool)
	return ToolSnapshot{}
}

func scrape(t *testing.T, r *Registry) string {
	t.Helper()
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want text/plain", ct)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBounds(t *testing.T) {
	if len(bounds) != 23 {
		t.Fatalf("len(bounds) = %d, want 23", len(bounds))
	}
	if bounds[0] != 25e-6 {
		t.Errorf("first bound %v, want 25µs", bounds[0])
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] != 2*bounds[i-1] {
			t.Errorf("bounds[%d] = %v, want double %v", i, bounds[i], bounds[i-1])
		}
	}
	if last := bounds[len(bounds)-1]; last < 60 || last >= 150 {
		t.Errorf("last bound %v, want between a minute and 150s", last)
	}
	// errors is a fixed array: every code plus "other" must fit.
	var s toolStats
	if len(mcperr.Codes)+1 > len(s.errors) {
		t.Fatalf("%d codes + other do not fit in %d error slots", len(mcperr.Codes), len(s.errors))
	}
}

func TestSnapshotCounts(t *testing.T) {
	r := New("devtools")
	obs := []struct {
		tool string
		code mcperr.Code
	}{
		{"file_read", ""},
		{"file_read", ""},
		{"file_read", mcperr.NotFound},
		{"file_read", mcperr.NotFound},
		{"file_read", mcperr.Validation},
		{"file_read", mcperr.Cancelled}, // last code in the list
		{"file_read", mcperr.Code("MADE_UP")},
		{"shell_execute", mcperr.Timeout},
		{"shell_execute", ""},
		{"web_fetch", mcperr.Code("ONLY_UNKNOWN")},
	}
	for _, o := range obs {
		r.Observe(o.tool, time.Millisecond, o.code)
	}
	tests := []struct {
		tool   string
		calls  uint64
		errors uint64
		byCode map[string]uint64
	}{
		{"file_read", 7, 5, map[string]uint64{"NOT_FOUND": 2, "VALIDATION_ERROR": 1, "CANCELLED": 1, "OTHER": 1}},
		{"shell_execute", 2, 1, map[string]uint64{"TIMEOUT_ERROR": 1}},
		{"web_fetch", 1, 1, map[string]uint64{"OTHER": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			s := snapshotOf(t, r, tc.tool)
			if s.Calls != tc.calls || s.Errors != tc.errors {
				t.Errorf("calls=%d errors=%d, want %d and %d", s.Calls, s.Errors, tc.calls, tc.errors)
			}
			if fmt.Sprint(s.ByCode) != fmt.Sprint(tc.byCode) {
				t.Errorf("ByCode = %v, want %v", s.ByCode, tc.byCode)
			}
			if s.MeanMs != 1 {
				t.Errorf("MeanMs = %v, want 1", s.MeanMs)
			}
		})
	}
}

func TestSnapshotSortedAndLastCall(t *testing.T) {
	r := New("s")
	before := time.Now()
	for _, n := range []string{"zeta", "alpha", "mid"} {
		r.Observe(n, time.Millisecond, "")
	}
	after := time.Now()
	r.Register("beta")
	snap := r.Snapshot()
	var names []string
	for _, s := range snap {
		names = append(names, s.Tool)
	}
	if fmt.Sprint(names) != "[alpha beta mid zeta]" {
		t.Fatalf("Snapshot order = %v", names)
	}
	for _, s := range snap {
		if s.Tool == "beta" {
			if s.LastCall != nil {
				t.Errorf("registered-only tool has LastCall %v", s.LastCall)
			}
			continue
		}
		if s.LastCall == nil {
			t.Fatalf("%s: LastCall nil after Observe", s.Tool)
		}
		if s.LastCall.Before(before.Add(-time.Millisecond)) || s.LastCall.After(after.Add(time.Millisecond)) {
			t.Errorf("%s: LastCall %v not between %v and %v", s.Tool, s.LastCall, before, after)
		}
		if s.LastCall.Location() != time.UTC {
			t.Errorf("LastCall not in UTC")
		}
	}
}

func TestPercentiles(t *testing.T) {
	type obs struct {
		d time.Duration
		n int
	}
	tests := []struct {
		name         string
		obs          []obs
		p50Lo, p50Hi float64 // ms, bucket bounds that must hold p50
		p95Lo, p95Hi float64
		p99Lo, p99Hi float64
		meanMs       float64
	}{
		{
			name:  "100 × 1ms",
			obs:   []obs{{time.Millisecond, 100}},
			p50Lo: 0.8, p50Hi: 1.6, // 1ms lies in (0.8ms, 1.6ms]
			p95Lo: 0.8, p95Hi: 1.6,
			p99Lo: 0.8, p99Hi: 1.6,
			meanMs: 1,
		},
		{
			name:  "98 × 1ms with a 1s tail",
			obs:   []obs{{time.Millisecond, 98}, {time.Second, 2}},
			p50Lo: 0.8, p50Hi: 1.6,
			p95Lo: 0.8, p95Hi: 1.6,
			p99Lo: 819.2, p99Hi: 1638.4, // 1s lies in (0.8192s, 1.6384s]
			meanMs: 20.98,
		},
		{
			name:  "90 fast, 10 slow",
			obs:   []obs{{100 * time.Microsecond, 90}, {50 * time.Millisecond, 10}},
			p50Lo: 0.05, p50Hi: 0.1, // 100µs lies in (50µs, 100µs]
			p95Lo: 25.6, p95Hi: 51.2, // 50ms lies in (25.6ms, 51.2ms]
			p99Lo: 25.6, p99Hi: 51.2,
			meanMs: 5.09,
		},
		{
			name:  "zero durations in the first bucket",
			obs:   []obs{{0, 10}},
			p50Lo: 0, p50Hi: 0.025,
			p95Lo: 0, p95Hi: 0.025,
			p99Lo: 0, p99Hi: 0.025,
			meanMs: 0,
		},
		{
			name:  "beyond the last bound",
			obs:   []obs{{10 * time.Minute, 4}},
			p50Lo: bounds[len(bounds)-1] * 1e3, p50Hi: 2 * bounds[len(bounds)-1] * 1e3,
			p95Lo: bounds[len(bounds)-1] * 1e3, p95Hi: 2 * bounds[len(bounds)-1] * 1e3,
			p99Lo: bounds[len(bounds)-1] * 1e3, p99Hi: 2 * bounds[len(bounds)-1] * 1e3,
			meanMs: 600000,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New("s")
			var total uint64
			for _, o := range tc.obs {
				for i := 0; i < o.n; i++ {
					r.Observe("t", o.d, "")
				}
				total += uint64(o.n)
			}
			s := snapshotOf(t, r, "t")
			if s.Calls != total {
				t.Errorf("Calls = %d, want %d", s.Calls, total)
			}
			check := func(name string, v, lo, hi float64) {
				if v < lo || v > hi {
					t.Errorf("%s = %vms, want within [%v, %v]ms", name, v, lo, hi)
				}
			}
			check("p50", s.P50Ms, tc.p50Lo, tc.p50Hi)
			check("p95", s.P95Ms, tc.p95Lo, tc.p95Hi)
			check("p99", s.P99Ms, tc.p99Lo, tc.p99Hi)
			if !(s.P50Ms <= s.P95Ms && s.P95Ms <= s.P99Ms) {
				t.Errorf("percentiles not ordered: %v %v %v", s.P50Ms, s.P95Ms, s.P99Ms)
			}
			if diff := s.MeanMs - tc.meanMs; diff > 0.001 || diff < -0.001 {
				t.Errorf("MeanMs = %v, want %v", s.MeanMs, tc.meanMs)
			}
		})
	}
}

func TestQuantileInterpolation(t *testing.T) {
	// 100 observations of 1ms: p50 is half way through (0.8ms, 1.6ms].
	r := New("s")
	for i := 0; i < 100; i++ {
		r.Observe("t", time.Millisecond, "")
	}
	if s := snapshotOf(t, r, "t"); s.P50Ms != 1.2 || s.P99Ms != 1.592 {
		t.Errorf("p50=%v p99=%v, want 1.2 and 1.592", s.P50Ms, s.P99Ms)
	}
	// With no observations, quantile reports the last bound.
	if got := quantile(make([]uint64, len(bounds)+1), 0, 0.5); got != bounds[len(bounds)-1] {
		t.Errorf("quantile of nothing = %v", got)
	}
}

func TestRegisterMakesZeroSeries(t *testing.T) {
	r := New("devtools")
	r.Register("file_read")
	r.Register("file_read") // twice is harmless

	snap := r.Snapshot()
	if len(snap) != 1 {
		t.Fatalf("Snapshot has %d tools, want 1", len(snap))
	}
	s := snap[0]
	if s.Tool != "file_read" || s.Calls != 0 || s.Errors != 0 || s.ByCode != nil || s.P50Ms != 0 || s.MeanMs != 0 || s.LastCall != nil {
		t.Errorf("registered tool snapshot = %+v, want zeros", s)
	}

	want := `
# HELP mcp_tool_calls_total Tool calls, by tool.
# TYPE mcp_tool_calls_total counter
mcp_tool_calls_total{server="devtools",tool="file_read"} 0
`
	if err := testutil.GatherAndCompare(r.Prometheus(), strings.NewReader(want), "mcp_tool_calls_total"); err != nil {
		t.Error(err)
	}
	body := scrape(t, r)
	for _, line := range []string{
		`mcp_tool_duration_seconds_count{server="devtools",tool="file_read"} 0`,
		`mcp_tool_duration_seconds_sum{server="devtools",tool="file_read"} 0`,
		`mcp_tool_duration_seconds_bucket{server="devtools",tool="file_read",le="+Inf"} 0`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if strings.Contains(body, "mcp_tool_errors_total{") {
		t.Error("a tool without errors exported error series")
	}
}

func TestPrometheusOutput(t *testing.T) {
	r := New("devtools")
	r.Observe("file_read", time.Millisecond, "")
	r.Observe("file_read", time.Millisecond, "")
	r.Observe("file_read", 3*time.Millisecond, mcperr.NotFound)
	r.Observe("shell_execute", 2*time.Second, mcperr.Timeout)

	wantCounters := `
# HELP mcp_tool_calls_total Tool calls, by tool.
# TYPE mcp_tool_calls_total counter
mcp_tool_calls_total{server="devtools",tool="file_read"} 3
mcp_tool_calls_total{server="devtools",tool="shell_execute"} 1
# HELP mcp_tool_errors_total Failed tool calls, by tool and error code.
# TYPE mcp_tool_errors_total counter
mcp_tool_errors_total{code="NOT_FOUND",server="devtools",tool="file_read"} 1
mcp_tool_errors_total{code="TIMEOUT_ERROR",server="devtools",tool="shell_execute"} 1
`
	if err := testutil.GatherAndCompare(r.Prometheus(), strings.NewReader(wantCounters), "mcp_tool_calls_total", "mcp_tool_errors_total"); err != nil {
		t.Error(err)
	}

	body := scrape(t, r)
	for _, line := range []string{
		`# TYPE mcp_tool_duration_seconds histogram`,
		`mcp_tool_calls_total{server="devtools",tool="file_read"} 3`,
		// Cumulative buckets: two 1ms calls in (0.0008, 0.0016], one 3ms in (0.0016, 0.0032].
		`mcp_tool_duration_seconds_bucket{server="devtools",tool="file_read",le="0.0008"} 0`,
		`mcp_tool_duration_seconds_bucket{server="devtools",tool="file_read",le="0.0016"} 2`,
		`mcp_tool_duration_seconds_bucket{server="devtools",tool="file_read",le="0.0032"} 3`,
		`mcp_tool_duration_seconds_bucket{server="devtools",tool="file_read",le="+Inf"} 3`,
		`mcp_tool_duration_seconds_sum{server="devtools",tool="file_read"} 0.005`,
		`mcp_tool_duration_seconds_count{server="devtools",tool="file_read"} 3`,
		`mcp_tool_duration_seconds_bucket{server="devtools",tool="shell_execute",le="1.6384"} 0`,
		`mcp_tool_duration_seconds_bucket{server="devtools",tool="shell_execute",le="3.2768"} 1`,
		`mcp_tool_duration_seconds_count{server="devtools",tool="shell_execute"} 1`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if n := strings.Count(body, `mcp_tool_duration_seconds_bucket{server="devtools",tool="file_read",`); n != len(bounds)+1 {
		t.Errorf("file_read has %d buckets, want %d", n, len(bounds)+1)
	}
	for _, prefix := range []string{`mcp_uptime_seconds{server="devtools"} `, "go_goroutines ", "go_memstats_alloc_bytes "} {
		if !strings.Contains(body, "\n"+prefix) {
			t.Errorf("/metrics lacks %q", prefix)
		}
	}
}

// Errors with a code outside mcperr.Codes are counted as OTHER in Snapshot;
// /metrics must count them too, or its error rate disagrees with the calls.
func TestPrometheusCountsOtherErrors(t *testing.T) {
	r := New("devtools")
	r.Observe("t", time.Millisecond, mcperr.Code("MADE_UP"))
	r.Observe("t", time.Millisecond, mcperr.Internal)
	want := `
# HELP mcp_tool_errors_total Failed tool calls, by tool and error code.
# TYPE mcp_tool_errors_total counter
mcp_tool_errors_total{code="INTERNAL_ERROR",server="devtools",tool="t"} 1
mcp_tool_errors_total{code="OTHER",server="devtools",tool="t"} 1
`
	if err := testutil.GatherAndCompare(r.Prometheus(), strings.NewReader(want), "mcp_tool_errors_total"); err != nil {
		t.Error(err)
	}
	if s := snapshotOf(t, r, "t"); s.Errors != 2 {
		t.Errorf("Snapshot errors = %d, want 2", s.Errors)
	}
}

func TestPrometheusRegistryIsExtensible(t *testing.T) {
	r := New("hooks")
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "webhook_queue_depth", Help: "Queued webhooks."})
	if err := r.Prometheus().Register(g); err != nil {
		t.Fatal(err)
	}
	g.Set(7)
	if body := scrape(t, r); !strings.Contains(body, "\nwebhook_queue_depth 7\n") {
		t.Error("custom series missing from /metrics")
	}
}

func TestStartedAndUptime(t *testing.T) {
	before := time.Now()
	r := New("s")
	after := time.Now()
	if r.Started().Before(before) || r.Started().After(after) {
		t.Errorf("Started() = %v, not between %v and %v", r.Started(), before, after)
	}
	if n := testutil.CollectAndCount(&collector{r: r, server: "s"}, "mcp_uptime_seconds"); n != 1 {
		t.Errorf("uptime series = %d, want 1", n)
	}
}

func TestConcurrentObserve(t *testing.T) {
	r := New("s")
	const goroutines, per = 8, 500
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			tool := fmt.Sprintf("tool_%d", g%3)
			for i := 0; i < per; i++ {
				code := mcperr.Code("")
				if i%10 == 0 {
					code = mcperr.Upstream
				}
				r.Observe(tool, time.Duration(i)*time.Microsecond, code)
			}
		}(g)
	}
	// Read while writing.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			r.Snapshot()
			if _, err := r.Prometheus().Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	var calls, errs uint64
	for _, s := range r.Snapshot() {
		calls += s.Calls
		errs += s.Errors
	}
	if calls != goroutines*per || errs != goroutines*per/10 {
		t.Errorf("calls=%d errors=%d, want %d and %d", calls, errs, goroutines*per, goroutines*per/10)
	}
}

func TestEventCounters(t *testing.T) {
	r := New("test")
	r.Count("notifications_dropped", "Notifications dropped.", 2)
	r.Count("notifications_dropped", "Notifications dropped.", 3)
	r.Count("budget_refused", "Refused.", 1)
	if ev := r.Events(); ev["notifications_dropped"] != 5 || ev["budget_refused"] != 1 {
		t.Fatalf("Events = %v", ev)
	}
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `mcp_notifications_dropped_total{server="test"} 5`) {
		t.Fatalf("event counter not exported:\n%s", rec.Body.String())
	}
}
