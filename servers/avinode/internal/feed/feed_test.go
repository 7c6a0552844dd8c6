package feed_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/feed"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var departure = time.Now().Add(72 * time.Hour).UTC().Truncate(time.Millisecond)

// acked is where updates counts the server's acknowledgements of listen
// streams.
const acked = "(acknowledged)"

// updates collects notifications/resources/updated by URI, and the
// acknowledgements of listen streams under acked.
type updates struct {
	mu   sync.Mutex
	uris map[string]int
}

func (u *updates) count(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.uris[uri]
}

func (u *updates) wait(t *testing.T, uri string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for u.count(uri) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s notified %d times, want %d", uri, u.count(uri), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOtherProcessChanges: a client of one process hears of a quote another
// process stored, on SQLite and on PostgreSQL; only the resources of the
// trip it subscribed to are notified.
func TestOtherProcessChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		writer := db.Open(t, store.Options{})

		// The reading process: a feed, its store, an MCP client.
		n := kit.NewNotifier()
		f := feed.New(n, nil)
		f.SetInterval(10 * time.Millisecond)
		reader := db.Open(t, store.Options{OnChange: f.Local})
		f.Attach(reader)
		done := make(chan error, 1)
		go func() { done <- f.Run(ctx) }()
		d := tools.Deps{Store: reader, Market: mock.New(reader, mock.Config{}), Watch: f.Watch}
		srv, err := kit.New(kit.Info{Name: "avinode", Version: "test"}, tools.All(d), kit.Options{Templates: tools.Templates(d),
			Notifier: n, Grace: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		c := mcptest.NewInProcess(t, srv, "")
		u := &updates{uris: map[string]int{}}
		c.Raw().OnNotification(func(msg mcp.JSONRPCNotification) {
			uri := acked
			switch msg.Method {
			case "notifications/resources/updated":
				uri, _ = msg.Params.AdditionalFields["uri"].(string)
			case "notifications/subscriptions/acknowledged":
			default:
				return
			}
			u.mu.Lock()
			u.uris[uri]++
			u.mu.Unlock()
		})

		// Two trips, created by the writer; the client subscribes to the
		// first one's quotes and to the second trip.
		m := mock.New(writer, mock.Config{FirstResponse: time.Hour, ResponseWindow: time.Hour})
		var trips []*store.Trip
		for range 2 {
			trip, err := m.CreateTrip(ctx, tripRequest())
			if err != nil {
				t.Fatal(err)
			}
			trips = append(trips, trip)
		}
		quotesURI, tripURI := market.QuotesURI(trips[0].ID), market.TripURI(trips[1].ID)
		// One listen stream for both (a client keeps one at a time). The
		// server acknowledges a stream once every watch it asked for is in
		// place: a change made before then may be the watch's baseline.
		listen := func(uris ...string) func() {
			before := u.count(acked)
			stop, err := c.Raw().ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: uris}, func(error) {})
			if err != nil {
				t.Fatal(err)
			}
			u.wait(t, acked, before+1)
			return stop
		}
		stop := listen(quotesURI, tripURI)
		if !n.Subscribed(quotesURI) || !n.Subscribed(tripURI) {
			t.Fatal("acknowledged, but not subscribed to both")
		}

		// The other process stores a quote for the first trip.
		rfqs, _ := writer.TripRFQs(ctx, trips[0].ID)
		r := rfqs[0]
		r.Status = store.RFQQuoted
		r.Quotes = []store.Quote{{ID: "aquote-9000000001", OperatorName: r.SellerName, Currency: "USD", Base: 100, Total: 100}}
		if err := writer.Update(ctx, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, r); return err }); err != nil {
			t.Fatal(err)
		}
		u.wait(t, quotesURI, 1)

		// A message on the second trip: its trip resource, not quotes.
		rfqs2, _ := writer.TripRFQs(ctx, trips[1].ID)
		// say stores a buyer's message on the second trip, as the other
		// process.
		say := func(id, text string) {
			t.Helper()
			if err := writer.Update(ctx, func(tx *store.Tx) error {
				_, err := tx.SaveMessage(ctx, store.Message{ID: id, RFQID: rfqs2[0].ID, TripID: trips[1].ID, Direction: store.FromBuyer, Text: text})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		say("abuyermsg-9000000001", "hello")
		u.wait(t, tripURI, 1)
		if got := u.count(market.QuotesURI(trips[1].ID)); got != 0 {
			t.Errorf("an unsubscribed resource was notified %d times", got)
		}

		// A change this process makes is heard at once, through Local.
		r.Quotes[0].Total = 90
		if err := reader.Update(ctx, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, r); return err }); err != nil {
			t.Fatal(err)
		}
		u.wait(t, quotesURI, 2)

		// Unsubscribed: no more notifications for it.
		stop()
		mcptest.WaitFor(t, "both subscriptions to end", func() bool { return !n.Subscribed(quotesURI) && !n.Subscribed(tripURI) })
		defer listen(tripURI)()
		before := u.count(quotesURI)
		for i := range 3 {
			r.Quotes[0].Total = store.Money(80 - i)
			if err := writer.Update(ctx, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, r); return err }); err != nil {
				t.Fatal(err)
			}
		}
		// A change to the watched trip, heard after the ones above.
		say("abuyermsg-9000000002", "again")
		u.wait(t, tripURI, 2)
		if got := u.count(quotesURI); got != before {
			t.Errorf("notified %d times after unsubscribing", got-before)
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run = %v", err)
		}
	})
}

func TestWatchRefusesOtherURIs(t *testing.T) {
	f := feed.New(kit.NewNotifier(), nil)
	if _, err := f.Watch("avinode://trips/x", map[string]string{"id": "x"}); err == nil {
		t.Error("a watch of a malformed trip id")
	}
	stop, err := f.Watch("avinode://trips/atrip-1", map[string]string{"id": "atrip-1"})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // twice is harmless
	for i := range 2000 {
		f.Local(store.Change{TripID: fmt.Sprintf("atrip-%d", i)}) // never blocks, even unread
	}
}

func tripRequest() market.TripRequest {
	return market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS", Departure: departure, Passengers: 4}}}
}
