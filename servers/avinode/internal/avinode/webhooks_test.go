package avinode_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/fakeavinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// TestSyncMessage: a trip message — a seller's chat line, or the notice of a
// quote or decline — is read with its RFQ; chat lines join the thread,
// notices bring the RFQ's answer.
func TestSyncMessage(t *testing.T) {
	ctx := context.Background()
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken})
	st := mustStore(t)
	b := avinode.NewBackend(c, st)
	if b.BaseURL() != fake.BaseURL() {
		t.Errorf("base URL %q", b.BaseURL())
	}
	// A subscription, so the fake says which messages it would announce.
	if _, err := c.CreateWebhook(ctx, avinode.WebhookSettings{TargetURI: "http://127.0.0.1:1/webhooks/avinode", Active: true,
		ClientIdentifier: "id", ClientSecret: "secret-value-0123456789", ClientAuthenticationType: "BASIC",
		EventTypes: avinode.BrokerEventTypes}); err != nil {
		t.Fatal(err)
	}
	trip, err := avinode.NewBackend(c, mustStore(t)).CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB",
		To: "KBOS", Departure: time.Now().Add(48 * time.Hour), Passengers: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	rfqID, liftID := fake.AddRFQ(trip.ID, fakeavinode.Seller{ID: "s1", Name: "Seller One"}, fakeavinode.Aircraft{Type: "Phenom 300", Category: "Light jet"})
	quoteID := fake.Quote(rfqID, liftID, 9000, "EUR", time.Hour, "Confirmed.")
	chatID := fake.SellerMessage(rfqID, "Catering is included.")
	var notice string
	for _, d := range fake.Deliveries() {
		if d.EventType == avinode.EventTripRequestSellerResponse {
			notice = d.Pointer["id"]
		}
	}
	if notice == "" {
		t.Fatalf("no seller-response notification: %+v", fake.Deliveries())
	}

	// The notice brings the quote, and is not a chat line.
	if err := b.SyncMessage(ctx, notice); err != nil {
		t.Fatal(err)
	}
	qs, _ := st.Quotes(ctx, store.QuoteFilter{QuoteID: quoteID}, time.Now())
	if len(qs) != 1 || qs[0].Total != 900000 {
		t.Errorf("quotes after the notice: %+v", qs)
	}
	if ok, _ := st.HasMessage(ctx, notice); ok {
		t.Error("the notice of a quote was stored as a chat line")
	}
	// The chat line joins the thread, as the seller's.
	if err := b.SyncMessage(ctx, chatID); err != nil {
		t.Fatal(err)
	}
	m, err := st.Message(ctx, chatID)
	if err != nil || m.Direction != store.FromSeller || m.Text != "Catering is included." || m.Sender != "Seller One" || m.TripID != trip.ID {
		t.Errorf("chat line = %+v, %v", m, err)
	}
	// An unknown message is NOT_FOUND on message_id.
	err = b.SyncMessage(ctx, "asellermsg-1")
	if e := code(t, err); e.Code != mcperr.NotFound || e.Field != "message_id" {
		t.Errorf("unknown message: %v", err)
	}
}

// TestWebhookSettings: register, list and deactivate a subscription; the
// fake then posts pointers to it with the subscription's Basic credentials
// until answered 200, and stops when it is deactivated.
func TestWebhookSettings(t *testing.T) {
	ctx := context.Background()
	fake := fakeavinode.New(t, fakeavinode.Config{APIToken: apiToken, AuthToken: authToken})
	c := newClient(t, avinode.Config{BaseURL: fake.BaseURL(), APIToken: apiToken, AuthToken: authToken})

	var mu sync.Mutex
	var got []map[string]string
	calls := 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		user, pass, ok := r.BasicAuth()
		if !ok || user != "mcp-fleet" || pass != "a-long-client-secret-1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if calls == 1 {
			// The first delivery fails: Avinode delivers it again.
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var p map[string]string
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &p); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got = append(got, p)
	}))
	defer target.Close()

	created, err := c.CreateWebhook(ctx, avinode.WebhookSettings{TargetURI: target.URL + "/webhooks/avinode", DisplayName: "test",
		Active: true, ClientIdentifier: "mcp-fleet", ClientSecret: "a-long-client-secret-1", ClientAuthenticationType: "BASIC",
		EventTypes: []string{avinode.EventTripChatFromSeller}})
	if err != nil {
		t.Fatal(err)
	}
	if created.ID == "" || created.ClientSecret != "" || !created.Active {
		t.Errorf("created = %+v", created)
	}
	list, err := c.ListWebhooks(ctx)
	if err != nil || len(list) != 1 || list[0].ID != created.ID || !slices.Equal(list[0].EventTypes, []string{"TripChatFromSeller"}) {
		t.Fatalf("list = %+v, %v", list, err)
	}
	// Refused: an unknown event type, another authentication.
	for _, bad := range []avinode.WebhookSettings{
		{TargetURI: target.URL, Active: true, ClientIdentifier: "a", ClientSecret: "b", ClientAuthenticationType: "BASIC", EventTypes: []string{"Quotes"}},
		{TargetURI: target.URL, Active: true, ClientIdentifier: "a", ClientSecret: "b", ClientAuthenticationType: "OAUTH", EventTypes: []string{"TripRequest"}},
		{TargetURI: "not a url", Active: true, ClientIdentifier: "a", ClientSecret: "b", ClientAuthenticationType: "BASIC", EventTypes: []string{"TripRequest"}},
	} {
		if _, err := c.CreateWebhook(ctx, bad); code(t, err).Code != mcperr.Validation {
			t.Errorf("%+v: %v", bad, err)
		}
	}

	trip, err := avinode.NewBackend(c, mustStore(t)).CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB",
		To: "KBOS", Departure: time.Now().Add(48 * time.Hour), Passengers: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	rfqID, _ := fake.AddRFQ(trip.ID, fakeavinode.Seller{ID: "s1", Name: "Seller One"}, fakeavinode.Aircraft{Type: "Phenom 300"})
	msgID := fake.SellerMessage(rfqID, "hello")
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := fake.Deliveries()
		if len(d) == 1 && d[0].Delivered {
			if d[0].Attempts != 2 || d[0].EventType != "TripChatFromSeller" {
				t.Errorf("delivery = %+v", d[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never delivered: %+v", d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	if len(got) != 1 || got[0]["id"] != msgID || got[0]["type"] != "tripmsgs" || got[0]["href"] != fake.BaseURL()+"/tripmsgs/"+msgID ||
		got[0]["tripId"] == "" {
		t.Errorf("pointer = %+v", got)
	}
	mu.Unlock()

	// Deactivated: no more notifications.
	sub := list[0]
	sub.Active = false
	if out, err := c.UpdateWebhook(ctx, sub); err != nil || out.Active {
		t.Fatalf("deactivate = %+v, %v", out, err)
	}
	if _, active, _, user, secret, ok := fake.Subscription(created.ID); !ok || active || user != "mcp-fleet" || secret != "a-long-client-secret-1" {
		t.Errorf("subscription after deactivation: active %v user %q secret kept %v", active, user, secret != "")
	}
	fake.SellerMessage(rfqID, "anyone?")
	if n := len(fake.Deliveries()); n != 1 {
		t.Errorf("%d deliveries after deactivation", n)
	}
	sub.ID = "awebhook-1"
	if _, err := c.UpdateWebhook(ctx, sub); code(t, err).Code != mcperr.NotFound {
		t.Errorf("updating an unknown subscription: %v", err)
	}
}
