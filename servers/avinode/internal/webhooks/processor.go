package webhooks

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
)

// Resolver fetches what a pointer names and stores it where the tools read
// it: the marketplace backend (the Avinode client, or the simulation).
type Resolver interface {
	// BaseURL is the API root pointers must point under.
	BaseURL() string
	// SyncRFQ fetches an RFQ (type rfqs) with its latest quotes.
	SyncRFQ(ctx context.Context, id string) error
	// SyncMessage fetches a trip message (type tripmsgs) and its RFQ.
	SyncMessage(ctx context.Context, id string) error
}

// Defaults of ProcessorConfig.
const (
	DefaultWorkers   = 4
	DefaultLease     = 2 * time.Minute
	DefaultPoll      = 250 * time.Millisecond
	DefaultRetryBase = time.Minute
	DefaultRetryMax  = time.Hour
)

// ProcessorConfig configures a Processor.
type ProcessorConfig struct {
	Store    *store.Store
	Resolver Resolver
	// Name identifies this worker process in leases (default: host, pid
	// and a random suffix).
	Name string
	// Workers is how many events are processed at once (DefaultWorkers).
	Workers int
	// Lease is how long a claimed event stays with its worker; processing
	// one event is cut off at three quarters of it, so a live worker never
	// outlasts its lease, and a dead one's events are taken again after it
	// (DefaultLease).
	Lease time.Duration
	// Poll is how often an idle worker looks for due events (DefaultPoll);
	// Poke wakes it at once.
	Poll time.Duration
	// RetryBase and RetryMax shape the backoff: after the n-th failed
	// attempt an event waits RetryBase×2ⁿ (1m: 2, 4, 8, 16, 32 minutes),
	// at most RetryMax, plus up to a tenth more at random.
	RetryBase, RetryMax time.Duration
	Logger              *zerolog.Logger
	Metrics             *metrics.Registry
	// Health, when set, hears whether the event store can be worked.
	Health *kit.Health
	// Now is the clock (default store.Now).
	Now func() time.Time
}

// Processor claims due webhook events and processes each once.
type Processor struct {
	cfg   ProcessorConfig
	log   zerolog.Logger
	instr *instruments
	wake  chan struct{}
	seq   atomic.Uint64
	fails atomic.Int32
}

// NewProcessor returns a processor; Run runs it.
func NewProcessor(cfg ProcessorConfig) (*Processor, error) {
	if cfg.Store == nil || cfg.Resolver == nil {
		return nil, errors.New("webhooks: the processor needs a store and a resolver")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	if cfg.Now == nil {
		cfg.Now = store.Now
	}
	if cfg.Name == "" {
		cfg.Name = WorkerName()
	}
	p := &Processor{cfg: cfg, log: zerolog.Nop(), instr: newInstruments(cfg.Metrics), wake: make(chan struct{}, cfg.Workers)}
	if cfg.Logger != nil {
		p.log = cfg.Logger.With().Str("component", "webhook processor").Logger()
	}
	return p, nil
}

// WorkerName is a name unique to this process: host, pid, random suffix.
func WorkerName() string {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = crand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Poke wakes idle workers: an event was just stored.
func (p *Processor) Poke() {
	for range cap(p.wake) {
		select {
		case p.wake <- struct{}{}:
		default:
			return
		}
	}
}

// Run processes due events with Workers workers until ctx ends; an event
// being processed then is finished first (within its deadline). It returns
// ctx's error.
func (p *Processor) Run(ctx context.Context) error {
	p.log.Info().Str("worker", p.cfg.Name).Int("workers", p.cfg.Workers).Dur("lease", p.cfg.Lease).
		Msg("processing webhook events")
	var wg sync.WaitGroup
	for range p.cfg.Workers {
		wg.Go(func() { p.loop(ctx) })
	}
	wg.Wait()
	return ctx.Err()
}

func (p *Processor) loop(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.wake:
		}
		for ctx.Err() == nil {
			n, err := p.step(ctx)
			if err != nil || n == 0 {
				break
			}
		}
		t.Reset(p.cfg.Poll)
	}
}

// RunOnce processes every event due now, one at a time, and returns how
// many it took (tests, and a tool that wants an answer at once).
func (p *Processor) RunOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := p.step(ctx)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// step claims one due event and processes it; it returns how many it took.
func (p *Processor) step(ctx context.Context) (int, error) {
	now := p.cfg.Now()
	due, err := p.cfg.Store.HasDueWebhookEvents(ctx, now)
	if err == nil && !due {
		p.healthy(nil)
		return 0, nil
	}
	var claim *store.Claim
	if err == nil {
		owner := fmt.Sprintf("%s#%d", p.cfg.Name, p.seq.Add(1))
		claim, err = p.cfg.Store.ClaimWebhookEvents(ctx, owner, now, p.cfg.Lease, 1)
	}
	if err != nil {
		if ctx.Err() == nil {
			p.healthy(err)
			p.log.Warn().Err(err).Msg("cannot claim webhook events; retrying")
		}
		return 0, err
	}
	p.healthy(nil)
	for _, ev := range claim.Abandoned {
		p.instr.count(p.cfg.Metrics, "avinode_webhook_dead_lettered", "webhook events moved to the dead letter")
		p.log.Error().Str("event_id", ev.ID).Str("avinode_event_id", ev.AvinodeEventID).Int("retry_count", ev.RetryCount).
			Msg("webhook event abandoned: its workers kept stopping before finishing; moved to the dead letter")
	}
	for i := range claim.Events {
		p.process(ctx, &claim.Events[i])
	}
	return len(claim.Events) + len(claim.Abandoned), nil
}

// healthy reports the store's state to /healthz once it has failed three
// times in a row, and clears it on the next success.
func (p *Processor) healthy(err error) {
	if p.cfg.Health == nil {
		return
	}
	if err == nil {
		if p.fails.Swap(0) >= 3 {
			p.cfg.Health.Set("webhook event store", nil)
		}
		return
	}
	if p.fails.Add(1) == 3 {
		p.cfg.Health.Set("webhook event store", errors.New("the webhook event store cannot be worked: "+err.Error()))
	}
}

// errUnsupported marks a pointer to a resource this server does not store.
var errUnsupported = errors.New("unsupported resource type")

// pointerError is a pointer that cannot be fetched as it stands: retrying
// cannot help.
type pointerError struct{ msg string }

func (e *pointerError) Error() string { return e.msg }

// process fetches one claimed event and records the outcome. It goes on
// when ctx ends (shutdown), within the lease.
func (p *Processor) process(ctx context.Context, ev *store.WebhookEvent) {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.Lease*3/4)
	defer cancel()
	start := time.Now()
	rctx, rec := store.WithRecorder(pctx)
	err := p.fetch(rctx, ev)
	p.instr.processed(time.Since(start))
	log := p.log.With().Str("event_id", ev.ID).Str("avinode_event_id", ev.AvinodeEventID).Str("type", ev.ResourceType).Logger()
	if err == nil || errors.Is(err, errUnsupported) {
		o := p.outcome(pctx, ev, rec.Records(), err != nil)
		if cerr := p.cfg.Store.CompleteWebhookEvent(pctx, ev, o, p.cfg.Now()); cerr != nil {
			p.lost(log, cerr)
			return
		}
		p.instr.count(p.cfg.Metrics, "avinode_webhook_processed", "webhook events processed (completed)")
		log.Info().Str("event_type", o.EventType).Str("trip_id", o.TripID).Dur("took", time.Since(start)).Msg("webhook event processed")
		return
	}
	permanent := isPermanent(err)
	status, ferr := p.cfg.Store.FailWebhookEvent(pctx, ev, reason(err), permanent, p.cfg.Now(), p.backoff)
	if ferr != nil {
		p.lost(log, ferr)
		return
	}
	if status == store.EventDeadLetter {
		p.instr.count(p.cfg.Metrics, "avinode_webhook_dead_lettered", "webhook events moved to the dead letter")
		log.Error().Err(err).Bool("permanent", permanent).Int("retry_count", ev.RetryCount).
			Msg("webhook event moved to the dead letter; review it with list_webhook_events, requeue it with requeue_webhook_event")
		return
	}
	p.instr.count(p.cfg.Metrics, "avinode_webhook_retried", "webhook event attempts that failed and will be retried")
	log.Warn().Err(err).Int("retry_count", ev.RetryCount+1).Msg("webhook event failed; it will be retried")
}

// lost logs an outcome that could not be recorded: the lease went to another
// worker, or the store failed (the lease will run out and the event be
// taken again).
func (p *Processor) lost(log zerolog.Logger, err error) {
	if errors.Is(err, store.ErrLeaseLost) {
		p.instr.count(p.cfg.Metrics, "avinode_webhook_leases_lost", "webhook events whose lease ran out before their worker finished")
		log.Warn().Msg("webhook event: the lease ran out before processing finished; another worker has it")
		return
	}
	log.Error().Err(err).Msg("webhook event: recording the outcome failed; it will be taken again when its lease runs out")
}

// backoff is the wait after the n-th failed attempt.
func (p *Processor) backoff(n int) time.Duration {
	d := p.cfg.RetryMax
	if n < 40 {
		d = min(p.cfg.RetryBase<<n, p.cfg.RetryMax)
		if d <= 0 {
			d = p.cfg.RetryMax
		}
	}
	return d + time.Duration(rand.Int64N(int64(d)/10+1))
}

// fetch routes the pointer to the resolver.
func (p *Processor) fetch(ctx context.Context, ev *store.WebhookEvent) error {
	kind, id, err := route(ev, p.cfg.Resolver.BaseURL())
	if err != nil {
		return err
	}
	switch kind {
	case "rfqs":
		return p.cfg.Resolver.SyncRFQ(ctx, id)
	case "tripmsgs":
		return p.cfg.Resolver.SyncMessage(ctx, id)
	}
	return errUnsupported
}

// route checks that the pointer's href lies under the API root — the
// client's credentials go nowhere else — and names the resource its type
// and id say, and returns the resource kind and id.
func route(ev *store.WebhookEvent, base string) (string, string, error) {
	kind := strings.ToLower(ev.ResourceType)
	if kind != "rfqs" && kind != "tripmsgs" {
		return kind, "", errUnsupported
	}
	u, err := url.Parse(ev.Href)
	if err != nil {
		return "", "", &pointerError{fmt.Sprintf("href %q is not a URL", ev.Href)}
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", "", fmt.Errorf("the API root %q: %w", base, err)
	}
	prefix := strings.TrimRight(b.Path, "/") + "/"
	if !strings.EqualFold(u.Scheme, b.Scheme) || !strings.EqualFold(u.Host, b.Host) || !strings.HasPrefix(u.Path, prefix) {
		return "", "", &pointerError{fmt.Sprintf("href %s is not under the API root %s; it is not fetched (check AVINODE_API_URL)", ev.Href, base)}
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, prefix), "/")
	if len(parts) != 2 || !strings.EqualFold(parts[0], kind) || parts[1] != ev.AvinodeEventID {
		return "", "", &pointerError{fmt.Sprintf("href %s does not name the %s %s the notification is about", ev.Href, kind, ev.AvinodeEventID)}
	}
	return kind, parts[1], nil
}

// isPermanent tells failures that retrying cannot mend: a pointer that
// cannot be fetched, a resource that does not exist, an answer not of the
// documented shape.
func isPermanent(err error) bool {
	if _, ok := errors.AsType[*pointerError](err); ok {
		return true
	}
	e, ok := errors.AsType[*mcperr.Error](err)
	if !ok {
		return false
	}
	switch e.Code {
	case mcperr.NotFound, mcperr.Validation, mcperr.PermissionDeny, mcperr.Conflict:
		return true
	case mcperr.Upstream:
		return !e.Retryable()
	}
	return false
}

// reason is the failure as stored with the event: the error's own message
// (the fleet's errors carry no secrets), cut to a bounded length.
func reason(err error) string {
	msg := err.Error()
	if e, ok := errors.AsType[*mcperr.Error](err); ok {
		msg = string(e.Code) + ": " + e.Message
	}
	return textcut.Ellipsis(msg, 1000)
}

// Event types an event is found to be.
const (
	TypeQuoteReceived   = "quote_received"
	TypeQuoteUpdated    = "quote_updated"
	TypeRFQDeclined     = "rfq_declined"
	TypeRFQCancelled    = "rfq_cancelled"
	TypeRFQUpdated      = "rfq_updated"
	TypeMessageReceived = "message_received"
	TypeTripUpdated     = "trip_updated"
	TypeUnchanged       = "unchanged"
	TypeUnsupported     = "unsupported"
)

// summary is an event's parsed data.
type summary struct {
	Outcome   string   `json:"outcome"`
	Changed   bool     `json:"changed"`
	RFQStatus string   `json:"rfq_status,omitempty"`
	Quotes    []string `json:"quotes_changed,omitempty"`
	Messages  []string `json:"messages_added,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// outcome classifies what fetching the event wrote.
func (p *Processor) outcome(ctx context.Context, ev *store.WebhookEvent, recs []store.Record, unsupported bool) store.Outcome {
	o := store.Outcome{}
	s := summary{}
	if unsupported {
		o.EventType, s.Outcome = TypeUnsupported, TypeUnsupported
		s.Note = "this server stores no " + ev.ResourceType + "; the notification is kept but not processed"
		o.Data = mustJSON(s)
		return o
	}
	var newQuote, updQuote, declined, cancelled, newMsg, rfqChanged, tripChanged string
	for _, r := range recs {
		if o.TripID == "" {
			o.TripID = r.TripID
		}
		switch r.Kind {
		case store.RecordQuote:
			if o.RFQID == "" {
				o.RFQID = r.RFQID
			}
			if r.Changed {
				s.Quotes = append(s.Quotes, r.ID)
			}
			if r.Inserted && newQuote == "" {
				newQuote = r.ID
			} else if r.Changed && updQuote == "" {
				updQuote = r.ID
			}
		case store.RecordRFQ:
			o.RFQID = r.ID
			s.RFQStatus = r.Status
			if r.Changed {
				rfqChanged = r.ID
				switch {
				case r.Status == store.RFQDeclined && r.PrevStatus != store.RFQDeclined:
					declined = r.ID
				case r.Status == store.RFQCancelled && r.PrevStatus != store.RFQCancelled:
					cancelled = r.ID
				}
			}
		case store.RecordMessage:
			o.MessageID = r.ID
			if o.RFQID == "" {
				o.RFQID = r.RFQID
			}
			if r.Inserted {
				newMsg = r.ID
				s.Messages = append(s.Messages, r.ID)
			}
		case store.RecordTrip:
			if r.Changed {
				tripChanged = r.ID
			}
		}
	}
	switch {
	case newQuote != "":
		o.EventType, o.QuoteID = TypeQuoteReceived, newQuote
	case updQuote != "":
		o.EventType, o.QuoteID = TypeQuoteUpdated, updQuote
	case declined != "":
		o.EventType = TypeRFQDeclined
	case cancelled != "":
		o.EventType = TypeRFQCancelled
	case newMsg != "":
		o.EventType, o.MessageID = TypeMessageReceived, newMsg
	case rfqChanged != "":
		o.EventType = TypeRFQUpdated
	case tripChanged != "":
		o.EventType = TypeTripUpdated
	default:
		o.EventType = TypeUnchanged
	}
	s.Outcome, s.Changed = o.EventType, o.EventType != TypeUnchanged
	if o.TripID == "" {
		// Nothing was written (another reader stored it first): name what
		// the pointer points at from the store.
		p.locate(ctx, ev, &o)
	}
	o.Data = mustJSON(s)
	return o
}

// locate fills in the trip and RFQ of a pointer from the store.
func (p *Processor) locate(ctx context.Context, ev *store.WebhookEvent, o *store.Outcome) {
	switch strings.ToLower(ev.ResourceType) {
	case "rfqs":
		if r, err := p.cfg.Store.RFQ(ctx, ev.AvinodeEventID); err == nil {
			o.TripID, o.RFQID = r.TripID, r.ID
		}
	case "tripmsgs":
		if m, err := p.cfg.Store.Message(ctx, ev.AvinodeEventID); err == nil {
			o.TripID, o.RFQID, o.MessageID = m.TripID, m.RFQID, m.ID
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}
