package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Event is a simulated seller's action scheduled for a moment: the
// simulated marketplace writes them when a trip is created or a message
// sent, publishes each once when it is due (DeliverDue), and applies each
// published one once (ApplyPublished).
type Event struct {
	ID     string
	TripID string
	RFQID  string
	Kind   string
	DueAt  time.Time
	// Ref is the quote or message the event carries (set when scheduled,
	// or when published).
	Ref     string
	Payload json.RawMessage
}

// ScheduleEvent stores an event to deliver at e.DueAt.
func (t *Tx) ScheduleEvent(ctx context.Context, e Event) error {
	_, err := t.q.exec(ctx, `INSERT INTO mock_events (id, trip_id, rfq_id, kind, due_at, payload, ref) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.TripID, e.RFQID, e.Kind, ts(e.DueAt), string(e.Payload), e.Ref)
	if err != nil {
		return fmt.Errorf("store: scheduling event %s: %w", e.ID, err)
	}
	return nil
}

// SetEventRef records what a published event carries.
func (t *Tx) SetEventRef(ctx context.Context, id, ref string) error {
	if _, err := t.q.exec(ctx, `UPDATE mock_events SET ref = ? WHERE id = ?`, ref, id); err != nil {
		return fmt.Errorf("store: event %s: %w", id, err)
	}
	return nil
}

// DropEvents forgets a trip's events that were not published yet (the trip
// was cancelled).
func (t *Tx) DropEvents(ctx context.Context, tripID string, now time.Time) error {
	_, err := t.q.exec(ctx, `DELETE FROM mock_events WHERE trip_id = ? AND done_at IS NULL`, tripID)
	if err != nil {
		return fmt.Errorf("store: dropping the events of trip %s: %w", tripID, err)
	}
	return nil
}

// PublishedFilter selects published events not applied yet: of a trip, an
// RFQ, or the one carrying Ref (the first field set wins).
type PublishedFilter struct {
	TripID, RFQID, Ref string
}

func (f PublishedFilter) where() (string, any) {
	switch {
	case f.TripID != "":
		return `trip_id = ?`, f.TripID
	case f.RFQID != "":
		return `rfq_id = ?`, f.RFQID
	}
	return `ref = ?`, f.Ref
}

// HasPublished reports, from the read pool, whether any published event of
// f is still to apply, so a reader takes the write lock only when needed.
func (s *Store) HasPublished(ctx context.Context, f PublishedFilter) (bool, error) {
	cond, arg := f.where()
	var n int
	err := s.reader().row(ctx, `SELECT count(*) FROM (SELECT 1 FROM mock_events WHERE `+cond+
		` AND done_at IS NOT NULL AND applied_at IS NULL LIMIT 1) p`, arg).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: reading events: %w", err)
	}
	return n > 0, nil
}

// ApplyPublished applies, in one transaction, the published events of f
// that were not applied yet, oldest first, marking each applied with it: an
// event is applied once however many readers and workers try at once. It
// returns how many it applied.
func (s *Store) ApplyPublished(ctx context.Context, f PublishedFilter, now time.Time, apply func(ctx context.Context, tx *Tx, e Event) error) (int, error) {
	applied := 0
	err := s.Update(ctx, func(tx *Tx) error {
		cond, arg := f.where()
		var err error
		applied, err = tx.takeEvents(ctx, now, eventStep{"applied_at", "applying", "applying"}, apply,
			`SELECT `+mockEventColumns+` FROM mock_events WHERE `+cond+` AND done_at IS NOT NULL AND applied_at IS NULL ORDER BY due_at, id`, arg)
		return err
	})
	return applied, err
}

const mockEventColumns = `id, trip_id, rfq_id, kind, due_at, ref, payload`

// eventStep is what takeEvents does to each event: the column it sets once,
// and the words its errors use for setting it and for applying the event.
type eventStep struct{ column, marking, applying string }

// takeEvents reads the events query selects and, one by one, sets step's
// column to now where it is still unset, then applies the event; one that
// another transaction took first is skipped, so each is applied once. It
// returns how many it applied.
func (t *Tx) takeEvents(ctx context.Context, now time.Time, step eventStep, apply func(ctx context.Context, tx *Tx, e Event) error,
	query string, args ...any) (int, error) {
	evs, err := selectRows(ctx, t.q, "events", query, args, func(rows *sql.Rows, e *Event) error {
		var payload string
		if err := rows.Scan(&e.ID, &e.TripID, &e.RFQID, &e.Kind, stamp(&e.DueAt), &e.Ref, &payload); err != nil {
			return err
		}
		e.Payload = json.RawMessage(payload)
		return nil
	})
	if err != nil {
		return 0, err
	}
	applied := 0
	for _, e := range evs {
		res, err := t.q.exec(ctx, `UPDATE mock_events SET `+step.column+` = ? WHERE id = ? AND `+step.column+` IS NULL`, ts(now), e.ID)
		if err != nil {
			return applied, fmt.Errorf("store: %s event %s: %w", step.marking, e.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // another process took it
		}
		if err := apply(ctx, t, e); err != nil {
			return applied, fmt.Errorf("%s event %s: %w", step.applying, e.ID, err)
		}
		applied++
	}
	return applied, nil
}

// HasDueEvents reports, from the read pool, whether any event is due, so a
// poller takes the write lock only when there is work.
func (s *Store) HasDueEvents(ctx context.Context, now time.Time) (bool, error) {
	return s.HasDueEventsOf(ctx, now, "")
}

// HasDueEventsOf is HasDueEvents for one trip ("": any).
func (s *Store) HasDueEventsOf(ctx context.Context, now time.Time, tripID string) (bool, error) {
	var n int
	cond, args := ``, []any{ts(now)}
	if tripID != "" {
		cond, args = ` AND trip_id = ?`, append(args, tripID)
	}
	err := s.reader().row(ctx, `SELECT count(*) FROM (SELECT 1 FROM mock_events WHERE done_at IS NULL AND due_at <= ?`+cond+
		` LIMIT 1) due`, args...).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: reading events: %w", err)
	}
	return n > 0, nil
}

// DeliverDue claims up to limit events due at now (of one trip when tripID
// is set), oldest first, and passes each to apply in the same transaction
// that marks it done (published): an event is delivered exactly once even
// when several processes deliver at the same time. It returns how many were
// delivered.
func (s *Store) DeliverDue(ctx context.Context, now time.Time, tripID string, limit int, apply func(ctx context.Context, tx *Tx, e Event) error) (int, error) {
	applied := 0
	err := s.Update(ctx, func(tx *Tx) error {
		query := `SELECT ` + mockEventColumns + ` FROM mock_events WHERE done_at IS NULL AND due_at <= ?`
		args := []any{ts(now)}
		if tripID != "" {
			query += ` AND trip_id = ?`
			args = append(args, tripID)
		}
		var err error
		applied, err = tx.takeEvents(ctx, now, eventStep{"done_at", "claiming", "delivering"}, apply,
			query+` ORDER BY due_at, id LIMIT ?`, append(args, limit)...)
		return err
	})
	return applied, err
}

// SetEventNotice keeps the notification body of a published event, to be
// posted to a receiver by SendNotices' caller.
func (t *Tx) SetEventNotice(ctx context.Context, id string, body []byte) error {
	if _, err := t.q.exec(ctx, `UPDATE mock_events SET notice = ? WHERE id = ?`, string(body), id); err != nil {
		return fmt.Errorf("store: event %s: %w", id, err)
	}
	return nil
}

// Notice is a notification waiting to be posted.
type Notice struct {
	EventID string
	Body    []byte
}

// PendingNotices returns up to limit notifications not posted yet, oldest
// first.
func (s *Store) PendingNotices(ctx context.Context, limit int) ([]Notice, error) {
	return selectRows(ctx, s.reader(), "notices", `SELECT id, notice FROM mock_events WHERE notice IS NOT NULL AND noticed_at IS NULL
		ORDER BY due_at, id LIMIT ?`, []any{limit}, func(rows *sql.Rows, n *Notice) error {
		var body string
		if err := rows.Scan(&n.EventID, &body); err != nil {
			return err
		}
		n.Body = []byte(body)
		return nil
	})
}

// MarkNoticed records that an event's notification was posted.
func (s *Store) MarkNoticed(ctx context.Context, id string, at time.Time) error {
	return s.Update(ctx, func(tx *Tx) error {
		if _, err := tx.q.exec(ctx, `UPDATE mock_events SET noticed_at = ? WHERE id = ?`, ts(at), id); err != nil {
			return fmt.Errorf("store: event %s: %w", id, err)
		}
		return nil
	})
}
