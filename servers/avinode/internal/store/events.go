package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Event is a simulated seller's action scheduled for a moment: the
// simulated marketplace writes them when a trip is created or a message
// sent, and delivers each once when it is due.
type Event struct {
	ID      string
	TripID  string
	RFQID   string
	Kind    string
	DueAt   time.Time
	Payload json.RawMessage
}

// ScheduleEvent stores an event to deliver at e.DueAt.
func (t *Tx) ScheduleEvent(ctx context.Context, e Event) error {
	_, err := t.q.exec(ctx, `INSERT INTO mock_events (id, trip_id, rfq_id, kind, due_at, payload) VALUES (?, ?, ?, ?, ?, ?)`,
		e.ID, e.TripID, e.RFQID, e.Kind, ts(e.DueAt), string(e.Payload))
	if err != nil {
		return fmt.Errorf("store: scheduling event %s: %w", e.ID, err)
	}
	return nil
}

// DropEvents marks a trip's undelivered events done without delivering
// them (the trip was cancelled).
func (t *Tx) DropEvents(ctx context.Context, tripID string, now time.Time) error {
	_, err := t.q.exec(ctx, `UPDATE mock_events SET done_at = ? WHERE trip_id = ? AND done_at IS NULL`, ts(now), tripID)
	if err != nil {
		return fmt.Errorf("store: dropping the events of trip %s: %w", tripID, err)
	}
	return nil
}

// HasDueEvents reports, from the read pool, whether any event is due, so a
// poller takes the write lock only when there is work.
func (s *Store) HasDueEvents(ctx context.Context, now time.Time) (bool, error) {
	var n int
	err := s.reader().row(ctx, `SELECT count(*) FROM (SELECT 1 FROM mock_events WHERE done_at IS NULL AND due_at <= ? LIMIT 1) due`,
		ts(now)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: reading events: %w", err)
	}
	return n > 0, nil
}

// DeliverDue claims up to limit events due at now (of one trip when tripID
// is set), oldest first, and applies each in the same transaction that marks
// it done: an event is applied exactly once even when several processes
// deliver at the same time. It returns how many were applied.
func (s *Store) DeliverDue(ctx context.Context, now time.Time, tripID string, limit int, apply func(ctx context.Context, tx *Tx, e Event) error) (int, error) {
	applied := 0
	err := s.Update(ctx, func(tx *Tx) error {
		applied = 0
		query := `SELECT id, trip_id, rfq_id, kind, due_at, payload FROM mock_events WHERE done_at IS NULL AND due_at <= ?`
		args := []any{ts(now)}
		if tripID != "" {
			query += ` AND trip_id = ?`
			args = append(args, tripID)
		}
		rows, err := tx.q.query(ctx, query+` ORDER BY due_at, id LIMIT ?`, append(args, limit)...)
		if err != nil {
			return fmt.Errorf("store: reading events: %w", err)
		}
		var due []Event
		for rows.Next() {
			var e Event
			var dueAt, payload string
			if err := rows.Scan(&e.ID, &e.TripID, &e.RFQID, &e.Kind, &dueAt, &payload); err != nil {
				rows.Close()
				return fmt.Errorf("store: reading events: %w", err)
			}
			e.DueAt, _ = parseTS(dueAt)
			e.Payload = json.RawMessage(payload)
			due = append(due, e)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("store: reading events: %w", err)
		}
		for _, e := range due {
			res, err := tx.q.exec(ctx, `UPDATE mock_events SET done_at = ? WHERE id = ? AND done_at IS NULL`, ts(now), e.ID)
			if err != nil {
				return fmt.Errorf("store: claiming event %s: %w", e.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue // another process delivered it
			}
			if err := apply(ctx, tx, e); err != nil {
				return fmt.Errorf("delivering event %s: %w", e.ID, err)
			}
			applied++
		}
		return nil
	})
	return applied, err
}
