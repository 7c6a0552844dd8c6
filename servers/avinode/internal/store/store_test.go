package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// changeLog collects the store's change announcements.
type changeLog struct {
	mu  sync.Mutex
	all []store.Change
}

func (c *changeLog) add(ch store.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, ch)
}

func (c *changeLog) take() []store.Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.all
	c.all = nil
	return out
}

func forEach(t *testing.T, fn func(t *testing.T, s *store.Store, log *changeLog)) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		log := &changeLog{}
		fn(t, db.Open(t, store.Options{OnChange: log.add}), log)
	})
}

var t0 = time.Date(2030, 5, 1, 14, 0, 0, 0, time.UTC)

func sampleTrip(id string) store.Trip {
	return store.Trip{ID: id, DisplayID: "QQ263P", Status: store.TripOpen, AircraftCategory: "midsize",
		Segments: []store.Segment{{From: "KTEB", To: "KVNY", Departure: t0, Passengers: 6}},
		Links:    store.Links{SearchInAvinode: "https://example/search", ViewInAvinode: "https://example/view", Cancel: "https://example/cancel"}}
}

// saveTripRFQ saves the sample trip atrip-n with one unanswered RFQ, arfq-n.
func saveTripRFQ(ctx context.Context, tx *store.Tx, n string) error {
	if err := tx.SaveTrip(ctx, sampleTrip("atrip-"+n)); err != nil {
		return err
	}
	_, err := tx.SaveRFQ(ctx, store.RFQ{ID: "arfq-" + n, TripID: "atrip-" + n, Status: store.RFQUnanswered})
	return err
}

func update(t *testing.T, s *store.Store, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func TestTrips(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, log *changeLog) {
		ctx := context.Background()
		if _, err := s.Trip(ctx, "atrip-1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown trip: %v", err)
		}
		trip := sampleTrip("atrip-1")
		trip.Notes = "pets on board"
		update(t, s, func(tx *store.Tx) error { return tx.SaveTrip(ctx, trip) })
		if got := log.take(); len(got) != 1 || !got[0].Trip || got[0].TripID != "atrip-1" {
			t.Errorf("changes after insert: %+v", got)
		}
		got, err := s.Trip(ctx, "atrip-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.DisplayID != "QQ263P" || got.Notes != "pets on board" || len(got.Segments) != 1 ||
			!got.Segments[0].Departure.Equal(t0) || got.Links.Cancel != "https://example/cancel" || got.CreatedAt.IsZero() {
			t.Errorf("trip = %+v", got)
		}
		// The same data again changes nothing and announces nothing; an
		// update without notes keeps the local notes.
		again := sampleTrip("atrip-1")
		update(t, s, func(tx *store.Tx) error { return tx.SaveTrip(ctx, again) })
		if got := log.take(); len(got) != 0 {
			t.Errorf("an unchanged trip was announced: %+v", got)
		}
		if got, _ := s.Trip(ctx, "atrip-1"); got.Notes != "pets on board" {
			t.Errorf("notes lost: %q", got.Notes)
		}

		rfq := store.RFQ{ID: "arfq-1", TripID: "atrip-1", SellerName: "Op", Status: store.RFQQuoted,
			Quotes: []store.Quote{{ID: "aquote-1", OperatorName: "Op", AircraftType: "Citation X", Currency: "USD", Base: 100, Total: 120}}}
		update(t, s, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, rfq); return err })
		log.take()

		var was bool
		update(t, s, func(tx *store.Tx) error {
			var err error
			was, err = tx.CancelTrip(ctx, "atrip-1", "BY_CLIENT", "sorry")
			return err
		})
		if !was {
			t.Error("CancelTrip of an open trip reported it was not open")
		}
		got, _ = s.Trip(ctx, "atrip-1")
		r, _ := s.RFQ(ctx, "arfq-1")
		qs, _ := s.Quotes(ctx, store.QuoteFilter{TripID: "atrip-1"}, t0)
		if got.Status != store.TripCancelled || got.CancelReason != "BY_CLIENT" || got.CancelMessage != "sorry" ||
			r.Status != store.RFQCancelled || len(qs) != 1 || qs[0].Status != store.QuoteCancelled {
			t.Errorf("after cancel: trip %+v rfq %+v quotes %+v", got, r, qs)
		}
		if ch := log.take(); len(ch) != 1 || !ch[0].Trip || !ch[0].Quotes {
			t.Errorf("changes after cancel: %+v", ch)
		}
		update(t, s, func(tx *store.Tx) error {
			var err error
			was, err = tx.CancelTrip(ctx, "atrip-1", "OTHER", "again")
			return err
		})
		if was {
			t.Error("a second cancel reported the trip open")
		}
		if got, _ := s.Trip(ctx, "atrip-1"); got.CancelReason != "BY_CLIENT" {
			t.Errorf("a second cancel overwrote the reason: %q", got.CancelReason)
		}

		for i := 2; i <= 4; i++ {
			tr := sampleTrip("atrip-" + string(rune('0'+i)))
			tr.CreatedAt = t0.Add(time.Duration(i) * time.Hour)
			update(t, s, func(tx *store.Tx) error { return tx.SaveTrip(ctx, tr) })
		}
		recent, err := s.RecentTrips(ctx, 2)
		if err != nil || len(recent) != 2 || recent[0].ID != "atrip-4" || recent[1].ID != "atrip-3" {
			t.Errorf("recent trips = %v, %v", recent, err)
		}
	})
}

func TestRFQsAndQuotes(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, log *changeLog) {
		ctx := context.Background()
		update(t, s, func(tx *store.Tx) error { return tx.SaveTrip(ctx, sampleTrip("atrip-7")) })
		log.take()

		sent := t0.Add(-48 * time.Hour)
		rfq := store.RFQ{ID: "arfq-7", TripID: "atrip-7", SellerID: "acompany-1", SellerName: "Executive Jet Management",
			SellerCountry: "US", Status: store.RFQUnanswered, CreatedAt: sent,
			Lifts: []store.Lift{{ID: "asellerlift-1", AircraftType: "Citation X", AircraftCategory: "midsize", AircraftTail: "N601EJ", Capacity: 8}}}
		save := func(r store.RFQ) bool {
			var changed bool
			update(t, s, func(tx *store.Tx) error {
				var err error
				changed, err = tx.SaveRFQ(ctx, r)
				return err
			})
			return changed
		}
		if !save(rfq) {
			t.Error("a new RFQ was not a change")
		}
		if save(rfq) {
			t.Error("the same RFQ again was a change")
		}
		if ch := log.take(); len(ch) != 1 || !ch[0].Quotes {
			t.Errorf("changes: %+v", ch)
		}

		// The seller quotes.
		responded := sent.Add(12 * time.Minute)
		valid := t0.Add(-2 * time.Hour)
		rfq.Status, rfq.RespondedAt = store.RFQQuoted, &responded
		rfq.Quotes = []store.Quote{{ID: "aquote-7", LiftID: "asellerlift-1", OperatorName: "Executive Jet Management",
			AircraftType: "Citation X", AircraftTail: "N601EJ", Currency: "USD", Base: 4500000, TaxesFees: 320000, Total: 4820000,
			Breakdown:  []store.PriceLine{{Label: "Flight time", Kind: "flight", Amount: 4500000}, {Label: "Fees", Kind: "fee", Amount: 320000}},
			ValidUntil: &valid, SellerMessage: "Pet-friendly aircraft available", ReceivedAt: responded}}
		if !save(rfq) {
			t.Error("a quote arriving was not a change")
		}
		if save(rfq) {
			t.Error("the same quote again was a change")
		}
		got, err := s.RFQ(ctx, "arfq-7")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.RFQQuoted || got.RespondedAt == nil || !got.RespondedAt.Equal(responded) || !got.CreatedAt.Equal(sent) ||
			len(got.Lifts) != 1 || got.Lifts[0].AircraftTail != "N601EJ" {
			t.Errorf("rfq = %+v", got)
		}
		qs, err := s.Quotes(ctx, store.QuoteFilter{RFQID: "arfq-7"}, t0.Add(-3*time.Hour))
		if err != nil || len(qs) != 1 {
			t.Fatalf("quotes = %v, %v", qs, err)
		}
		q := qs[0]
		if q.TripID != "atrip-7" || q.Total != 4820000 || q.Status != store.QuoteActive || len(q.Breakdown) != 2 ||
			q.ValidUntil == nil || !q.ValidUntil.Equal(valid) || q.SellerMessage == "" {
			t.Errorf("quote = %+v", q)
		}
		// Past its validity it reads as expired.
		qs, _ = s.Quotes(ctx, store.QuoteFilter{QuoteID: "aquote-7"}, t0)
		if len(qs) != 1 || qs[0].Status != store.QuoteExpired {
			t.Errorf("quote after validity = %+v", qs)
		}
		// A new price is a change.
		rfq.Quotes[0].Total = 4700000
		if !save(rfq) {
			t.Error("a new price was not a change")
		}
		if raw, _ := json.Marshal(qs[0].Total); string(raw) != "48200.00" {
			t.Errorf("money JSON = %s", raw)
		}
		if _, err := s.Quotes(ctx, store.QuoteFilter{}, t0); err == nil {
			t.Error("an empty quote filter was accepted")
		}
		rfqs, err := s.TripRFQs(ctx, "atrip-7")
		if err != nil || len(rfqs) != 1 {
			t.Errorf("trip RFQs = %v, %v", rfqs, err)
		}
		// An RFQ for an unknown trip is refused: nothing is half-written.
		bad := store.RFQ{ID: "arfq-8", TripID: "atrip-missing", Status: store.RFQUnanswered}
		if err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, bad); return err }); err == nil {
			t.Error("an RFQ of an unknown trip was stored")
		}
		if _, err := s.RFQ(ctx, "arfq-8"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the refused RFQ: %v", err)
		}
	})
}

func TestMessages(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, log *changeLog) {
		ctx := context.Background()
		update(t, s, func(tx *store.Tx) error {
			return saveTripRFQ(ctx, tx, "9")
		})
		log.take()
		for i, text := range []string{"first", "second", "third"} {
			m := store.Message{ID: "abuyermsg-" + string(rune('1'+i)), RFQID: "arfq-9", TripID: "atrip-9",
				Direction: store.FromBuyer, Text: text, SentAt: t0.Add(time.Duration(i) * time.Minute)}
			var isNew bool
			update(t, s, func(tx *store.Tx) error {
				var err error
				isNew, err = tx.SaveMessage(ctx, m)
				return err
			})
			if !isNew {
				t.Errorf("message %d was not new", i)
			}
			update(t, s, func(tx *store.Tx) error {
				var err error
				isNew, err = tx.SaveMessage(ctx, m)
				return err
			})
			if isNew {
				t.Errorf("message %d stored twice", i)
			}
		}
		if ch := log.take(); len(ch) != 3 || !ch[0].Messages {
			t.Errorf("changes: %+v", ch)
		}
		all, err := s.Messages(ctx, "arfq-9", 10)
		if err != nil || len(all) != 3 || all[0].Text != "first" || all[2].Text != "third" {
			t.Errorf("messages = %+v, %v", all, err)
		}
		last2, _ := s.Messages(ctx, "arfq-9", 2)
		if len(last2) != 2 || last2[0].Text != "second" || last2[1].Text != "third" {
			t.Errorf("last two = %+v", last2)
		}
		if ok, err := s.HasMessage(ctx, "abuyermsg-2"); !ok || err != nil {
			t.Errorf("HasMessage = %v, %v", ok, err)
		}
		counts, err := s.MessageCounts(ctx, "atrip-9")
		if err != nil || counts["arfq-9"] != 3 {
			t.Errorf("counts = %v, %v", counts, err)
		}
	})
}

func TestWatches(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		w := store.Watch{ID: "awatch-1", Name: "Luton to Nice", From: "EGGW", To: "LFMN", AircraftCategory: "midsize", DaysOut: 5, Active: true}
		update(t, s, func(tx *store.Tx) error { return tx.SaveWatch(ctx, w) })
		w.Name = "Luton to Nice, renamed"
		update(t, s, func(tx *store.Tx) error { return tx.SaveWatch(ctx, w) })
		got, err := s.Watch(ctx, "awatch-1")
		if err != nil || got.Name != w.Name || !got.Active || got.DaysOut != 5 {
			t.Errorf("watch = %+v, %v", got, err)
		}
		all, _ := s.Watches(ctx)
		if len(all) != 1 {
			t.Errorf("watches = %v", all)
		}
		var deleted bool
		update(t, s, func(tx *store.Tx) error { var err error; deleted, err = tx.DeleteWatch(ctx, "awatch-1"); return err })
		if !deleted {
			t.Error("delete reported nothing deleted")
		}
		if _, err := s.Watch(ctx, "awatch-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted watch: %v", err)
		}
	})
}

func TestSequencesAndEvents(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		var seq []int64
		for range 3 {
			update(t, s, func(tx *store.Tx) error {
				v, err := tx.NextSeq(ctx, "trip", 100)
				seq = append(seq, v)
				return err
			})
		}
		if !slices.Equal(seq, []int64{100, 101, 102}) {
			t.Errorf("sequence = %v", seq)
		}
		update(t, s, func(tx *store.Tx) error {
			if err := saveTripRFQ(ctx, tx, "5"); err != nil {
				return err
			}
			for i, due := range []time.Duration{time.Minute, 2 * time.Minute, time.Hour} {
				e := store.Event{ID: "ev" + string(rune('1'+i)), TripID: "atrip-5", RFQID: "arfq-5", Kind: "quote",
					DueAt: t0.Add(due), Payload: json.RawMessage(`{"n":1}`)}
				if err := tx.ScheduleEvent(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if due, err := s.HasDueEvents(ctx, t0); due || err != nil {
			t.Errorf("events due before their time: %v, %v", due, err)
		}
		if due, _ := s.HasDueEvents(ctx, t0.Add(2*time.Minute)); !due {
			t.Error("no event due after two minutes")
		}
		// Eight deliverers at once: each due event is applied exactly once.
		var applied atomic.Int32
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := s.DeliverDue(ctx, t0.Add(2*time.Minute), "", 10, func(ctx context.Context, tx *store.Tx, e store.Event) error {
					mu.Lock()
					seen[e.ID]++
					mu.Unlock()
					applied.Add(1)
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if applied.Load() != 2 || seen["ev1"] != 1 || seen["ev2"] != 1 {
			t.Errorf("applied %d: %v", applied.Load(), seen)
		}
		// A failing apply leaves the event undelivered.
		boom := errors.New("boom")
		if _, err := s.DeliverDue(ctx, t0.Add(2*time.Hour), "atrip-5", 10, func(context.Context, *store.Tx, store.Event) error { return boom }); !errors.Is(err, boom) {
			t.Errorf("failing apply: %v", err)
		}
		if due, _ := s.HasDueEvents(ctx, t0.Add(2*time.Hour)); !due {
			t.Error("a failed delivery marked its event done")
		}
		update(t, s, func(tx *store.Tx) error { return tx.DropEvents(ctx, "atrip-5", t0) })
		if due, _ := s.HasDueEvents(ctx, t0.Add(2*time.Hour)); due {
			t.Error("dropped events are still due")
		}
		if err := s.Ping(ctx); err != nil {
			t.Error(err)
		}
	})
}

func TestUpdateRollsBack(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, log *changeLog) {
		ctx := context.Background()
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx *store.Tx) error {
			if err := tx.SaveTrip(ctx, sampleTrip("atrip-11")); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v", err)
		}
		if _, err := s.Trip(ctx, "atrip-11"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a rolled-back trip is readable: %v", err)
		}
		if ch := log.take(); len(ch) != 0 {
			t.Errorf("a rolled-back transaction announced %+v", ch)
		}
	})
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "missing-dir-is-made", "a.db"), store.Options{}); err != nil {
		t.Errorf("a missing directory is created: %v", err)
	}
	if _, err := store.OpenPostgres(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", store.Options{}); err == nil {
		t.Error("an unreachable PostgreSQL opened")
	}
	if _, err := store.OpenPostgres(ctx, "::not a url", store.Options{}); err == nil {
		t.Error("a malformed URL opened")
	}
}

// TestNotices: a notification kept with its published event is pending
// until marked sent, on both databases.
func TestNotices(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		update(t, s, func(tx *store.Tx) error {
			if err := saveTripRFQ(ctx, tx, "7"); err != nil {
				return err
			}
			for i := range 2 {
				e := store.Event{ID: fmt.Sprintf("ev-n%d", i), TripID: "atrip-7", RFQID: "arfq-7", Kind: "quote",
					DueAt: t0.Add(time.Duration(i) * time.Minute), Payload: json.RawMessage(`{}`)}
				if err := tx.ScheduleEvent(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if n, err := s.PendingNotices(ctx, 10); err != nil || len(n) != 0 {
			t.Fatalf("pending before publishing: %v, %v", n, err)
		}
		if _, err := s.DeliverDue(ctx, t0.Add(time.Hour), "", 10, func(ctx context.Context, tx *store.Tx, e store.Event) error {
			return tx.SetEventNotice(ctx, e.ID, []byte(`{"id":"`+e.ID+`"}`))
		}); err != nil {
			t.Fatal(err)
		}
		pending, err := s.PendingNotices(ctx, 10)
		if err != nil || len(pending) != 2 || pending[0].EventID != "ev-n0" || string(pending[1].Body) != `{"id":"ev-n1"}` {
			t.Fatalf("pending = %+v, %v", pending, err)
		}
		if err := s.MarkNoticed(ctx, "ev-n0", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if pending, _ := s.PendingNotices(ctx, 10); len(pending) != 1 || pending[0].EventID != "ev-n1" {
			t.Errorf("after one was sent: %+v", pending)
		}
	})
}
