// Package store is the avinode server's local marketplace store: the trips,
// RFQs, quotes, chat messages and empty-leg watches that the tools and
// resources read, and the webhook events that bring quotes and messages in.
// Everything that learns of marketplace data writes it here — the Avinode API
// client after each call, the simulated marketplace when its operators answer,
// and the webhook processor — so a quote stored by any of them (in any process
// sharing the database) is what every reader sees.
//
// The store is an SQLite database in the server's data directory, or a
// PostgreSQL database; the SQL is the subset both accept. Writes happen in
// transactions (Update), so nothing is half-written. Every transaction that
// changes a trip bumps the trip's change counters (TripVersions) in the same
// transaction, and on PostgreSQL also sends a notification on the channel
// ChangeChannel, so other processes learn of the change (Follow); after it
// commits, Options.OnChange hears which trips changed and how in this
// process.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/mcp-fleet/mcp-fleet/shared/state"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations returns the store's schema migrations.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded directory exists at build time
	}
	return sub
}

// ErrNotFound is returned by reads of an id the store does not hold.
var ErrNotFound = errors.New("not found")

// Options configure a store.
type Options struct {
	// OnChange is called after each committed transaction, once per trip it
	// changed. It must not block for long.
	OnChange func(Change)
}

type dialect int

const (
	sqliteDialect dialect = iota
	postgresDialect
)

// Store is the marketplace store. Safe for concurrent use.
type Store struct {
	w, r     *sql.DB
	d        dialect
	pool     *pgxpool.Pool // PostgreSQL only: the LISTEN connection and receivePostgres's batched INSERT
	onChange func(Change)
	close    func() error
}

// OpenSQLite opens (creating if needed) the SQLite store at path.
func OpenSQLite(ctx context.Context, path string, opts Options) (*Store, error) {
	db, err := state.OpenSQLite(ctx, path, state.Options{Migrations: Migrations()})
	if err != nil {
		return nil, err
	}
	return &Store{w: db.DB, r: db.Readers(), d: sqliteDialect, onChange: opts.OnChange, close: db.Close}, nil
}

// defaultPoolSize is the PostgreSQL pool size when the URL sets none
// (pool_max_conns): a receiver answers many deliveries at once, and pgx's own
// default is the number of CPUs.
const defaultPoolSize = 16

// OpenPostgres opens the store in the PostgreSQL database at url, bringing
// its schema up to date.
func OpenPostgres(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: the PostgreSQL URL: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultPoolSize
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connecting to PostgreSQL: %w", err)
	}
	if _, err := state.MigratePostgres(ctx, pool, Migrations()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	return &Store{w: db, r: db, d: postgresDialect, pool: pool, onChange: opts.OnChange, close: func() error {
		err := db.Close()
		pool.Close()
		return err
	}}, nil
}

// SingleWriter reports whether the database runs one write transaction at
// a time (SQLite), so that a second writer in this process only queues.
func (s *Store) SingleWriter() bool { return s.d == sqliteDialect }

// Close releases the database.
func (s *Store) Close() error { return s.close() }

// Ping checks that the database answers, for health checks.
func (s *Store) Ping(ctx context.Context) error { return s.r.PingContext(ctx) }

// Tx is a write transaction; its changes are announced after it commits.
type Tx struct {
	q       querier
	changes []Change
	// locked are the trips whose row this transaction has locked.
	locked map[string]bool
	// rec, when the transaction's context carries a Recorder, hears what
	// was written once the transaction commits.
	rec  *Recorder
	recs []Record
}

// ChangeChannel is the PostgreSQL notification channel on which every
// transaction that changes a trip announces the trip's id.
const ChangeChannel = "avinode_changes"

// maxAttempts bounds how often a transaction or statement that PostgreSQL
// aborted to break a deadlock or a serialization conflict is run (retrying:
// Update, and the batched INSERT of receivePostgres).
const maxAttempts = 3

// Update runs fn in a transaction and commits it when fn returns nil;
// otherwise nothing fn wrote remains. The changed trips' counters are bumped
// (and, on PostgreSQL, notified) in the transaction; the changes are
// announced to Options.OnChange after commit. A transaction PostgreSQL
// aborts to resolve a deadlock or a serialization conflict is run again
// (fn must not act outside the transaction), at most maxAttempts times.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return retrying(ctx, func() error { return s.update(ctx, fn) })
}

// retrying runs fn again while it fails with an error PostgreSQL returns on
// aborting for a deadlock or a serialization conflict, at most maxAttempts
// times in all, and returns fn's last error.
func retrying(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
}

// retryable reports a PostgreSQL deadlock or serialization failure.
func retryable(err error) bool {
	e, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (e.Code == "40P01" || e.Code == "40001")
}

func (s *Store) update(ctx context.Context, fn func(tx *Tx) error) error {
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	tx := &Tx{q: querier{db: sqlTx, d: s.d}, rec: recorderFrom(ctx)}
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	merged := merge(tx.changes)
	if err := tx.bump(ctx, merged); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	if tx.rec != nil {
		tx.rec.add(tx.recs)
	}
	if s.onChange != nil {
		for _, c := range merged {
			s.onChange(c)
		}
	}
	return nil
}

// lockTrip takes the trip's row lock (PostgreSQL) before a write to what
// belongs to the trip, so that every transaction locks a trip before its
// RFQs, quotes and messages: two of them can then never wait for each other
// in opposite orders. SQLite runs one writer at a time and needs none.
func (t *Tx) lockTrip(ctx context.Context, tripID string) error {
	if t.q.d != postgresDialect || t.locked[tripID] {
		return nil
	}
	var id string
	err := t.q.row(ctx, `SELECT id FROM trips WHERE id = ? FOR NO KEY UPDATE`, tripID).Scan(&id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: locking trip %s: %w", tripID, err)
	}
	if t.locked == nil {
		t.locked = map[string]bool{}
	}
	t.locked[tripID] = true
	return nil
}

// bump advances the change counters of the changed trips and, on
// PostgreSQL, notifies ChangeChannel (delivered when the transaction
// commits, never if it rolls back).
func (t *Tx) bump(ctx context.Context, changes []Change) error {
	for _, c := range changes {
		quotes := 0
		if c.Quotes {
			quotes = 1
		}
		if _, err := t.q.exec(ctx, `UPDATE trips SET change_seq = change_seq + 1, quotes_seq = quotes_seq + ? WHERE id = ?`,
			quotes, c.TripID); err != nil {
			return fmt.Errorf("store: marking trip %s changed: %w", c.TripID, err)
		}
		if t.q.d == postgresDialect {
			if _, err := t.q.exec(ctx, `SELECT pg_notify('`+ChangeChannel+`', ?)`, c.TripID); err != nil {
				return fmt.Errorf("store: announcing trip %s: %w", c.TripID, err)
			}
		}
	}
	return nil
}

// merge folds a transaction's changes into one per trip, in first-seen
// order.
func merge(changes []Change) []Change {
	if len(changes) == 0 {
		return nil
	}
	idx := map[string]int{}
	var out []Change
	for _, c := range changes {
		i, ok := idx[c.TripID]
		if !ok {
			idx[c.TripID] = len(out)
			out = append(out, Change{TripID: c.TripID})
			i = len(out) - 1
		}
		m := &out[i]
		m.Trip = m.Trip || c.Trip
		m.Quotes = m.Quotes || c.Quotes
		m.Messages = m.Messages || c.Messages
	}
	return out
}

func (t *Tx) changed(c Change) { t.changes = append(t.changes, c) }

// reader returns a querier on the read pool.
func (s *Store) reader() querier { return querier{db: s.r, d: s.d} }

// db is what both *sql.DB and *sql.Tx provide.
type db interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// querier runs the store's SQL (written with ? placeholders) in a dialect.
type querier struct {
	db db
	d  dialect
}

func (q querier) rebind(query string) string {
	if q.d != postgresDialect {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

func (q querier) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.db.ExecContext(ctx, q.rebind(query), args...)
}

func (q querier) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.db.QueryContext(ctx, q.rebind(query), args...)
}

func (q querier) row(ctx context.Context, query string, args ...any) *sql.Row {
	return q.db.QueryRowContext(ctx, q.rebind(query), args...)
}

// timeLayout is fixed-width UTC, so stored times sort as text.
const timeLayout = "2006-01-02T15:04:05.000Z"

// ts formats t in timeLayout. Every stored time goes through it (several
// per webhook delivery), so the fixed layout is written digit by digit
// rather than interpreted by time.Format, which it matches.
func ts(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(timeLayout)
	}
	hour, minute, sec := t.Clock()
	var b [len(timeLayout)]byte
	digits := func(at, v, n int) {
		for i := at + n - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	digits(0, year, 4)
	b[4] = '-'
	digits(5, int(month), 2)
	b[7] = '-'
	digits(8, day, 2)
	b[10] = 'T'
	digits(11, hour, 2)
	b[13] = ':'
	digits(14, minute, 2)
	b[16] = ':'
	digits(17, sec, 2)
	b[19] = '.'
	digits(20, t.Nanosecond()/int(time.Millisecond), 3)
	b[23] = 'Z'
	return string(b[:])
}

func tsPtr(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return ts(*t)
}

func parseTS(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		// Written by another tool or by hand: accept any RFC 3339 time.
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	return t.UTC(), err
}

// stamp scans a stored timestamp column into t, so a row's times are read
// by rows.Scan itself rather than through strings parsed afterwards.
func stamp(t *time.Time) sql.Scanner { return stampScanner{t} }

type stampScanner struct{ t *time.Time }

func (s stampScanner) Scan(src any) error {
	v, ok, err := stampText(src)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("store: a timestamp is NULL")
	}
	*s.t, err = parseTS(v)
	return err
}

// optStamp scans a nullable timestamp column: nil for NULL or empty.
func optStamp(t **time.Time) sql.Scanner { return optStampScanner{t} }

type optStampScanner struct{ t **time.Time }

func (s optStampScanner) Scan(src any) error {
	v, ok, err := stampText(src)
	if err != nil || !ok || v == "" {
		*s.t = nil
		return err
	}
	t, err := parseTS(v)
	if err != nil {
		return err
	}
	*s.t = &t
	return nil
}

// stampText is a timestamp column's text; ok is false for NULL.
func stampText(src any) (string, bool, error) {
	switch v := src.(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	case []byte:
		return string(v), true, nil
	case time.Time:
		return ts(v), true, nil
	}
	return "", false, fmt.Errorf("store: a timestamp column holds %T", src)
}

// only is the one row a read by key found, or ErrNotFound.
func only[T any](rows []T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

// selectRows runs query on q and reads every row with scan into a fresh T;
// what names the rows in errors ("RFQs").
func selectRows[T any](ctx context.Context, q querier, what, query string, args []any, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, fmt.Errorf("store: reading %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading %s: %w", what, err)
	}
	return out, nil
}

// Now is the time the store writes for "now": the wall clock in UTC, cut to
// the millisecond it keeps.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
