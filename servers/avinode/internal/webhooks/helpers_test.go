package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
	"github.com/mcp-fleet/mcp-fleet/shared/retry"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	apiToken  = "app-token-5f1c2d9e"
	authToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtY3AifQ.c2lnbmF0dXJl"
	user      = "avinode-notifications"
	secret    = "basic-secret-8c1f0e2b77"
)

// onEachStore runs fn on a fresh SQLite store and a fresh PostgreSQL one.
func onEachStore(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) { fn(t, db.Open(t, store.Options{})) })
}

// live is Avinode (the fake) with a trip and an RFQ, the client and backend
// on a store, and the real receiver serving HTTP.
type live struct {
	st       *store.Store
	client   *avinode.Client
	fake     *fakeavinode.Server
	backend  *avinode.Backend
	receiver *httptest.Server
	tripID   string
	rfqID    string
	liftID   string
}

// oneAttempt makes every processing attempt one request, so faults count
// attempts exactly.
var oneAttempt = retry.Policy{MaxAttempts: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}

func newLive(t *testing.T, st *store.Store, rc webhooks.ReceiverConfig) *live {
	t.Helper()
	ctx := context.Background()
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c, err := avinode.New(avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken, Version: "test",
		Timeout: 5 * time.Second, Retry: oneAttempt})
	if err != nil {
		t.Fatal(err)
	}
	b := avinode.NewBackend(c, st)
	trip, err := b.CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS",
		Departure: time.Now().Add(72 * time.Hour), Passengers: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	rfqID, liftID := fake.AddRFQ(trip.ID, fakeavinode.Seller{ID: "acompany-9", Name: "Atlantic Coast Charter", Country: "US"},
		fakeavinode.Aircraft{Type: "Challenger 350", Category: "Super midsize jet", Tail: "N350AC", MaxPax: 9})
	// A subscription nobody answers at: the fake records the notices of
	// seller responses it would send (lastNotice).
	if _, err := c.CreateWebhook(ctx, avinode.WebhookSettings{TargetURI: "http://127.0.0.1:1" + webhooks.Path, Active: true,
		ClientIdentifier: user, ClientSecret: secret, ClientAuthenticationType: "BASIC",
		EventTypes: []string{avinode.EventTripRequestSellerResponse}}); err != nil {
		t.Fatal(err)
	}
	rc.Store = st
	if rc.ClientID == "" {
		rc.ClientID, rc.ClientSecret = user, secret
	}
	r, err := webhooks.NewReceiver(rc)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return &live{st: st, client: c, fake: fake, backend: b, receiver: srv, tripID: trip.ID, rfqID: rfqID, liftID: liftID}
}

// lastNotice is the id of the trip message announcing the latest seller
// response.
func (l *live) lastNotice(t *testing.T) string {
	t.Helper()
	d := l.fake.Deliveries()
	if len(d) == 0 {
		t.Fatal("the fake announced no seller response")
	}
	return d[len(d)-1].Pointer["id"]
}

// pointer is the notification the fake would send for a trip message.
func (l *live) pointer(msgID string) []byte {
	b, _ := json.Marshal(map[string]any{"id": msgID, "href": l.fake.BaseURL() + "/tripmsgs/" + msgID, "type": "tripmsgs",
		"tripId": "T01001", "sentAt": time.Now().Format(time.RFC3339)})
	return b
}

// post delivers body as Avinode would, with the given credentials and
// extra headers.
func post(t *testing.T, url string, body []byte, u, p string, headers map[string]string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+webhooks.Path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if u != "" || p != "" {
		req.SetBasicAuth(u, p)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func newProcessor(t *testing.T, st *store.Store, r webhooks.Resolver, tune func(*webhooks.ProcessorConfig)) *webhooks.Processor {
	t.Helper()
	cfg := webhooks.ProcessorConfig{Store: st, Resolver: r, Poll: 5 * time.Millisecond, RetryBase: time.Millisecond,
		RetryMax: 20 * time.Millisecond, Lease: 10 * time.Second}
	if tune != nil {
		tune(&cfg)
	}
	p, err := webhooks.NewProcessor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runProcessor runs p until the test ends or stop is called; stop returns
// once Run has (and with it every worker it started).
func runProcessor(t *testing.T, p *webhooks.Processor) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run = %v", err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// waitEvent polls the store until the event of Avinode id reaches status.
func waitEvent(t *testing.T, st *store.Store, avinodeID, status string) store.WebhookEvent {
	t.Helper()
	return storetest.WaitEvent(t, st, avinodeID, status, 20*time.Second)
}

// tripRequest is a trip the simulated operators answer: New York to
// Boston, three days out.
func tripRequest() market.TripRequest {
	return market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS", Departure: time.Now().Add(72 * time.Hour), Passengers: 4}}}
}
