package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// instruments are the receiver's and processor's Prometheus series beside
// the kit's event counters (mcp_avinode_webhook_…_total).
type instruments struct {
	ackSeconds     prometheus.Histogram
	processSeconds prometheus.Histogram
}

func newInstruments(reg *metrics.Registry) *instruments {
	in := &instruments{}
	if reg == nil {
		return in
	}
	in.ackSeconds = register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "avinode_webhook_ack_seconds",
		Help: "Time from a notification's arrival to its answer (stored, or found stored).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}))
	in.processSeconds = register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "avinode_webhook_processing_seconds",
		Help: "Time to process one webhook event (fetch and store), by attempt.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 18)}))
	return in
}

// register adds c to the registry, or returns the one registered already
// under its name (a receiver and a processor in one process share them).
func register(reg *metrics.Registry, h prometheus.Histogram) prometheus.Histogram {
	if err := reg.Prometheus().Register(h); err != nil {
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(prometheus.Histogram); ok {
				return existing
			}
		}
		return nil
	}
	return h
}

func (in *instruments) count(reg *metrics.Registry, name, help string) {
	if reg != nil {
		reg.Count(name, help, 1)
	}
}

func (in *instruments) ack(d time.Duration) {
	if in.ackSeconds != nil {
		in.ackSeconds.Observe(d.Seconds())
	}
}

func (in *instruments) processed(d time.Duration) {
	if in.processSeconds != nil {
		in.processSeconds.Observe(d.Seconds())
	}
}

// queueDesc describes the queue-depth gauge.
var queueDesc = prometheus.NewDesc("avinode_webhook_events", "Webhook events in the store, by status.", []string{"status"}, nil)

// queueCollector reads the event counts when scraped.
type queueCollector struct{ st *store.Store }

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDesc }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.st.WebhookEventCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDesc, err)
		return
	}
	for _, s := range store.EventStatuses {
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(counts[s]), s)
	}
}

// RegisterQueueGauge exports the number of stored events by status as
// avinode_webhook_events{status=…}, read from the store at each scrape.
func RegisterQueueGauge(reg *metrics.Registry, st *store.Store) error {
	return reg.Prometheus().Register(queueCollector{st: st})
}
