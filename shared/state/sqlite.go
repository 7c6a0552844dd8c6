package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver (pure Go)
)

// Defaults for the zero values of Options.
const (
	DefaultBusyTimeout = 5 * time.Second
	DefaultReaders     = 4
)

// Options configure OpenSQLite.
type Options struct {
	// Migrations holds the numbered .sql files (nil: none).
	Migrations fs.FS
	// BusyTimeout is how long a statement waits for another connection's or
	// process's lock before failing with SQLITE_BUSY (DefaultBusyTimeout).
	BusyTimeout time.Duration
	// Readers caps the read-only connections (DefaultReaders).
	Readers int
}

// SQLite is a server's SQLite database, opened for one writer and several
// readers: WAL mode (readers never wait for the writer), foreign keys
// enforced, a busy timeout. The embedded *sql.DB is the writer: a single
// connection whose transactions begin IMMEDIATE, so a transaction that reads
// and then writes cannot fail half-way on a lock upgrade and writers queue
// in order. Readers returns the pool of query-only connections.
type SQLite struct {
	*sql.DB
	readers *sql.DB
	path    string
	version int
}

// OpenSQLite opens the database at path, creating it (mode 0600) and its
// directory (0700) if missing, and brings its schema up to date.
func OpenSQLite(ctx context.Context, path string, opts Options) (*SQLite, error) {
	known, err := LoadMigrations(opts.Migrations)
	if err != nil {
		return nil, err
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.Readers <= 0 {
		opts.Readers = DefaultReaders
	}
	path, err = filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("state database path: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	// Created here, so that it is private from the start (SQLite would use
	// the umask); its -wal and -shm files take the database's mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the state database: %w", err)
	}
	_ = f.Close()

	busy := strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+busy+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	// In WAL mode NORMAL cannot corrupt the database; a power loss may
	// only undo the last transactions.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}).String())
	if err != nil {
		return nil, fmt.Errorf("opening the state database: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)

	q = url.Values{}
	q.Add("_pragma", "busy_timeout("+busy+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}).String())
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("opening the state database: %w", err)
	}
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	r.SetConnMaxIdleTime(5 * time.Minute)

	db := &SQLite{DB: w, readers: r, path: path}
	if db.version, err = migrateSQLite(ctx, w, known); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("state database %s: %w", filepath.Base(path), err)
	}
	return db, nil
}

// Readers is the pool of read-only connections; they see every committed
// write and never wait for the writer.
func (s *SQLite) Readers() *sql.DB { return s.readers }

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Version is the schema version after opening.
func (s *SQLite) Version() int { return s.version }

// Close closes both pools.
func (s *SQLite) Close() error {
	return errors.Join(s.readers.Close(), s.DB.Close())
}

const sqliteMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT`

// firstUse opens the writer's connection and reads the schema. While
// another process is turning a new database to WAL, setting journal_mode on
// open can fail at once with SQLITE_BUSY, which busy_timeout does not wait
// out: such a failure is tried again for up to openBusyWait.
func firstUse(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(openBusyWait)
	for {
		_, err := db.ExecContext(ctx, "SELECT count(*) FROM sqlite_schema")
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// openBusyWait bounds firstUse's retries.
const openBusyWait = 5 * time.Second

// busy reports an SQLITE_BUSY or SQLITE_LOCKED error (primary codes 5, 6).
func busy(err error) bool {
	var c interface{ Code() int }
	if errors.As(err, &c) {
		code := c.Code() & 0xff
		return code == 5 || code == 6
	}
	return false
}

// migrateSQLite applies the pending migrations, each in its own IMMEDIATE
// transaction (which holds the database's write lock from its start: no
// other process can apply the same migration meanwhile), re-reading what is
// applied inside it. It returns the schema version.
func migrateSQLite(ctx context.Context, db *sql.DB, known []Migration) (int, error) {
	if err := firstUse(ctx, db); err != nil {
		return 0, fmt.Errorf("not a usable SQLite database: %w", err)
	}
	for {
		version, err := sqliteStep(ctx, db, known)
		if err != nil || version >= len(known) {
			return version, err
		}
	}
}

// sqliteStep applies the next pending migration, if any, in one
// transaction, and returns the version the database is then at.
func sqliteStep(ctx context.Context, db *sql.DB, known []Migration) (version int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("starting a migration: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, sqliteMigrationsTable); err != nil {
		return 0, fmt.Errorf("creating schema_migrations: %w", err)
	}
	return step(ctx, sqliteMigration{tx}, known)
}

// sqliteMigration is a migration's transaction on SQLite.
type sqliteMigration struct{ tx *sql.Tx }

func (s sqliteMigration) applied(ctx context.Context) ([]applied, error) {
	rows, err := s.tx.QueryContext(ctx, "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, err
	}
	var done []applied
	for rows.Next() {
		var a applied
		if err := rows.Scan(&a.version, &a.name, &a.checksum); err != nil {
			_ = rows.Close()
			return nil, err
		}
		done = append(done, a)
	}
	return done, errors.Join(rows.Err(), rows.Close())
}

func (s sqliteMigration) run(ctx context.Context, sql string) error {
	_, err := s.tx.ExecContext(ctx, sql)
	return err
}

func (s sqliteMigration) record(ctx context.Context, m Migration) error {
	_, err := s.tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, checksum) VALUES (?, ?, ?)",
		m.Version, m.Name, m.Checksum)
	return err
}

func (s sqliteMigration) commit(context.Context) error { return s.tx.Commit() }
