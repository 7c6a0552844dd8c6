package kit

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Health is what /healthz reports: every background worker's state and the
// result of every backend check. It answers 200 when all are well and 503
// naming each failing part otherwise, so a load balancer or compose
// healthcheck never routes to a half-alive server.
type Health struct {
	mu      sync.Mutex
	checks  []healthCheck
	workers map[string]error // nil: running
	cached  healthReport
	at      time.Time
}

type healthCheck struct {
	name string
	fn   func(ctx context.Context) error
}

type healthReport struct {
	OK      bool         `json:"ok"`
	Failing []healthPart `json:"failing,omitempty"`
	Parts   []string     `json:"checked,omitempty"`
}

type healthPart struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// healthCacheFor keeps a report briefly: health endpoints are polled, and
// a check may cost a database round trip.
const healthCacheFor = time.Second

// NewHealth returns an empty Health (always healthy).
func NewHealth() *Health { return &Health{workers: map[string]error{}} }

// AddCheck adds a backend check; it should return quickly (it gets a
// 2-second context) and say what is wrong in its error, without secrets.
func (h *Health) AddCheck(name string, fn func(ctx context.Context) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checks = append(h.checks, healthCheck{name, fn})
	h.at = time.Time{}
}

// Set records the state of a part the server runs — a worker, a feed, a
// connection it keeps — by name: err nil means well, anything else makes
// /healthz answer 503 naming the part and err's text (keep it free of
// secrets). A worker reports here when it is stuck but alive (an upstream
// down, a backlog growing); a worker that returns from Run is marked failed
// by the kit.
func (h *Health) Set(name string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.workers[name] = err
	h.at = time.Time{}
}

// Report runs the checks (or returns the last report if it is recent).
func (h *Health) Report(ctx context.Context) healthReport {
	if h == nil {
		return healthReport{OK: true}
	}
	h.mu.Lock()
	if !h.at.IsZero() && time.Since(h.at) < healthCacheFor {
		r := h.cached
		h.mu.Unlock()
		return r
	}
	checks := append([]healthCheck(nil), h.checks...)
	rep := healthReport{OK: true}
	for name, err := range h.workers {
		rep.Parts = append(rep.Parts, name)
		if err != nil {
			rep.OK = false
			rep.Failing = append(rep.Failing, healthPart{name, err.Error()})
		}
	}
	h.mu.Unlock()
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.fn(cctx)
		cancel()
		rep.Parts = append(rep.Parts, c.name)
		if err != nil {
			rep.OK = false
			rep.Failing = append(rep.Failing, healthPart{c.name, err.Error()})
		}
	}
	sort.Strings(rep.Parts)
	sort.Slice(rep.Failing, func(i, j int) bool { return rep.Failing[i].Name < rep.Failing[j].Name })
	h.mu.Lock()
	h.cached, h.at = rep, time.Now()
	h.mu.Unlock()
	return rep
}

// serve answers /healthz.
func (h *Health) serve(w http.ResponseWriter, r *http.Request, extra map[string]any) {
	rep := h.Report(r.Context())
	body := map[string]any{"status": "ok"}
	for k, v := range extra {
		body[k] = v
	}
	if len(rep.Parts) > 0 {
		body["checked"] = rep.Parts
	}
	status := http.StatusOK
	if !rep.OK {
		status = http.StatusServiceUnavailable
		body["status"] = "unavailable"
		body["failing"] = rep.Failing
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// HealthHandler serves the report alone, for a server's extra listeners
// (a webhook receiver's /healthz).
func (h *Health) HealthHandler(extra map[string]any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, extra) })
}
