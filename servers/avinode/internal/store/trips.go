package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

const tripColumns = `id, display_id, external_reference, status, aircraft_category, notes, segments, links,
	cancel_reason, cancel_message, created_at, updated_at`

// SaveTrip inserts the trip or brings the stored one up to date. A trip
// keeps its created_at, and its notes when t has none (they are local).
func (t *Tx) SaveTrip(ctx context.Context, trip Trip) error {
	segs, err := json.Marshal(trip.Segments)
	if err != nil {
		return fmt.Errorf("store: encoding segments: %w", err)
	}
	links, err := json.Marshal(trip.Links)
	if err != nil {
		return fmt.Errorf("store: encoding links: %w", err)
	}
	now := Now()
	if trip.CreatedAt.IsZero() {
		trip.CreatedAt = now
	}
	if err := t.lockTrip(ctx, trip.ID); err != nil {
		return err
	}
	res, err := t.q.exec(ctx, `INSERT INTO trips (`+tripColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			display_id = CASE WHEN excluded.display_id = '' THEN trips.display_id ELSE excluded.display_id END,
			external_reference = CASE WHEN excluded.external_reference = '' THEN trips.external_reference ELSE excluded.external_reference END,
			status = excluded.status,
			aircraft_category = CASE WHEN excluded.aircraft_category = '' THEN trips.aircraft_category ELSE excluded.aircraft_category END,
			notes = CASE WHEN excluded.notes = '' THEN trips.notes ELSE excluded.notes END,
			segments = excluded.segments,
			links = excluded.links,
			cancel_reason = CASE WHEN excluded.cancel_reason = '' THEN trips.cancel_reason ELSE excluded.cancel_reason END,
			cancel_message = CASE WHEN excluded.cancel_message = '' THEN trips.cancel_message ELSE excluded.cancel_message END,
			updated_at = excluded.updated_at
		WHERE trips.status IS DISTINCT FROM excluded.status
			OR trips.segments IS DISTINCT FROM excluded.segments
			OR trips.links IS DISTINCT FROM excluded.links
			OR (excluded.display_id <> '' AND trips.display_id IS DISTINCT FROM excluded.display_id)
			OR (excluded.notes <> '' AND trips.notes IS DISTINCT FROM excluded.notes)
			OR (excluded.cancel_reason <> '' AND trips.cancel_reason IS DISTINCT FROM excluded.cancel_reason)`,
		trip.ID, trip.DisplayID, trip.ExternalReference, trip.Status, trip.AircraftCategory, trip.Notes,
		string(segs), string(links), trip.CancelReason, trip.CancelMessage, ts(trip.CreatedAt), ts(now))
	if err != nil {
		return fmt.Errorf("store: saving trip %s: %w", trip.ID, err)
	}
	n, _ := res.RowsAffected()
	t.record(Record{Kind: RecordTrip, ID: trip.ID, TripID: trip.ID, Changed: n > 0})
	if n > 0 {
		t.changed(Change{TripID: trip.ID, Trip: true})
	}
	return nil
}

// CancelTrip marks the trip cancelled, with the reason and the message sent
// to the sellers, and cancels its open RFQs and active quotes. It reports
// whether the trip was open.
func (t *Tx) CancelTrip(ctx context.Context, tripID, reason, message string) (bool, error) {
	if err := t.lockTrip(ctx, tripID); err != nil {
		return false, err
	}
	now := ts(Now())
	res, err := t.q.exec(ctx, `UPDATE trips SET status = ?, cancel_reason = ?, cancel_message = ?, updated_at = ?
		WHERE id = ? AND status <> ?`, TripCancelled, reason, message, now, tripID, TripCancelled)
	if err != nil {
		return false, fmt.Errorf("store: cancelling trip %s: %w", tripID, err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return false, nil
	}
	if _, err := t.q.exec(ctx, `UPDATE rfqs SET status = ?, updated_at = ? WHERE trip_id = ? AND status IN (?, ?)`,
		RFQCancelled, now, tripID, RFQUnanswered, RFQQuoted); err != nil {
		return false, fmt.Errorf("store: cancelling the RFQs of trip %s: %w", tripID, err)
	}
	if _, err := t.q.exec(ctx, `UPDATE quotes SET status = ?, updated_at = ? WHERE trip_id = ? AND status = ?`,
		QuoteCancelled, now, tripID, QuoteActive); err != nil {
		return false, fmt.Errorf("store: cancelling the quotes of trip %s: %w", tripID, err)
	}
	t.record(Record{Kind: RecordTrip, ID: tripID, TripID: tripID, Changed: true, Status: TripCancelled})
	t.changed(Change{TripID: tripID, Trip: true, Quotes: true})
	return true, nil
}

// Trip reads a trip; ErrNotFound if the store has none of that id.
func (s *Store) Trip(ctx context.Context, id string) (*Trip, error) {
	return s.reader().trip(ctx, id)
}

// Trip reads a trip inside the transaction.
func (t *Tx) Trip(ctx context.Context, id string) (*Trip, error) { return t.q.trip(ctx, id) }

func (q querier) trip(ctx context.Context, id string) (*Trip, error) {
	return only(q.trips(ctx, `SELECT `+tripColumns+` FROM trips WHERE id = ?`, id))
}

// RecentTrips returns up to limit trips, newest first.
func (s *Store) RecentTrips(ctx context.Context, limit int) ([]Trip, error) {
	return s.reader().trips(ctx, `SELECT `+tripColumns+` FROM trips ORDER BY created_at DESC, id DESC LIMIT ?`, limit)
}

func (q querier) trips(ctx context.Context, query string, args ...any) ([]Trip, error) {
	return selectRows(ctx, q, "trips", query, args, func(rows *sql.Rows, tr *Trip) error {
		var segs, links string
		if err := rows.Scan(&tr.ID, &tr.DisplayID, &tr.ExternalReference, &tr.Status, &tr.AircraftCategory, &tr.Notes,
			&segs, &links, &tr.CancelReason, &tr.CancelMessage, stamp(&tr.CreatedAt), stamp(&tr.UpdatedAt)); err != nil {
			return err
		}
		if err := errors.Join(json.Unmarshal([]byte(segs), &tr.Segments), json.Unmarshal([]byte(links), &tr.Links)); err != nil {
			return fmt.Errorf("trip %s: %w", tr.ID, err)
		}
		return nil
	})
}

// NextSeq returns the next value of the named counter, starting at first.
func (t *Tx) NextSeq(ctx context.Context, name string, first int64) (int64, error) {
	var v int64
	err := t.q.row(ctx, `INSERT INTO sequences (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1
		RETURNING value`, name, first).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: sequence %s: %w", name, err)
	}
	return v, nil
}
