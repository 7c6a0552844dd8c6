package metrics

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Events are counters of things that happen outside tool calls — resource
// reads, notifications coalesced or dropped, requests refused for lack of
// budget, webhook deliveries. Each name is exported as mcp_<name>_total.
type events struct {
	mu     sync.RWMutex
	m      map[string]*event
	server string
}

type event struct {
	help string
	n    atomic.Uint64
	desc *prometheus.Desc
}

// Count adds n to the named event counter, creating it (with its help text)
// on first use. Names are snake_case without the mcp_ prefix or _total suffix.
func (r *Registry) Count(name, help string, n uint64) {
	r.events.mu.RLock()
	e := r.events.m[name]
	r.events.mu.RUnlock()
	if e == nil {
		r.events.mu.Lock()
		if e = r.events.m[name]; e == nil {
			e = &event{help: help, desc: prometheus.NewDesc("mcp_"+name+"_total", help, []string{"server"}, nil)}
			r.events.m[name] = e
		}
		r.events.mu.Unlock()
	}
	e.n.Add(n)
}

// Events returns the current value of every event counter.
func (r *Registry) Events() map[string]uint64 {
	r.events.mu.RLock()
	defer r.events.mu.RUnlock()
	out := make(map[string]uint64, len(r.events.m))
	for k, e := range r.events.m {
		out[k] = e.n.Load()
	}
	return out
}

// Describe sends nothing: event counters appear as they are first counted,
// which makes this an unchecked collector.
func (e *events) Describe(chan<- *prometheus.Desc) {}

func (e *events) Collect(ch chan<- prometheus.Metric) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	names := make([]string, 0, len(e.m))
	for k := range e.m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ev := e.m[k]
		ch <- prometheus.MustNewConstMetric(ev.desc, prometheus.CounterValue, float64(ev.n.Load()), e.server)
	}
}
