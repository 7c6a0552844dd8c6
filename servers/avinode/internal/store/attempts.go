package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// States of a trip attempt.
const (
	// AttemptPending: recorded, the request is on its way (or the process
	// stopped before it learned the answer).
	AttemptPending = "pending"
	// AttemptCreated: the marketplace answered with the trip's id.
	AttemptCreated = "created"
	// AttemptUnknown: the request failed after it was sent; the trip may
	// or may not exist.
	AttemptUnknown = "outcome_unknown"
	// AttemptFailed: the marketplace refused the request; no trip exists.
	AttemptFailed = "failed"
)

// TripAttempt is one create_trip, kept by its external reference.
type TripAttempt struct {
	Reference string    `json:"external_reference"`
	State     string    `json:"state"`
	TripID    string    `json:"trip_id,omitempty"`
	Segments  []Segment `json:"segments"`
	Detail    string    `json:"detail,omitempty"`
	CreatedAt time.Time `json:"attempted_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ErrReferenceTaken is returned by BeginTripAttempt when the reference
// already names an attempt that did not fail; the attempt is returned too.
var ErrReferenceTaken = errors.New("the external reference is already used")

// BeginTripAttempt records a create_trip about to be sent, before anything
// reaches the marketplace. A reference whose earlier attempt failed is
// reused; one that created a trip, or whose outcome is pending or unknown,
// is not: it returns that attempt with ErrReferenceTaken.
func (s *Store) BeginTripAttempt(ctx context.Context, ref string, segs []Segment) (*TripAttempt, error) {
	raw, err := json.Marshal(segs)
	if err != nil {
		return nil, fmt.Errorf("store: encoding segments: %w", err)
	}
	var taken *TripAttempt
	err = s.Update(ctx, func(tx *Tx) error {
		taken = nil
		prev, err := tx.q.tripAttempt(ctx, ref)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case prev.State != AttemptFailed:
			taken = prev
			return nil
		}
		// A trip that came to the store some other way (a webhook, an
		// earlier version of this server) also holds the reference.
		var id string
		err = tx.q.row(ctx, `SELECT id FROM trips WHERE external_reference = ? ORDER BY created_at LIMIT 1`, ref).Scan(&id)
		if err == nil {
			taken = &TripAttempt{Reference: ref, State: AttemptCreated, TripID: id}
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: looking up reference %s: %w", ref, err)
		}
		now := ts(Now())
		_, err = tx.q.exec(ctx, `INSERT INTO trip_attempts (reference, state, trip_id, segments, detail, created_at, updated_at)
			VALUES (?, ?, '', ?, '', ?, ?)
			ON CONFLICT (reference) DO UPDATE SET state = excluded.state, trip_id = '', segments = excluded.segments,
				detail = '', created_at = excluded.created_at, updated_at = excluded.updated_at`,
			ref, AttemptPending, string(raw), now, now)
		if err != nil {
			return fmt.Errorf("store: recording trip attempt %s: %w", ref, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if taken != nil {
		return taken, ErrReferenceTaken
	}
	return nil, nil
}

// FinishTripAttempt records how an attempt ended: created (with the trip's
// id), failed, or with its outcome unknown (detail says why).
func (s *Store) FinishTripAttempt(ctx context.Context, ref, state, tripID, detail string) error {
	return s.Update(ctx, func(tx *Tx) error {
		_, err := tx.q.exec(ctx, `UPDATE trip_attempts SET state = ?, trip_id = ?, detail = ?, updated_at = ? WHERE reference = ?`,
			state, tripID, detail, ts(Now()), ref)
		if err != nil {
			return fmt.Errorf("store: updating trip attempt %s: %w", ref, err)
		}
		return nil
	})
}

// TripFilter selects trips and attempts for FindTrips.
type TripFilter struct {
	// Reference, when set, is the exact external reference.
	Reference string
	// Since, when set, keeps what was created at or after it.
	Since time.Time
	Limit int
}

// FindTrips returns the stored trips that match f, newest first, and the
// attempts that match f but have no stored trip (pending, unknown or failed
// ones): what a caller checks before creating a trip again.
func (s *Store) FindTrips(ctx context.Context, f TripFilter) ([]Trip, []TripAttempt, error) {
	q := s.reader()
	where, args := f.where("WHERE 1 = 1", "external_reference")
	trips, err := q.trips(ctx, `SELECT `+tripColumns+` FROM trips `+where+` ORDER BY created_at DESC, id DESC LIMIT ?`,
		append(args, f.Limit)...)
	if err != nil {
		return nil, nil, err
	}
	where, args = f.where("WHERE NOT EXISTS (SELECT 1 FROM trips WHERE trips.external_reference = trip_attempts.reference)", "reference")
	attempts, err := q.tripAttempts(ctx, `SELECT reference, state, trip_id, segments, detail, created_at, updated_at
		FROM trip_attempts `+where+` ORDER BY created_at DESC, reference DESC LIMIT ?`, append(args, f.Limit)...)
	if err != nil {
		return nil, nil, err
	}
	return trips, attempts, nil
}

// where adds f's conditions to the WHERE clause base, the reference being
// in the column refColumn.
func (f TripFilter) where(base, refColumn string) (string, []any) {
	where, args := base, []any{}
	if f.Reference != "" {
		where += " AND " + refColumn + " = ?"
		args = append(args, f.Reference)
	}
	if !f.Since.IsZero() {
		where += " AND created_at >= ?"
		args = append(args, ts(f.Since))
	}
	return where, args
}

func (q querier) tripAttempt(ctx context.Context, ref string) (*TripAttempt, error) {
	return only(q.tripAttempts(ctx, `SELECT reference, state, trip_id, segments, detail, created_at, updated_at
		FROM trip_attempts WHERE reference = ?`, ref))
}

func (q querier) tripAttempts(ctx context.Context, query string, args ...any) ([]TripAttempt, error) {
	return selectRows(ctx, q, "trip attempts", query, args, func(rows *sql.Rows, a *TripAttempt) error {
		var segs string
		if err := rows.Scan(&a.Reference, &a.State, &a.TripID, &segs, &a.Detail, stamp(&a.CreatedAt), stamp(&a.UpdatedAt)); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(segs), &a.Segments); err != nil {
			return fmt.Errorf("trip attempt %s: %w", a.Reference, err)
		}
		return nil
	})
}
