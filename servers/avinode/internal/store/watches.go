package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SaveWatch inserts or replaces an empty-leg watch.
func (t *Tx) SaveWatch(ctx context.Context, w Watch) error {
	if w.CreatedAt.IsZero() {
		w.CreatedAt = Now()
	}
	active := 0
	if w.Active {
		active = 1
	}
	_, err := t.q.exec(ctx, `INSERT INTO watches (id, name, departure_airport, arrival_airport, aircraft_category, days_out, active, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, departure_airport = excluded.departure_airport,
			arrival_airport = excluded.arrival_airport, aircraft_category = excluded.aircraft_category,
			days_out = excluded.days_out, active = excluded.active`,
		w.ID, w.Name, w.From, w.To, w.AircraftCategory, w.DaysOut, active, ts(w.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: saving watch %s: %w", w.ID, err)
	}
	return nil
}

// DeleteWatch removes a watch; it reports whether there was one.
func (t *Tx) DeleteWatch(ctx context.Context, id string) (bool, error) {
	res, err := t.q.exec(ctx, `DELETE FROM watches WHERE id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("store: deleting watch %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Watch reads one watch; ErrNotFound if unknown.
func (s *Store) Watch(ctx context.Context, id string) (*Watch, error) {
	return only(s.watches(ctx, `WHERE id = ?`, id))
}

// Watches returns every watch, oldest first.
func (s *Store) Watches(ctx context.Context) ([]Watch, error) { return s.watches(ctx, "") }

func (s *Store) watches(ctx context.Context, where string, args ...any) ([]Watch, error) {
	return selectRows(ctx, s.reader(), "watches", `SELECT id, name, departure_airport, arrival_airport, aircraft_category, days_out, active, created_at
		FROM watches `+where+` ORDER BY created_at, id`, args, func(rows *sql.Rows, w *Watch) error {
		var active int
		if err := rows.Scan(&w.ID, &w.Name, &w.From, &w.To, &w.AircraftCategory, &w.DaysOut, &active, stamp(&w.CreatedAt)); err != nil {
			return err
		}
		w.Active = active != 0
		return nil
	})
}
