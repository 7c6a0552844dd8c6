package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx database/sql driver, for an admin connection

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store/storetest"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

// twoProcesses opens the store twice on one database, as two processes
// would, on each database the store supports.
func twoProcesses(t *testing.T, fn func(t *testing.T, a, b *store.Store)) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		fn(t, db.Open(t, store.Options{}), db.Open(t, store.Options{}))
	})
}

func pointer(id string) store.Incoming {
	p := store.Pointer{ID: id, Href: "https://sandbox.avinode.com/api/tripmsgs/" + id, Type: "tripmsgs", TripRef: "QQ263P"}
	raw, _ := json.Marshal(map[string]any{"id": p.ID, "href": p.Href, "type": p.Type, "tripId": p.TripRef, "newField": 1})
	return store.Incoming{Pointer: p, Raw: raw, Source: store.SourceAvinode, SourceIP: "203.0.113.7", SignatureVerified: true,
		MaxRetries: 2, ReceivedAt: t0}
}

func backoff(n int) time.Duration { return time.Duration(n) * time.Minute }

func TestWebhookEventLifecycle(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		ev, fresh, err := s.ReceiveWebhookEvent(ctx, pointer("asellermsg-1"))
		if err != nil || !fresh {
			t.Fatalf("receive = %v, %v", fresh, err)
		}
		if ev.Status != store.EventPending || ev.EventType != "message_received" || ev.ResourceType != "tripmsgs" ||
			ev.Deliveries != 1 || !ev.SignatureVerified || ev.SourceIP != "203.0.113.7" || ev.MaxRetries != 2 || ev.TripRef != "QQ263P" ||
			ev.NextRetryAt == nil || !ev.NextRetryAt.Equal(t0) || ev.Payload == "" || len(ev.ID) != 23 {
			t.Fatalf("stored event = %+v", ev)
		}
		// A redelivery: the same row, counted.
		again, fresh, err := s.ReceiveWebhookEvent(ctx, pointer("asellermsg-1"))
		if err != nil || fresh || again.ID != ev.ID || again.Deliveries != 2 {
			t.Fatalf("redelivery = %+v, %v, %v", again, fresh, err)
		}
		if due, err := s.HasDueWebhookEvents(ctx, t0.Add(-time.Second)); due || err != nil {
			t.Errorf("due before its time: %v, %v", due, err)
		}
		if due, _ := s.HasDueWebhookEvents(ctx, t0); !due {
			t.Error("a pending event is not due")
		}

		// Claimed: leased, and no one else takes it.
		claim, err := s.ClaimWebhookEvents(ctx, "w1", t0, time.Minute, 5)
		if err != nil || len(claim.Events) != 1 || len(claim.Abandoned) != 0 {
			t.Fatalf("claim = %+v, %v", claim, err)
		}
		got := claim.Events[0]
		if got.Status != store.EventProcessing || got.LeaseOwner != "w1/0" || got.LeaseExpiresAt == nil ||
			!got.LeaseExpiresAt.Equal(t0.Add(time.Minute)) || got.ClaimedAt == nil {
			t.Errorf("claimed = %+v", got)
		}
		if c, _ := s.ClaimWebhookEvents(ctx, "w2", t0.Add(59*time.Second), time.Minute, 5); len(c.Events) != 0 {
			t.Errorf("claimed twice: %+v", c.Events)
		}

		// A transient failure: retried after the backoff.
		status, err := s.FailWebhookEvent(ctx, &got, "UPSTREAM_ERROR: Avinode answered 503", false, t0, backoff)
		if err != nil || status != store.EventFailed {
			t.Fatalf("fail = %s, %v", status, err)
		}
		if _, err := s.FailWebhookEvent(ctx, &got, "again", false, t0, backoff); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("failing an event no longer held: %v", err)
		}
		e2, _ := s.WebhookEvent(ctx, ev.ID)
		if e2.Status != store.EventFailed || e2.RetryCount != 1 || !e2.NextRetryAt.Equal(t0.Add(time.Minute)) ||
			e2.Error != "UPSTREAM_ERROR: Avinode answered 503" || e2.LeaseOwner != "" {
			t.Errorf("after a failure: %+v", e2)
		}
		if due, _ := s.HasDueWebhookEvents(ctx, t0.Add(30*time.Second)); due {
			t.Error("due before its backoff ended")
		}

		// Second attempt fails, third (retry_count 2 = max) fails → dead
		// letter at max_retries.
		for i, at := range []time.Duration{time.Minute, 4 * time.Minute} {
			c, err := s.ClaimWebhookEvents(ctx, fmt.Sprintf("w%d", i+3), t0.Add(at), time.Minute, 5)
			if err != nil || len(c.Events) != 1 {
				t.Fatalf("claim %d = %+v, %v", i, c, err)
			}
			if _, err := s.FailWebhookEvent(ctx, &c.Events[0], "still failing", false, t0.Add(at), backoff); err != nil {
				t.Fatal(err)
			}
		}
		dead, _ := s.WebhookEvent(ctx, ev.ID)
		if dead.Status != store.EventDeadLetter || dead.RetryCount != 2 || dead.ProcessedAt == nil || dead.NextRetryAt != nil {
			t.Fatalf("after the retries: %+v", dead)
		}
		if due, _ := s.HasDueWebhookEvents(ctx, t0.Add(24*time.Hour)); due {
			t.Error("a dead-letter event is due")
		}

		// Requeued: due now, retries restored; completed by its next worker.
		re, err := s.RequeueWebhookEvent(ctx, ev.ID, t0.Add(time.Hour))
		if err != nil || re.Status != store.EventPending || re.RetryCount != 0 || re.RequeueCount != 1 || re.Error != "still failing" {
			t.Fatalf("requeue = %+v, %v", re, err)
		}
		if _, err := s.RequeueWebhookEvent(ctx, ev.ID, t0.Add(time.Hour)); !errors.Is(err, store.ErrNotRequeueable) {
			t.Errorf("requeueing a pending event: %v", err)
		}
		if _, err := s.RequeueWebhookEvent(ctx, "wh-00000000000000000000", t0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("requeueing an unknown event: %v", err)
		}
		c, _ := s.ClaimWebhookEvents(ctx, "w9", t0.Add(time.Hour), time.Minute, 5)
		if len(c.Events) != 1 {
			t.Fatalf("the requeued event was not claimed: %+v", c)
		}
		stale := c.Events[0]
		stale.LeaseOwner = "someone-else/0"
		if err := s.CompleteWebhookEvent(ctx, &stale, store.Outcome{EventType: "x"}, t0); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("completing with another lease: %v", err)
		}
		done := t0.Add(time.Hour + 250*time.Millisecond)
		if err := s.CompleteWebhookEvent(ctx, &c.Events[0], store.Outcome{EventType: "quote_received", TripID: "atrip-1",
			RFQID: "arfq-1", QuoteID: "aquote-1", MessageID: "asellermsg-1", Data: `{"outcome":"quote_received"}`}, done); err != nil {
			t.Fatal(err)
		}
		fin, _ := s.WebhookEvent(ctx, ev.ID)
		if fin.Status != store.EventCompleted || fin.EventType != "quote_received" || fin.TripID != "atrip-1" || fin.QuoteID != "aquote-1" ||
			fin.DurationMS == nil || *fin.DurationMS != 250 || fin.ParsedData != `{"outcome":"quote_received"}` || fin.LeaseOwner != "" {
			t.Errorf("completed = %+v", fin)
		}
		if _, err := s.RequeueWebhookEvent(ctx, ev.ID, done); !errors.Is(err, store.ErrNotRequeueable) {
			t.Errorf("requeueing a completed event: %v", err)
		}
		if _, err := s.WebhookEvent(ctx, "wh-nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown event: %v", err)
		}

		// A permanent failure goes straight to the dead letter.
		other, _, _ := s.ReceiveWebhookEvent(ctx, pointer("asellermsg-2"))
		c, _ = s.ClaimWebhookEvents(ctx, "w10", t0, time.Minute, 5)
		if len(c.Events) != 1 || c.Events[0].ID != other.ID {
			t.Fatalf("claim = %+v", c)
		}
		if st, err := s.FailWebhookEvent(ctx, &c.Events[0], "NOT_FOUND: no such message", true, t0, backoff); err != nil || st != store.EventDeadLetter {
			t.Errorf("permanent failure = %s, %v", st, err)
		}
	})
}

// TestLeaseExpiry: a worker that stops mid-event loses it when its lease
// runs out; the next claim counts the lost attempt, and once the retries are
// spent moves the event to the dead letter instead.
func TestLeaseExpiry(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		ev, _, _ := s.ReceiveWebhookEvent(ctx, pointer("asellermsg-5")) // two retries
		at := t0
		for i := range 3 {
			c, err := s.ClaimWebhookEvents(ctx, fmt.Sprintf("dies%d", i), at, time.Minute, 1)
			if err != nil || len(c.Events) != 1 {
				t.Fatalf("claim %d: %+v, %v", i, c, err)
			}
			if c.Events[0].RetryCount != i {
				t.Errorf("claim %d: retry_count %d", i, c.Events[0].RetryCount)
			}
			if i > 0 && c.Events[0].Error == "" {
				t.Errorf("claim %d: the lost attempt left no reason", i)
			}
			if c2, _ := s.ClaimWebhookEvents(ctx, "other", at.Add(time.Minute-time.Millisecond), time.Minute, 1); len(c2.Events) != 0 {
				t.Fatalf("taken while its lease held: %+v", c2.Events)
			}
			at = at.Add(time.Minute + time.Millisecond)
		}
		c, err := s.ClaimWebhookEvents(ctx, "last", at, time.Minute, 1)
		if err != nil || len(c.Events) != 0 || len(c.Abandoned) != 1 || c.Abandoned[0].Status != store.EventDeadLetter {
			t.Fatalf("after the retries: %+v, %v", c, err)
		}
		if got, _ := s.WebhookEvent(ctx, ev.ID); got.Status != store.EventDeadLetter || got.Error == "" {
			t.Errorf("abandoned = %+v", got)
		}
	})
}

// TestClaimsNeverOverlap: eight workers in each of two processes claim from
// one queue; every event is claimed exactly once.
func TestClaimsNeverOverlap(t *testing.T) {
	twoProcesses(t, func(t *testing.T, a, b *store.Store) {
		ctx := context.Background()
		const n = 60
		for i := range n {
			if _, _, err := a.ReceiveWebhookEvent(ctx, pointer(fmt.Sprintf("asellermsg-%d", 100+i))); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for w := range 16 {
			s := a
			if w%2 == 1 {
				s = b
			}
			wg.Go(func() {
				for {
					c, err := s.ClaimWebhookEvents(ctx, fmt.Sprintf("worker%d", w), t0, time.Hour, 2)
					if err != nil {
						t.Error(err)
						return
					}
					if len(c.Events) == 0 {
						return
					}
					mu.Lock()
					for _, e := range c.Events {
						seen[e.AvinodeEventID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != n {
			t.Errorf("%d of %d events claimed", len(seen), n)
		}
		for id, k := range seen {
			if k != 1 {
				t.Errorf("%s claimed %d times", id, k)
			}
		}
		counts, err := b.WebhookEventCounts(ctx)
		if err != nil || counts[store.EventProcessing] != n || counts[store.EventPending] != 0 {
			t.Errorf("counts = %v, %v", counts, err)
		}
	})
}

// TestConcurrentRedeliveries: the same notification twenty times at once
// from two processes is one row with twenty deliveries.
func TestConcurrentRedeliveries(t *testing.T) {
	twoProcesses(t, func(t *testing.T, a, b *store.Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		var mu sync.Mutex
		fresh, ids := 0, map[string]bool{}
		for i := range 20 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				ev, f, err := s.ReceiveWebhookEvent(ctx, pointer("asellermsg-77"))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[ev.ID] = true
				if f {
					fresh++
				}
			})
		}
		wg.Wait()
		evs, err := a.WebhookEvents(ctx, store.EventFilter{})
		if err != nil || len(evs) != 1 || evs[0].Deliveries != 20 || fresh != 1 || len(ids) != 1 {
			t.Errorf("events %+v (%v), fresh %d, ids %v", evs, err, fresh, ids)
		}
	})
}

func TestWebhookEventListing(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		for i := range 5 {
			in := pointer(fmt.Sprintf("asellermsg-%d", i))
			in.ReceivedAt = t0.Add(time.Duration(i) * time.Second)
			if i%2 == 0 {
				in.Type, in.Href = "rfqs", "https://sandbox.avinode.com/api/rfqs/"+in.ID
			}
			if _, _, err := s.ReceiveWebhookEvent(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		c, _ := s.ClaimWebhookEvents(ctx, "w", t0.Add(time.Hour), time.Minute, 1)
		if err := s.CompleteWebhookEvent(ctx, &c.Events[0], store.Outcome{EventType: "quote_received", TripID: "atrip-42"}, t0); err != nil {
			t.Fatal(err)
		}
		ids := func(evs []store.WebhookEvent) []string {
			var out []string
			for _, e := range evs {
				out = append(out, e.AvinodeEventID)
			}
			return out
		}
		all, err := s.WebhookEvents(ctx, store.EventFilter{})
		if err != nil || !slices.Equal(ids(all), []string{"asellermsg-4", "asellermsg-3", "asellermsg-2", "asellermsg-1", "asellermsg-0"}) {
			t.Errorf("all = %v, %v", ids(all), err)
		}
		page, _ := s.WebhookEvents(ctx, store.EventFilter{Limit: 2})
		next, _ := s.WebhookEvents(ctx, store.EventFilter{Limit: 2, Before: page[1].ID})
		if !slices.Equal(ids(page), []string{"asellermsg-4", "asellermsg-3"}) || !slices.Equal(ids(next), []string{"asellermsg-2", "asellermsg-1"}) {
			t.Errorf("pages %v then %v", ids(page), ids(next))
		}
		if _, err := s.WebhookEvents(ctx, store.EventFilter{Before: "wh-00000000000000000000"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an unknown cursor: %v", err)
		}
		for _, tc := range []struct {
			f    store.EventFilter
			want []string
		}{
			{store.EventFilter{Type: "rfqs"}, []string{"asellermsg-4", "asellermsg-2", "asellermsg-0"}},
			{store.EventFilter{Type: "quote_received"}, []string{"asellermsg-0"}},
			{store.EventFilter{TripID: "atrip-42"}, []string{"asellermsg-0"}},
			{store.EventFilter{TripID: "QQ263P", Status: store.EventPending, Limit: 1}, []string{"asellermsg-4"}},
			{store.EventFilter{Status: store.EventDeadLetter}, nil},
		} {
			got, err := s.WebhookEvents(ctx, tc.f)
			if err != nil || !slices.Equal(ids(got), tc.want) {
				t.Errorf("%+v: %v, %v", tc.f, ids(got), err)
			}
		}
		counts, err := s.WebhookEventCounts(ctx)
		if err != nil || counts[store.EventPending] != 4 || counts[store.EventCompleted] != 1 || counts[store.EventDeadLetter] != 0 {
			t.Errorf("counts = %v, %v", counts, err)
		}
		if store.ProvisionalType("emptylegs") != "empty_leg" || store.ProvisionalType("leads") != "client_lead" ||
			store.ProvisionalType("x") != "unknown" {
			t.Error("provisional types")
		}
	})
}

// TestRecorder: a recorded transaction tells new rows from updated ones and
// an RFQ's status before and after; a rolled-back one tells nothing.
func TestRecorder(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx, rec := store.WithRecorder(context.Background())
		update := func(t *testing.T, s *store.Store, fn func(tx *store.Tx) error) {
			t.Helper()
			if err := s.Update(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		update(t, s, func(tx *store.Tx) error { return tx.SaveTrip(ctx, sampleTrip("atrip-20")) })
		rfq := store.RFQ{ID: "arfq-20", TripID: "atrip-20", Status: store.RFQUnanswered}
		update(t, s, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, rfq); return err })
		rfq.Status = store.RFQQuoted
		rfq.Quotes = []store.Quote{{ID: "aquote-20", Currency: "USD", Total: 100}}
		update(t, s, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, rfq); return err })
		rfq.Quotes[0].Total = 90
		update(t, s, func(tx *store.Tx) error { _, err := tx.SaveRFQ(ctx, rfq); return err })
		update(t, s, func(tx *store.Tx) error {
			_, err := tx.SaveMessage(ctx, store.Message{ID: "asellermsg-20", RFQID: "arfq-20", TripID: "atrip-20", Direction: store.FromSeller, Text: "hi"})
			return err
		})
		_ = s.Update(ctx, func(tx *store.Tx) error {
			_ = tx.SaveTrip(ctx, sampleTrip("atrip-21"))
			return errors.New("rolled back")
		})
		var got []string
		for _, r := range rec.Records() {
			got = append(got, fmt.Sprintf("%s %s new=%v changed=%v %s<-%s", r.Kind, r.ID, r.Inserted, r.Changed, r.Status, r.PrevStatus))
		}
		want := []string{
			"trip atrip-20 new=false changed=true <-",
			"rfq arfq-20 new=true changed=true unanswered<-",
			"rfq arfq-20 new=false changed=true quoted<-unanswered",
			"quote aquote-20 new=true changed=true <-",
			"rfq arfq-20 new=false changed=false quoted<-quoted",
			"quote aquote-20 new=false changed=true <-",
			"message asellermsg-20 new=true changed=true <-",
		}
		if !slices.Equal(got, want) {
			t.Errorf("records:\n%v\nwant\n%v", got, want)
		}
		if m, err := s.Message(ctx, "asellermsg-20"); err != nil || m.Text != "hi" {
			t.Errorf("message = %+v, %v", m, err)
		}
		if _, err := s.Message(ctx, "asellermsg-99"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown message: %v", err)
		}
	})
}

// TestChangeFeed: a change committed by one process moves the trip's
// counters, and Follow in the other process hears of it.
func TestChangeFeed(t *testing.T) {
	twoProcesses(t, func(t *testing.T, a, b *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		update(t, a, func(tx *store.Tx) error { return tx.SaveTrip(ctx, sampleTrip("atrip-30")) })
		v0, err := b.TripVersions(ctx, []string{"atrip-30", "atrip-missing"})
		if err != nil || v0["atrip-30"].Change != 1 || v0["atrip-30"].Quotes != 0 || len(v0) != 1 {
			t.Fatalf("versions = %v, %v", v0, err)
		}
		heard := make(chan []string, 100)
		done := make(chan error, 1)
		go func() {
			done <- b.Follow(ctx, 10*time.Millisecond, func(ids []string) { heard <- ids }, func(err error) { t.Errorf("follow: %v", err) })
		}()
		// Follow is listening once a change made now is heard; keep making
		// changes until one is.
		deadline := time.After(10 * time.Second)
		var got []string
		for i := 0; got == nil; i++ {
			update(t, a, func(tx *store.Tx) error {
				_, err := tx.SaveRFQ(ctx, store.RFQ{ID: fmt.Sprintf("arfq-3%d", i), TripID: "atrip-30", Status: store.RFQUnanswered})
				return err
			})
			select {
			case ids := <-heard:
				got = ids
				if got == nil {
					got = []string{}
				}
			case <-time.After(50 * time.Millisecond):
			case <-deadline:
				t.Fatal("the other process never heard of the change")
			}
		}
		if len(got) > 0 && got[0] != "atrip-30" {
			t.Errorf("heard %v", got)
		}
		v1, _ := b.TripVersions(ctx, []string{"atrip-30"})
		if v1["atrip-30"].Change <= v0["atrip-30"].Change || v1["atrip-30"].Quotes <= v0["atrip-30"].Quotes {
			t.Errorf("versions %v then %v", v0, v1)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Follow = %v", err)
		}
	})
}

// TestPublishedEvents: published answers are applied once, however many
// appliers run at once; unpublished ones of a cancelled trip are dropped.
func TestPublishedEvents(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		update(t, s, func(tx *store.Tx) error {
			if err := saveTripRFQ(ctx, tx, "40"); err != nil {
				return err
			}
			for i, due := range []time.Duration{time.Minute, time.Hour} {
				if err := tx.ScheduleEvent(ctx, store.Event{ID: fmt.Sprintf("e%d", i), TripID: "atrip-40", RFQID: "arfq-40", Kind: "quote",
					DueAt: t0.Add(due), Ref: fmt.Sprintf("aquote-4%d", i), Payload: json.RawMessage(`{}`)}); err != nil {
					return err
				}
			}
			return nil
		})
		if has, _ := s.HasPublished(ctx, store.PublishedFilter{TripID: "atrip-40"}); has {
			t.Error("published before it was due")
		}
		if n, err := s.DeliverDue(ctx, t0.Add(time.Minute), "atrip-40", 10, func(ctx context.Context, tx *store.Tx, e store.Event) error {
			return tx.SetEventRef(ctx, e.ID, "asellermsg-40")
		}); err != nil || n != 1 {
			t.Fatalf("published %d, %v", n, err)
		}
		for _, f := range []store.PublishedFilter{{TripID: "atrip-40"}, {RFQID: "arfq-40"}, {Ref: "asellermsg-40"}} {
			if has, err := s.HasPublished(ctx, f); !has || err != nil {
				t.Errorf("HasPublished(%+v) = %v, %v", f, has, err)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		applied := 0
		for range 6 {
			wg.Go(func() {
				n, err := s.ApplyPublished(ctx, store.PublishedFilter{RFQID: "arfq-40"}, t0, func(ctx context.Context, tx *store.Tx, e store.Event) error {
					if e.Ref != "asellermsg-40" {
						t.Errorf("ref %q", e.Ref)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				applied += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if applied != 1 {
			t.Errorf("applied %d times", applied)
		}
		if has, _ := s.HasPublished(ctx, store.PublishedFilter{TripID: "atrip-40"}); has {
			t.Error("still to apply after applying")
		}
		update(t, s, func(tx *store.Tx) error { return tx.DropEvents(ctx, "atrip-40", t0) })
		if due, _ := s.HasDueEventsOf(ctx, t0.Add(2*time.Hour), "atrip-40"); due {
			t.Error("a dropped event is still due")
		}
	})
}

// TestReceiveBatch: deliveries committed together, a redelivery among them,
// each answered with its event.
func TestReceiveBatch(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		got, err := s.ReceiveWebhookEvents(ctx, []store.Incoming{pointer("asellermsg-60"), pointer("asellermsg-61"), pointer("asellermsg-60")})
		if err != nil || len(got) != 3 {
			t.Fatalf("batch = %+v, %v", got, err)
		}
		if !got[0].Fresh || !got[1].Fresh || got[2].Fresh || got[2].ID != got[0].ID || got[2].Deliveries != 2 || got[0].ID == got[1].ID {
			t.Errorf("batch = %+v", got)
		}
		evs, _ := s.WebhookEvents(ctx, store.EventFilter{})
		if len(evs) != 2 {
			t.Errorf("%d events stored", len(evs))
		}
	})
}

// TestReceiveBatchKeepsEveryByte: what a batch stores is each delivery's
// bytes exactly, whatever they hold of what array literals and JSON quote
// (quotes, backslashes, braces, commas, NULL, white space, control
// characters a pointer's escapes decode to, non-ASCII), and a body with
// white space between its tokens.
func TestReceiveBatchKeepsEveryByte(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		odd := []string{`NULL`, ``, `a"b`, `c\d`, `{e,f}`, ` g `, "h\"i\\j", `é中😀`, `\"`, "tab\there", "ctl\x01\x1f\x7f", "line\nbreak\r\n", `\u0041`}
		var ins []store.Incoming
		for i, v := range odd {
			in := pointer(fmt.Sprintf("asellermsg-7%02d", i))
			in.TripRef = v
			in.Href = "https://sandbox.avinode.com/api/tripmsgs/x?q=" + v
			in.SourceIP = v
			in.Raw, _ = json.MarshalIndent(map[string]any{"id": in.ID, "note": v, "nested": map[string]string{"k": v}}, "", "\t")
			ins = append(ins, in)
		}
		got, err := s.ReceiveWebhookEvents(ctx, ins)
		if err != nil || len(got) != len(ins) {
			t.Fatalf("batch = %+v, %v", got, err)
		}
		for i, in := range ins {
			ev, err := s.WebhookEvent(ctx, got[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			if ev.AvinodeEventID != in.ID || ev.TripRef != in.TripRef || ev.Href != in.Href || ev.SourceIP != in.SourceIP ||
				ev.Payload != string(in.Raw) || !got[i].Fresh || ev.Deliveries != 1 {
				t.Errorf("%q stored as %+v (%+v)", odd[i], ev, got[i])
			}
		}
	})
}

// TestReceiveBatchRefusesNUL: in a batch, a delivery with a NUL character
// in one of its texts, or written as \u0000 in its raw payload, is refused
// on its own, naming the field, on both stores alike (PostgreSQL's text
// would refuse the whole batch, its jsonb the escape); the others, a
// payload with an escaped backslash before "u0000" among them, are stored
// with every byte. A refusal in a transaction leaves it usable.
func TestReceiveBatchRefusesNUL(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.Store, _ *changeLog) {
		ctx := context.Background()
		withRaw := func(id, raw string) store.Incoming {
			in := pointer(id)
			in.Raw = []byte(raw)
			return in
		}
		nulTrip := pointer("asellermsg-801")
		nulTrip.TripRef = "QQ\x00263P"
		nulHref := pointer("asellermsg-802")
		nulHref.Href += "\x00"
		nulID := pointer("asellermsg-803\x00")
		nulIP := pointer("asellermsg-804")
		nulIP.SourceIP = "\x00"
		ins := []store.Incoming{
			pointer("asellermsg-800"),
			nulTrip,
			withRaw("asellermsg-805", `{"id":"asellermsg-805","note":"a\u0000b"}`),
			withRaw("asellermsg-806", `{"id":"asellermsg-806","note":"a\\u0000b","n":"\\"}`),
			nulHref,
			withRaw("asellermsg-807", "{\"id\":\"asellermsg-807\",\"note\":\"\x00\"}"),
			nulID,
			withRaw("asellermsg-808", `{"id":"asellermsg-808","deep":{"\u0000":["x"]}}`),
			nulIP,
			pointer("asellermsg-800"),
		}
		refused := map[int]string{1: "tripId", 2: "payload", 4: "href", 5: "payload", 6: "id", 7: "payload", 8: "source_ip"}
		got, err := s.ReceiveWebhookEvents(ctx, ins)
		if err != nil || len(got) != len(ins) {
			t.Fatalf("batch = %+v, %v", got, err)
		}
		for i, r := range got {
			if field, ok := refused[i]; ok {
				if r.Refused == nil || r.Refused.Field != field || r.Refused.ID != ins[i].ID || r.ID != "" || r.Fresh {
					t.Errorf("delivery %d = %+v (%v), want refused for its %s", i, r, r.Refused, field)
				} else if msg := r.Refused.Error(); !strings.Contains(msg, field) || !strings.Contains(msg, "NUL") || strings.Contains(msg, "\x00") {
					t.Errorf("delivery %d refused with %q", i, msg)
				}
				continue
			}
			if r.Refused != nil {
				t.Errorf("delivery %d refused: %v", i, r.Refused)
				continue
			}
			ev, err := s.WebhookEvent(ctx, r.ID)
			if err != nil || ev.AvinodeEventID != ins[i].ID || ev.Payload != string(ins[i].Raw) {
				t.Errorf("delivery %d stored as %+v, %v", i, ev, err)
			}
		}
		if !got[0].Fresh || got[9].Fresh || got[9].ID != got[0].ID || got[9].Deliveries != 2 || !got[3].Fresh {
			t.Errorf("the stored deliveries: %+v", got)
		}
		evs, err := s.WebhookEvents(ctx, store.EventFilter{Limit: 50})
		if err != nil || len(evs) != 2 {
			t.Errorf("%d events stored, want 2: %v", len(evs), err)
		}

		// A batch of refused deliveries only stores nothing and fails
		// nothing.
		got, err = s.ReceiveWebhookEvents(ctx, []store.Incoming{nulTrip, nulID})
		if err != nil || len(got) != 2 || got[0].Refused == nil || got[1].Refused == nil {
			t.Errorf("a batch of refused deliveries: %+v, %v", got, err)
		}

		// One at a time, the refusal is the error; in a transaction it
		// leaves the transaction good for what follows.
		if _, _, err := s.ReceiveWebhookEvent(ctx, nulHref); !errors.As(err, new(*store.RefusedError)) {
			t.Errorf("one delivery with a NUL: %v", err)
		}
		update(t, s, func(tx *store.Tx) error {
			if _, _, err := tx.EnqueueWebhookEvent(ctx, nulTrip); !errors.As(err, new(*store.RefusedError)) {
				t.Errorf("enqueued with a NUL: %v", err)
			}
			_, _, err := tx.EnqueueWebhookEvent(ctx, pointer("asellermsg-809"))
			return err
		})
		evs, err = s.WebhookEvents(ctx, store.EventFilter{Limit: 50})
		if err != nil || len(evs) != 3 || !slices.ContainsFunc(evs, func(e store.WebhookEvent) bool { return e.AvinodeEventID == "asellermsg-809" }) {
			t.Errorf("after the transaction: %+v, %v", evs, err)
		}
	})
}

// TestFollowReconnects: when the listening connection is cut, Follow says
// so, reconnects, tells that anything may have changed, and hears the next
// change.
func TestFollowReconnects(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.URL(t)
	s, err := store.OpenPostgres(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	update(t, s, func(tx *store.Tx) error { return tx.SaveTrip(ctx, sampleTrip("atrip-50")) })
	heard := make(chan []string, 100)
	lost := make(chan error, 10)
	go func() {
		_ = s.Follow(ctx, 10*time.Millisecond, func(ids []string) { heard <- ids }, func(err error) { lost <- err })
	}()
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// Cut the listener once it listens.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener never listened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-lost:
		if err == nil {
			t.Error("a nil error reported")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cut connection was not reported")
	}
	// After reconnecting: "anything may have changed", then changes again.
	for ids := range heard {
		if ids == nil {
			break
		}
	}
	for i := 0; ; i++ {
		update(t, s, func(tx *store.Tx) error {
			_, err := tx.SaveRFQ(ctx, store.RFQ{ID: fmt.Sprintf("arfq-5%d", i), TripID: "atrip-50", Status: store.RFQUnanswered})
			return err
		})
		select {
		case ids := <-heard:
			if len(ids) == 1 && ids[0] == "atrip-50" {
				return
			}
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("no change heard after reconnecting")
		}
	}
}

// TestDeadlockRetried: two transactions that lock two trips in opposite
// orders deadlock on PostgreSQL; the one PostgreSQL aborts is run again, and
// both commit.
func TestDeadlockRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.OpenPostgres(ctx, pgtest.URL(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []string{"61", "62"} {
		update(t, s, func(tx *store.Tx) error {
			return saveTripRFQ(ctx, tx, n)
		})
	}
	var wg sync.WaitGroup
	var runs sync.Map
	var barrier sync.WaitGroup
	barrier.Add(2)
	var once [2]sync.Once
	for i, order := range [][2]string{{"atrip-61", "atrip-62"}, {"atrip-62", "atrip-61"}} {
		wg.Go(func() {
			n := 0
			err := s.Update(ctx, func(tx *store.Tx) error {
				n++
				for j, trip := range order {
					if _, err := tx.SaveMessage(ctx, store.Message{ID: fmt.Sprintf("abuyermsg-6%d%d%d", i, j, n), RFQID: "arfq" + trip[5:],
						TripID: trip, Direction: store.FromBuyer, Text: "x"}); err != nil {
						return err
					}
					if j == 0 {
						// Both hold their first trip before either asks
						// for its second.
						once[i].Do(func() { barrier.Done(); barrier.Wait() })
					}
				}
				return nil
			})
			runs.Store(i, n)
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	a, _ := runs.Load(0)
	b, _ := runs.Load(1)
	// PostgreSQL aborts one of the two (the deadlock victim); on a loaded
	// machine the other can also time out its own deadlock check before
	// the victim has rolled back, and is then run again too. Either way
	// both must commit, having been run again rather than failed.
	if a.(int)+b.(int) < 3 {
		t.Errorf("runs %v and %v: want at least one transaction run again", a, b)
	}
}

// TestReceiveBatchesConcurrently: two stores (two receiver processes)
// receive overlapping batches at once, each batch in its own order and with
// events delivered twice in it: every event is stored once, exactly one
// delivery of each is answered as new, every delivery is counted, and the
// counts the deliveries are answered with are the event's 1..n.
func TestReceiveBatchesConcurrently(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		stores := []*store.Store{db.Open(t, store.Options{}), db.Open(t, store.Options{})}
		const events, batches = 40, 24
		var mu sync.Mutex
		fresh := map[string]int{}
		counts := map[string][]int{}
		ids := map[string]map[string]bool{}
		var wg sync.WaitGroup
		for b := range batches {
			wg.Go(func() {
				var ins []store.Incoming
				for i := range 12 {
					in := pointer(fmt.Sprintf("asellermsg-%d", (b*7+i*(b%5+1))%events))
					in.ReceivedAt = t0.Add(time.Duration(b) * time.Second)
					ins = append(ins, in)
					if i%5 == 0 {
						ins = append(ins, in)
					}
				}
				got, err := stores[b%2].ReceiveWebhookEvents(ctx, ins)
				if err != nil || len(got) != len(ins) {
					t.Errorf("batch %d: %d answers, %v", b, len(got), err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for i, r := range got {
					id := ins[i].ID
					if r.Fresh {
						fresh[id]++
					}
					counts[id] = append(counts[id], r.Deliveries)
					if ids[id] == nil {
						ids[id] = map[string]bool{}
					}
					ids[id][r.ID] = true
				}
			})
		}
		wg.Wait()
		evs, err := stores[0].WebhookEvents(ctx, store.EventFilter{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != len(counts) {
			t.Fatalf("%d events stored, %d delivered", len(evs), len(counts))
		}
		for _, e := range evs {
			id := e.AvinodeEventID
			c := slices.Sorted(slices.Values(counts[id]))
			want := make([]int, len(c))
			for i := range want {
				want[i] = i + 1
			}
			if fresh[id] != 1 || len(ids[id]) != 1 || !ids[id][e.ID] || e.Deliveries != len(c) || !slices.Equal(c, want) {
				t.Errorf("%s: stored with %d deliveries; %d answered new, ids %v, counts %v", id, e.Deliveries, fresh[id], ids[id], c)
			}
		}
	})
}
