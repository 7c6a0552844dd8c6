package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SaveMessage stores a chat message once; a message already stored (the
// same id) is left as it is. It reports whether the message was new; a new
// one is announced to the trip's subscribers after commit. The RFQ must be
// stored first.
func (t *Tx) SaveMessage(ctx context.Context, m Message) (bool, error) {
	if m.SentAt.IsZero() {
		m.SentAt = Now()
	}
	if err := t.lockTrip(ctx, m.TripID); err != nil {
		return false, err
	}
	res, err := t.q.exec(ctx, `INSERT INTO messages (id, rfq_id, trip_id, direction, sender, body, sent_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		m.ID, m.RFQID, m.TripID, m.Direction, m.Sender, m.Text, ts(m.SentAt))
	if err != nil {
		return false, fmt.Errorf("store: saving message %s: %w", m.ID, err)
	}
	n, _ := res.RowsAffected()
	t.record(Record{Kind: RecordMessage, ID: m.ID, TripID: m.TripID, RFQID: m.RFQID, Inserted: n > 0, Changed: n > 0})
	if n == 0 {
		return false, nil
	}
	t.changed(Change{TripID: m.TripID, Messages: true})
	return true, nil
}

// HasMessage reports whether the message is stored.
func (s *Store) HasMessage(ctx context.Context, id string) (bool, error) {
	var n int
	if err := s.reader().row(ctx, `SELECT count(*) FROM messages WHERE id = ?`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("store: reading messages: %w", err)
	}
	return n > 0, nil
}

// Message reads one message; ErrNotFound if unknown.
func (s *Store) Message(ctx context.Context, id string) (*Message, error) {
	var m Message
	err := s.reader().row(ctx, `SELECT id, rfq_id, trip_id, direction, sender, body, sent_at FROM messages WHERE id = ?`, id).
		Scan(&m.ID, &m.RFQID, &m.TripID, &m.Direction, &m.Sender, &m.Text, stamp(&m.SentAt))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading message %s: %w", id, err)
	}
	return &m, nil
}

// Messages returns an RFQ's thread, oldest first, at most limit messages
// (the most recent ones).
func (s *Store) Messages(ctx context.Context, rfqID string, limit int) ([]Message, error) {
	return selectRows(ctx, s.reader(), "messages", `SELECT id, rfq_id, trip_id, direction, sender, body, sent_at FROM (
			SELECT * FROM messages WHERE rfq_id = ? ORDER BY sent_at DESC, id DESC LIMIT ?
		) recent ORDER BY sent_at, id`, []any{rfqID, limit}, func(rows *sql.Rows, m *Message) error {
		return rows.Scan(&m.ID, &m.RFQID, &m.TripID, &m.Direction, &m.Sender, &m.Text, stamp(&m.SentAt))
	})
}

// MessageCounts returns the number of messages of each RFQ of a trip.
func (s *Store) MessageCounts(ctx context.Context, tripID string) (map[string]int, error) {
	rows, err := s.reader().query(ctx, `SELECT rfq_id, count(*) FROM messages WHERE trip_id = ? GROUP BY rfq_id`, tripID)
	if err != nil {
		return nil, fmt.Errorf("store: counting messages: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("store: counting messages: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}
