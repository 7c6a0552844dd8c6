package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TripVersion is a trip's change counters: Change advances with every change
// to the trip, its RFQs, quotes or messages; Quotes with every change to its
// RFQs and quotes.
type TripVersion struct {
	Change, Quotes int64
}

// maxVersionBatch bounds the ids of one TripVersions query.
const maxVersionBatch = 200

// TripVersions returns the change counters of the trips named (trips the
// store does not hold are left out).
func (s *Store) TripVersions(ctx context.Context, ids []string) (map[string]TripVersion, error) {
	out := make(map[string]TripVersion, len(ids))
	for len(ids) > 0 {
		batch := ids[:min(len(ids), maxVersionBatch)]
		ids = ids[len(batch):]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(batch)), ", ")
		rows, err := s.reader().query(ctx, `SELECT id, change_seq, quotes_seq FROM trips WHERE id IN (`+marks+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("store: reading trip versions: %w", err)
		}
		for rows.Next() {
			var id string
			var v TripVersion
			if err := rows.Scan(&id, &v.Change, &v.Quotes); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: reading trip versions: %w", err)
			}
			out[id] = v
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("store: reading trip versions: %w", err)
		}
	}
	return out, nil
}

// Follow tells changed whenever a transaction — of this process or another
// one sharing the database — may have changed trips, until ctx ends. On
// PostgreSQL it listens on ChangeChannel and passes the changed trip's id; on
// SQLite it asks the database every interval whether anything was committed
// since (PRAGMA data_version, which costs no I/O) and passes nil, meaning
// "any trip". After a lost connection is re-established it passes nil too,
// since notifications may have been missed. Failures are reported to onErr
// (nil: ignored) and retried; Follow returns ctx's error.
func (s *Store) Follow(ctx context.Context, interval time.Duration, changed func(tripIDs []string), onErr func(error)) error {
	if onErr == nil {
		onErr = func(error) {}
	}
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	backoff := interval
	for {
		var err error
		if s.d == postgresDialect {
			err = s.listen(ctx, changed)
		} else {
			err = s.pollVersion(ctx, interval, changed)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		onErr(err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 30*time.Second)
		// Whatever happened meanwhile is unknown.
		changed(nil)
	}
}

// pollVersion watches PRAGMA data_version on one pinned read connection:
// its value changes when any other connection commits.
func (s *Store) pollVersion(ctx context.Context, interval time.Duration, changed func([]string)) error {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: watching for changes: %w", err)
	}
	defer conn.Close()
	var last int64
	if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&last); err != nil {
		return fmt.Errorf("store: watching for changes: %w", err)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		var v int64
		if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
			return fmt.Errorf("store: watching for changes: %w", err)
		}
		if v != last {
			last = v
			changed(nil)
		}
	}
}

// listen holds one connection out of the pool, LISTENing on ChangeChannel.
func (s *Store) listen(ctx context.Context, changed func([]string)) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: listening for changes: %w", err)
	}
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+ChangeChannel); err != nil {
		return fmt.Errorf("store: listening for changes: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("store: listening for changes: %w", err)
		}
		changed([]string{n.Payload})
	}
}
