package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/metrics"
)

// TestRetriesThenSucceeds: the fetch fails three times, then succeeds: the
// event completes with retry_count 3, and the quote it announced is stored.
func TestRetriesThenSucceeds(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		l := newLive(t, st, webhooks.ReceiverConfig{})
		quote := l.fake.Quote(l.rfqID, l.liftID, 41250, "USD", 48*time.Hour, "Wi-Fi on board.",
			fakeavinode.Line{Description: "Flight", Type: "FLIGHT", Amount: 38000}, fakeavinode.Line{Description: "Fees", Type: "FEE", Amount: 3250})
		notice := l.lastNotice(t)
		l.fake.Inject(fakeavinode.Fault{Method: http.MethodGet, Path: "/tripmsgs/", Status: http.StatusServiceUnavailable, Times: 3})
		if status, _ := post(t, l.receiver.URL, l.pointer(notice), user, secret, nil); status != 200 {
			t.Fatalf("delivery: %d", status)
		}
		reg := metrics.New("avinode")
		stop := runProcessor(t, newProcessor(t, st, l.backend, func(c *webhooks.ProcessorConfig) { c.Metrics = reg }))
		ev := waitEvent(t, st, notice, store.EventCompleted)
		stop() // the counters move after the store: Run returns once its workers have
		if ev.RetryCount != 3 || ev.EventType != webhooks.TypeQuoteReceived || ev.QuoteID != quote || ev.TripID != l.tripID ||
			!strings.Contains(ev.Error, "UPSTREAM_ERROR") || ev.DurationMS == nil {
			t.Errorf("event = %+v", ev)
		}
		var data struct {
			Outcome   string   `json:"outcome"`
			Changed   bool     `json:"changed"`
			RFQStatus string   `json:"rfq_status"`
			Quotes    []string `json:"quotes_changed"`
		}
		if err := json.Unmarshal([]byte(ev.ParsedData), &data); err != nil || !data.Changed || data.RFQStatus != store.RFQQuoted ||
			len(data.Quotes) != 1 || data.Quotes[0] != quote {
			t.Errorf("parsed data %s: %v", ev.ParsedData, err)
		}
		qs, _ := st.Quotes(context.Background(), store.QuoteFilter{QuoteID: quote}, time.Now())
		if len(qs) != 1 || qs[0].Total != 4125000 || qs[0].Base != 3800000 {
			t.Errorf("quote = %+v", qs)
		}
		if n := l.fake.Count(http.MethodGet, "/tripmsgs/"+notice); n != 4 {
			t.Errorf("%d fetches, want 4", n)
		}
		if e := reg.Events(); e["avinode_webhook_retried"] != 3 || e["avinode_webhook_processed"] != 1 {
			t.Errorf("counters %v", e)
		}
	})
}

// TestDeadLetterAndRequeue: a fetch that keeps failing sends the event to
// the dead letter at max_retries with the reason; requeued once the cause
// is gone, it completes.
func TestDeadLetterAndRequeue(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		l := newLive(t, st, webhooks.ReceiverConfig{MaxRetries: 2})
		msg := l.fake.SellerMessage(l.rfqID, "We can add a flight attendant.")
		l.fake.Inject(fakeavinode.Fault{Method: http.MethodGet, Path: "/tripmsgs/", Status: http.StatusBadGateway, Times: 1000})
		if status, _ := post(t, l.receiver.URL, l.pointer(msg), user, secret, nil); status != 200 {
			t.Fatalf("delivery: %d", status)
		}
		runProcessor(t, newProcessor(t, st, l.backend, nil))
		dead := waitEvent(t, st, msg, store.EventDeadLetter)
		if dead.RetryCount != 2 || dead.MaxRetries != 2 || !strings.Contains(dead.Error, "UPSTREAM_ERROR") || dead.ProcessedAt == nil {
			t.Errorf("dead letter = %+v", dead)
		}
		if n := l.fake.Count(http.MethodGet, "/tripmsgs/"+msg); n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
		l.fake.ClearFaults()
		if _, err := st.RequeueWebhookEvent(context.Background(), dead.ID, store.Now()); err != nil {
			t.Fatal(err)
		}
		done := waitEvent(t, st, msg, store.EventCompleted)
		if done.RequeueCount != 1 || done.EventType != webhooks.TypeMessageReceived {
			t.Errorf("after requeue = %+v", done)
		}
	})
}

// TestPermanentFailures: what retrying cannot mend goes to the dead letter
// at once, with the reason; a resource the server does not store is kept
// and completed as unsupported.
func TestPermanentFailures(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		l := newLive(t, st, webhooks.ReceiverConfig{})
		base := l.fake.BaseURL()
		deliver := func(id, href, typ string) {
			t.Helper()
			b, _ := json.Marshal(map[string]string{"id": id, "href": href, "type": typ})
			if status, body := post(t, l.receiver.URL, b, user, secret, nil); status != 200 {
				t.Fatalf("delivery of %s: %d %v", id, status, body)
			}
		}
		deliver("asellermsg-1999999999", base+"/tripmsgs/asellermsg-1999999999", "tripmsgs")
		deliver("arfq-1999999999", base+"/rfqs/arfq-1999999999", "rfqs")
		deliver("asellermsg-2000000001", "https://attacker.example/api/tripmsgs/asellermsg-2000000001", "tripmsgs")
		deliver("asellermsg-2000000002", base+"/tripmsgs/asellermsg-2000000003", "tripmsgs")
		deliver("asellermsg-2000000004", base+"/rfqs/asellermsg-2000000004", "tripmsgs")
		deliver("aemptyleg-1", base+"/emptylegs/aemptyleg-1", "emptylegs")
		p := newProcessor(t, st, l.backend, nil)
		if n, err := p.RunOnce(context.Background()); n != 6 || err != nil {
			t.Fatalf("processed %d, %v", n, err)
		}
		for id, want := range map[string]string{
			"asellermsg-1999999999": "NOT_FOUND",
			"arfq-1999999999":       "NOT_FOUND",
			"asellermsg-2000000001": "not under the API root",
			"asellermsg-2000000002": "does not name",
			"asellermsg-2000000004": "does not name",
		} {
			ev := waitEvent(t, st, id, store.EventDeadLetter)
			if ev.RetryCount != 0 || !strings.Contains(ev.Error, want) {
				t.Errorf("%s: %+v", id, ev)
			}
		}
		ev := waitEvent(t, st, "aemptyleg-1", store.EventCompleted)
		if ev.EventType != webhooks.TypeUnsupported || !strings.Contains(ev.ParsedData, "emptylegs") {
			t.Errorf("empty leg = %+v", ev)
		}
		// Nothing was sent anywhere but Avinode.
		for _, r := range l.fake.Requests() {
			if strings.Contains(r.Path, "2000000001") {
				t.Errorf("a foreign href reached the fake's path %s", r.Path)
			}
		}
	})
}

// TestLeaseReclaim: a worker that took an event and stopped loses it when
// its lease runs out; another worker then completes it.
func TestLeaseReclaim(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		l := newLive(t, st, webhooks.ReceiverConfig{})
		msg := l.fake.SellerMessage(l.rfqID, "Slot confirmed.")
		post(t, l.receiver.URL, l.pointer(msg), user, secret, nil)
		// A worker claims it with a short lease and is never heard of again.
		c, err := st.ClaimWebhookEvents(context.Background(), "gone", store.Now(), 200*time.Millisecond, 1)
		if err != nil || len(c.Events) != 1 {
			t.Fatalf("claim = %+v, %v", c, err)
		}
		runProcessor(t, newProcessor(t, st, l.backend, nil))
		ev := waitEvent(t, st, msg, store.EventCompleted)
		if ev.RetryCount != 1 || !strings.Contains(ev.Error, "lease expired") {
			t.Errorf("reclaimed = %+v", ev)
		}
	})
}

// TestMockPointers: the simulated marketplace's answers travel as pointers
// that the processor fetches from it.
func TestMockPointers(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		m := mock.New(st, mock.Config{})
		trip, err := m.CreateTrip(ctx, tripRequest())
		if err != nil {
			t.Fatal(err)
		}
		n, err := m.Deliver(ctx, "")
		if err != nil || n != 5 {
			t.Fatalf("published %d, %v", n, err)
		}
		evs, _ := st.WebhookEvents(ctx, store.EventFilter{Limit: 10})
		if len(evs) != 5 {
			t.Fatalf("%d pointers queued", len(evs))
		}
		for _, e := range evs {
			if e.ResourceType != "rfqs" || !strings.HasPrefix(e.Href, mock.BaseURL+"/rfqs/arfq-") || e.Source != store.SourceMock ||
				e.TripRef != trip.DisplayID || e.Status != store.EventPending {
				t.Errorf("pointer %+v", e)
			}
		}
		p := newProcessor(t, st, m, nil)
		if n, err := p.RunOnce(ctx); n != 5 || err != nil {
			t.Fatalf("processed %d, %v", n, err)
		}
		evs, _ = st.WebhookEvents(ctx, store.EventFilter{Limit: 10, Status: store.EventCompleted})
		kinds := map[string]int{}
		for _, e := range evs {
			kinds[e.EventType]++
			if e.TripID != trip.ID || e.RFQID != e.AvinodeEventID {
				t.Errorf("completed %+v", e)
			}
		}
		rfqs, _ := st.TripRFQs(ctx, trip.ID)
		quoted, declined := 0, 0
		for _, r := range rfqs {
			switch r.Status {
			case store.RFQQuoted:
				quoted++
			case store.RFQDeclined:
				declined++
			}
		}
		if len(evs) != 5 || kinds[webhooks.TypeQuoteReceived] != quoted || kinds[webhooks.TypeRFQDeclined] != declined ||
			quoted+declined+kinds[webhooks.TypeUnchanged] != 5 || quoted == 0 {
			t.Errorf("outcomes %v: quoted %d, declined %d", kinds, quoted, declined)
		}

		// A chat reply: a pointer to the new trip message.
		var quotedRFQ string
		for _, r := range rfqs {
			if r.Status == store.RFQQuoted {
				quotedRFQ = r.ID
			}
		}
		if _, err := m.SendMessage(ctx, quotedRFQ, "Any pets allowed?"); err != nil {
			t.Fatal(err)
		}
		if n, _ := m.Deliver(ctx, ""); n != 1 {
			t.Fatalf("reply published %d", n)
		}
		if n, err := p.RunOnce(ctx); n != 1 || err != nil {
			t.Fatalf("processed %d, %v", n, err)
		}
		reply, _ := st.WebhookEvents(ctx, store.EventFilter{Type: "tripmsgs"})
		if len(reply) != 1 || reply[0].EventType != webhooks.TypeMessageReceived || !strings.HasPrefix(reply[0].MessageID, "asellermsg-") {
			t.Fatalf("reply event %+v", reply)
		}
		if msg, err := st.Message(ctx, reply[0].MessageID); err != nil || !strings.Contains(msg.Text, "Pets") {
			t.Errorf("reply = %+v, %v", msg, err)
		}
		// Fetching it again finds it stored: unchanged, and located.
		if err := m.SyncMessage(ctx, reply[0].MessageID); err != nil {
			t.Error(err)
		}
		if err := m.SyncMessage(ctx, "asellermsg-1"); err == nil {
			t.Error("an unknown message was found")
		}
	})
}

// TestProcessorHealth: a store that cannot be worked marks /healthz after
// three failures in a row; Run still returns only when stopped.
func TestProcessorHealth(t *testing.T) {
	st := storetest.SQLite(t, store.Options{})
	h := kit.NewHealth()
	p := newProcessor(t, st, mock.New(st, mock.Config{}), func(c *webhooks.ProcessorConfig) { c.Health = h; c.Workers = 1 })
	_ = st.Close()
	for range 3 {
		if _, err := p.RunOnce(context.Background()); err == nil {
			t.Fatal("a closed store worked")
		}
	}
	if rep := h.Report(context.Background()); rep.OK {
		t.Errorf("health after three failures: %+v", rep)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run = %v", err)
	}
	if _, err := webhooks.NewProcessor(webhooks.ProcessorConfig{}); err == nil {
		t.Error("a processor without a store")
	}
	if name := webhooks.WorkerName(); strings.Count(name, "/") != 2 {
		t.Errorf("worker name %q", name)
	}
}

// slowResolver blocks every fetch until released.
type slowResolver struct {
	started chan string
	release chan struct{}
}

func (r *slowResolver) BaseURL() string { return "https://sandbox.avinode.com/api" }
func (r *slowResolver) SyncRFQ(ctx context.Context, id string) error {
	r.started <- id
	<-r.release
	return nil
}
func (r *slowResolver) SyncMessage(ctx context.Context, id string) error { return r.SyncRFQ(ctx, id) }

// TestLeaseLost: a worker that outlives its lease finds the event taken by
// another when it finishes; it records nothing, and counts the lost lease.
func TestLeaseLost(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		raw := []byte(`{"id":"arfq-5","href":"https://sandbox.avinode.com/api/rfqs/arfq-5","type":"rfqs"}`)
		if _, _, err := st.ReceiveWebhookEvent(ctx, store.Incoming{Pointer: store.Pointer{ID: "arfq-5", Type: "rfqs",
			Href: "https://sandbox.avinode.com/api/rfqs/arfq-5"}, Raw: raw}); err != nil {
			t.Fatal(err)
		}
		r := &slowResolver{started: make(chan string, 1), release: make(chan struct{})}
		reg := metrics.New("avinode")
		p := newProcessor(t, st, r, func(c *webhooks.ProcessorConfig) { c.Metrics = reg; c.Lease = time.Hour })
		done := make(chan error, 1)
		go func() { _, err := p.RunOnce(ctx); done <- err }()
		<-r.started
		// Its lease ran out (as far as another worker can tell): taken.
		c, err := st.ClaimWebhookEvents(ctx, "other", store.Now().Add(2*time.Hour), time.Hour, 1)
		if err != nil || len(c.Events) != 1 {
			t.Fatalf("claim = %+v, %v", c, err)
		}
		close(r.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ev, _ := st.WebhookEvent(ctx, c.Events[0].ID)
		if ev.Status != store.EventProcessing || !strings.HasPrefix(ev.LeaseOwner, "other/") {
			t.Errorf("the late worker overwrote the new attempt: %+v", ev)
		}
		if reg.Events()["avinode_webhook_leases_lost"] != 1 {
			t.Errorf("counters %v", reg.Events())
		}
	})
}

// TestQueueGauge: /metrics reads the queue from the store at each scrape.
func TestQueueGauge(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		reg := metrics.New("avinode")
		if err := webhooks.RegisterQueueGauge(reg, st); err != nil {
			t.Fatal(err)
		}
		raw := []byte(`{"id":"arfq-6","href":"https://a/b","type":"rfqs"}`)
		if _, _, err := st.ReceiveWebhookEvent(context.Background(), store.Incoming{Pointer: store.Pointer{ID: "arfq-6", Type: "rfqs", Href: "https://a/b"}, Raw: raw}); err != nil {
			t.Fatal(err)
		}
		scrape := func() string {
			w := httptest.NewRecorder()
			reg.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			return w.Body.String()
		}
		if got := scrape(); !strings.Contains(got, `avinode_webhook_events{status="pending"} 1`) || !strings.Contains(got, `avinode_webhook_events{status="dead_letter"} 0`) {
			t.Errorf("scrape:\n%s", got)
		}
		_ = st.Close()
		if got := scrape(); strings.Contains(got, `avinode_webhook_events{status="pending"}`) {
			t.Errorf("a closed store still reported:\n%s", got)
		}
	})
}

// TestManyWorkersFirstSight: many workers take messages of RFQs whose trip
// the store has not seen yet, all at once; every event completes at the
// first attempt (the writes of one trip never wait for each other in
// opposite orders).
func TestManyWorkersFirstSight(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *store.Store) {
		l := newLive(t, st, webhooks.ReceiverConfig{})
		// A trip made by another client of the account: unknown here.
		other := storetest.SQLite(t, store.Options{})
		trip, err := avinode.NewBackend(l.client, other).CreateTrip(context.Background(), tripRequest())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for r := range 3 {
			rfq, _ := l.fake.AddRFQ(trip.ID, fakeavinode.Seller{ID: fmt.Sprint("s", r), Name: fmt.Sprint("Seller ", r)},
				fakeavinode.Aircraft{Type: "Phenom 300", Category: "Light jet"})
			for m := range 15 {
				ids = append(ids, l.fake.SellerMessage(rfq, fmt.Sprint("message ", m)))
			}
		}
		for _, id := range ids {
			if status, _ := post(t, l.receiver.URL, l.pointer(id), user, secret, nil); status != 200 {
				t.Fatalf("delivery: %d", status)
			}
		}
		runProcessor(t, newProcessor(t, st, l.backend, func(c *webhooks.ProcessorConfig) { c.Workers = 8 }))
		for _, id := range ids {
			if ev := waitEvent(t, st, id, store.EventCompleted); ev.RetryCount != 0 || ev.TripID != trip.ID {
				t.Errorf("event %+v", ev)
			}
		}
	})
}
