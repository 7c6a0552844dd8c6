package mock

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
)

// postbox records what Notify posted, failing while broken is set.
type postbox struct {
	mu     sync.Mutex
	bodies []store.Pointer
	broken bool
}

func (p *postbox) notify(_ context.Context, body []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken {
		return errors.New("receiver down")
	}
	var ptr store.Pointer
	if err := json.Unmarshal(body, &ptr); err != nil {
		return err
	}
	p.bodies = append(p.bodies, ptr)
	return nil
}

// TestNoticesGoThroughNotify: with Notify set, a published answer is not
// queued as a webhook event but kept as a notice until posted; a failed
// post keeps it for the next round; a posted one is never posted again.
func TestNoticesGoThroughNotify(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Options{})
	now := departure.Add(-72 * time.Hour)
	clock := func() time.Time { return now }
	box := &postbox{broken: true}
	m := New(st, Config{Now: clock, Notify: box.notify, FirstResponse: time.Second, ResponseWindow: time.Minute})
	trip, err := m.CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS", Departure: departure, Passengers: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	published, err := m.Deliver(ctx, "")
	if err != nil || published == 0 {
		t.Fatalf("deliver: %d, %v", published, err)
	}
	if evs, err := st.WebhookEvents(ctx, store.EventFilter{TripID: trip.ID, Limit: 100}); err != nil || len(evs) != 0 {
		t.Fatalf("with Notify, answers were queued directly: %d events, %v", len(evs), err)
	}
	if sent, err := m.SendNotices(ctx); sent != 0 || err == nil {
		t.Fatalf("a receiver that is down: sent %d, err %v", sent, err)
	}
	box.mu.Lock()
	box.broken = false
	box.mu.Unlock()
	sent, err := m.SendNotices(ctx)
	if err != nil || sent != published || len(box.bodies) != published {
		t.Fatalf("sent %d of %d (posted %d): %v", sent, published, len(box.bodies), err)
	}
	for _, p := range box.bodies {
		if p.Type != "rfqs" || p.TripRef != trip.DisplayID || p.Href != BaseURL+"/rfqs/"+p.ID {
			t.Errorf("notification %+v", p)
		}
	}
	if again, err := m.SendNotices(ctx); again != 0 || err != nil {
		t.Errorf("posted again: %d, %v", again, err)
	}
	// Without Notify nothing is posted, and pending notices stay.
	if n, err := New(st, Config{Now: clock}).SendNotices(ctx); n != 0 || err != nil {
		t.Errorf("without Notify: %d, %v", n, err)
	}
}

// TestNoPublish: a process that leaves publishing to another publishes
// nothing, however due the answers are; the publisher then does.
func TestNoPublish(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Options{})
	now := departure.Add(-72 * time.Hour)
	clock := func() time.Time { return now }
	reader := New(st, Config{Now: clock, NoPublish: true})
	trip, err := reader.CreateTrip(ctx, market.TripRequest{Segments: []store.Segment{{From: "KTEB", To: "KBOS", Departure: departure, Passengers: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if n, err := reader.Deliver(ctx, ""); n != 0 || err != nil {
		t.Fatalf("NoPublish delivered %d, %v", n, err)
	}
	if err := reader.SyncTrip(ctx, trip.ID); err != nil {
		t.Fatal(err)
	}
	if evs, _ := st.WebhookEvents(ctx, store.EventFilter{TripID: trip.ID, Limit: 100}); len(evs) != 0 {
		t.Fatalf("a NoPublish read published %d answers", len(evs))
	}
	if n, err := New(st, Config{Now: clock}).Deliver(ctx, ""); n == 0 || err != nil {
		t.Fatalf("the publisher delivered %d, %v", n, err)
	}
}
