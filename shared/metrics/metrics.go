// Package metrics counts every tool call: calls, errors by code, and a latency
// histogram per tool. The hot path is a handful of atomic adds; the numbers are
// read two ways — as Prometheus text on /metrics, and as a Snapshot with
// p50/p95/p99 for system_health-style tools.
package metrics

import (
	"math"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// bounds are the histogram's upper bounds in seconds: 25 µs to ~2 min, ×2.
var bounds = func() []float64 {
	b := make([]float64, 0, 23)
	for v := 25e-6; v < 150; v *= 2 {
		b = append(b, v)
	}
	return b
}()

// Registry holds the per-tool series of one server process.
type Registry struct {
	mu      sync.RWMutex
	tools   map[string]*toolStats
	started time.Time
	prom    *prometheus.Registry
	events  events
}

type toolStats struct {
	calls   atomic.Uint64
	errors  [16]atomic.Uint64 // indexed like mcperr.Codes
	buckets []atomic.Uint64   // len(bounds)+1; last is +Inf
	sumNs   atomic.Uint64
	lastNs  atomic.Int64
}

// New makes a registry whose Prometheus side also exports Go runtime and
// process metrics under the given server name.
func New(server string) *Registry {
	r := &Registry{tools: map[string]*toolStats{}, started: time.Now(), prom: prometheus.NewRegistry(),
		events: events{m: map[string]*event{}, server: server}}
	r.prom.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.prom.MustRegister(&collector{r: r, server: server}, &r.events)
	return r
}

// Started is when the registry (the process) started.
func (r *Registry) Started() time.Time { return r.started }

func (r *Registry) stats(tool string) *toolStats {
	r.mu.RLock()
	s := r.tools[tool]
	r.mu.RUnlock()
	if s != nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s = r.tools[tool]; s == nil {
		s = &toolStats{buckets: make([]atomic.Uint64, len(bounds)+1)}
		r.tools[tool] = s
	}
	return s
}

// Register pre-creates a tool's series so /metrics shows zeros before the
// first call.
func (r *Registry) Register(tool string) { r.stats(tool) }

// Observe records one finished call; code is "" on success.
func (r *Registry) Observe(tool string, d time.Duration, code mcperr.Code) {
	s := r.stats(tool)
	s.calls.Add(1)
	if code != "" {
		s.errors[codeIndex(code)].Add(1)
	}
	sec := d.Seconds()
	i := sort.SearchFloat64s(bounds, sec)
	s.buckets[i].Add(1)
	s.sumNs.Add(uint64(d.Nanoseconds()))
	s.lastNs.Store(time.Now().UnixNano())
}

func codeIndex(c mcperr.Code) int {
	for i, k := range mcperr.Codes {
		if k == c {
			return i
		}
	}
	return len(mcperr.Codes) // "other"
}

// ToolSnapshot is one tool's numbers.
type ToolSnapshot struct {
	Tool     string            `json:"tool"`
	Calls    uint64            `json:"calls"`
	Errors   uint64            `json:"errors"`
	ByCode   map[string]uint64 `json:"errors_by_code,omitempty"`
	MeanMs   float64           `json:"mean_ms"`
	P50Ms    float64           `json:"p50_ms"`
	P95Ms    float64           `json:"p95_ms"`
	P99Ms    float64           `json:"p99_ms"`
	LastCall *time.Time        `json:"last_call,omitempty"`
}

// Snapshot returns every tool's numbers, sorted by tool name.
func (r *Registry) Snapshot() []ToolSnapshot {
	r.mu.RLock()
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	r.mu.RUnlock()
	sort.Strings(names)
	out := make([]ToolSnapshot, 0, len(names))
	for _, n := range names {
		s := r.stats(n)
		counts := make([]uint64, len(s.buckets))
		var total uint64
		for i := range s.buckets {
			counts[i] = s.buckets[i].Load()
			total += counts[i]
		}
		ts := ToolSnapshot{Tool: n, Calls: s.calls.Load()}
		for i := range mcperr.Codes {
			if v := s.errors[i].Load(); v > 0 {
				if ts.ByCode == nil {
					ts.ByCode = map[string]uint64{}
				}
				ts.ByCode[string(mcperr.Codes[i])] = v
				ts.Errors += v
			}
		}
		if v := s.errors[len(mcperr.Codes)].Load(); v > 0 {
			if ts.ByCode == nil {
				ts.ByCode = map[string]uint64{}
			}
			ts.ByCode["OTHER"] = v
			ts.Errors += v
		}
		if total > 0 {
			ts.MeanMs = round(float64(s.sumNs.Load()) / float64(total) / 1e6)
			ts.P50Ms = round(quantile(counts, total, 0.50) * 1e3)
			ts.P95Ms = round(quantile(counts, total, 0.95) * 1e3)
			ts.P99Ms = round(quantile(counts, total, 0.99) * 1e3)
		}
		if ns := s.lastNs.Load(); ns > 0 {
			t := time.Unix(0, ns).UTC()
			ts.LastCall = &t
		}
		out = append(out, ts)
	}
	return out
}

func round(v float64) float64 { return math.Round(v*1000) / 1000 }

// quantile interpolates linearly inside the bucket holding the q-th
// observation, the same estimate Prometheus' histogram_quantile makes.
func quantile(counts []uint64, total uint64, q float64) float64 {
	rank := q * float64(total)
	var cum float64
	for i, c := range counts {
		prev := cum
		cum += float64(c)
		if cum >= rank && c > 0 {
			lo := 0.0
			if i > 0 {
				lo = bounds[i-1]
			}
			hi := lo * 2
			if i < len(bounds) {
				hi = bounds[i]
			}
			return lo + (hi-lo)*(rank-prev)/float64(c)
		}
	}
	return bounds[len(bounds)-1]
}

// Handler serves the Prometheus text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.prom, promhttp.HandlerOpts{})
}

// Prometheus exposes the underlying registry so a server can add its own
// series (for example a webhook queue depth).
func (r *Registry) Prometheus() *prometheus.Registry { return r.prom }

type collector struct {
	r      *Registry
	server string
}

var (
	descCalls  = prometheus.NewDesc("mcp_tool_calls_total", "Tool calls, by tool.", []string{"server", "tool"}, nil)
	descErrors = prometheus.NewDesc("mcp_tool_errors_total", "Failed tool calls, by tool and error code.", []string{"server", "tool", "code"}, nil)
	descDur    = prometheus.NewDesc("mcp_tool_duration_seconds", "Tool call latency.", []string{"server", "tool"}, nil)
	descUp     = prometheus.NewDesc("mcp_uptime_seconds", "Seconds since the server started.", []string{"server"}, nil)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCalls
	ch <- descErrors
	ch <- descDur
	ch <- descUp
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, time.Since(c.r.started).Seconds(), c.server)
	c.r.mu.RLock()
	defer c.r.mu.RUnlock()
	for name, s := range c.r.tools {
		ch <- prometheus.MustNewConstMetric(descCalls, prometheus.CounterValue, float64(s.calls.Load()), c.server, name)
		for i, code := range mcperr.Codes {
			if v := s.errors[i].Load(); v > 0 {
				ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(v), c.server, name, string(code))
			}
		}
		// Codes outside mcperr.Codes, as Snapshot reports them.
		if v := s.errors[len(mcperr.Codes)].Load(); v > 0 {
			ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(v), c.server, name, "OTHER")
		}
		buckets := make(map[float64]uint64, len(bounds))
		var cum uint64
		for i, b := range bounds {
			cum += s.buckets[i].Load()
			buckets[b] = cum
		}
		cum += s.buckets[len(bounds)].Load()
		ch <- prometheus.MustNewConstHistogram(descDur, cum, float64(s.sumNs.Load())/1e9, buckets, c.server, name)
	}
}
