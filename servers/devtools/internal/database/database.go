// Package database runs the devtools database tools' statements: read-only
// SQL against PostgreSQL or an SQLite file, plus table and column listings.
//
// The database is chosen by Config: DATABASE_URL names PostgreSQL
// (postgres://…) or an SQLite file (sqlite:///abs/path.db, sqlite:rel/path.db,
// file:path.db); without one, the embedded SQLite file (created empty in the
// server's data directory, or the file --db-path names) is used.
//
// Read-only is enforced by the database engine, never by looking at the SQL
// text:
//
//   - PostgreSQL: every call goes through shared/pgcall: one pooled
//     connection, one statement through the extended protocol (which refuses
//     more than one statement per Parse) inside a fresh READ ONLY transaction
//     with statement, lock and idle timeouts, on a session whose default is
//     read-only too; the transaction is always rolled back and the session
//     reset (DISCARD ALL) before the connection is reused, so no call can
//     change what the next one sees. A role that can run programs or write
//     files on the server is refused unless Config.AllowSuperuser is set.
//   - SQLite: the file is opened read-only (mode=ro) with query_only and
//     defensive mode on, no database may be attached, and an authorizer lets
//     SQLite compile only reads and informational PRAGMAs (it refuses the
//     rest while compiling, before anything runs). "One statement" is
//     SQLite's own verdict: the statement is run only if preparing it
//     consumed the whole text.
//
// Table and schema names are always bound as query parameters, never spliced
// into SQL. Results are capped in rows and in encoded bytes, and every value
// is converted to a JSON-friendly form (see Result). Errors are
// *mcperr.Error values written for the agent: the database's own message
// where it helps, never a password or a connection URL.
package database

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/pgcall"
)

// Defaults for the zero values of Config.
const (
	DefaultLimit            = 100
	DefaultMaxLimit         = 1000
	DefaultStatementTimeout = 30 * time.Second
	DefaultMaxResultBytes   = 5 << 20
	// DefaultMaxConns is pgcall's: enough for 8 concurrent callers.
	DefaultMaxConns = pgcall.DefaultMaxConns
)

// Config selects and bounds the database.
type Config struct {
	// DatabaseURL is a PostgreSQL connection URL (postgres://…), a secret
	// that never appears in an error or a result; or an SQLite file
	// (sqlite:///abs/path.db, sqlite:relative/path.db, file:path.db), which
	// must exist and is opened read-only. Empty selects the embedded SQLite
	// database at EmbeddedPath.
	DatabaseURL string
	// EmbeddedPath is the embedded database file, created (empty) with its
	// directory if missing. Required when DatabaseURL is empty.
	EmbeddedPath string
	// DefaultLimit is the row limit of a query that names none (100).
	DefaultLimit int
	// MaxLimit is the largest row limit a query may ask for (1000).
	MaxLimit int
	// StatementTimeout bounds each statement (30s); a call may ask for less.
	StatementTimeout time.Duration
	// MaxResultBytes caps the JSON-encoded rows of one result (5 MiB).
	MaxResultBytes int64
	// MaxConns caps the open connections (DefaultMaxConns).
	MaxConns int
	// AllowSuperuser lets PostgreSQL connections use a role that can run
	// programs or write files on the database server (a superuser, or a
	// member of pg_execute_server_program or pg_write_server_files). Such a
	// role can do that from inside a read-only transaction (COPY … TO
	// PROGRAM), so it is refused by default.
	AllowSuperuser bool
	// Logger, when set, gets one line after start-up saying whether
	// PostgreSQL could be reached, and why not (host, port and database
	// name; never the user, password or URL).
	Logger *zerolog.Logger
}

func (c Config) withDefaults() Config {
	if c.DefaultLimit <= 0 {
		c.DefaultLimit = DefaultLimit
	}
	if c.MaxLimit <= 0 {
		c.MaxLimit = DefaultMaxLimit
	}
	if c.DefaultLimit > c.MaxLimit {
		c.DefaultLimit = c.MaxLimit
	}
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = DefaultStatementTimeout
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = DefaultMaxResultBytes
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	return c
}

// Backend names.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Query is one database_query call.
type Query struct {
	// SQL is exactly one statement.
	SQL string
	// Params are the positional parameters: nil, bool, string, json.Number
	// or float64. PostgreSQL sends each one as text and lets the server
	// parse it as the type it infers for $n; SQLite binds integers as
	// INTEGER, other numbers as REAL, booleans as 1/0.
	Params []any
	// Limit is the row limit; 0 means Config.DefaultLimit.
	Limit int
	// Timeout lowers the statement timeout for this call; 0 means
	// Config.StatementTimeout.
	Timeout time.Duration
}

// Column describes one result column.
type Column struct {
	Name string `json:"name"`
	// Type is PostgreSQL's type name (pg_type.typname: int4, text,
	// timestamptz, _int4 for int4[]) or SQLite's declared type (empty for
	// an expression).
	Type string `json:"type"`
}

// Result is the outcome of a query. Each row is a JSON array of values in
// column order: NULL is null; booleans and integers are JSON numbers and
// booleans; PostgreSQL numeric is a string (exact); floats are numbers,
// or the strings "NaN", "Infinity", "-Infinity"; bytea and BLOBs are
// base64 strings; json/jsonb are JSON values; timestamptz is RFC 3339 in
// UTC, timestamp (without time zone) is RFC 3339 without an offset, date is
// YYYY-MM-DD; arrays of the types above are JSON arrays; everything else is
// the database's text form.
type Result struct {
	Backend string            `json:"backend"`
	Columns []Column          `json:"columns"`
	Rows    []json.RawMessage `json:"rows"`
	// RowCount is len(Rows).
	RowCount int `json:"row_count"`
	// Truncated reports that the statement produced more rows than were
	// returned; TruncatedBy says which cap cut it: "limit" or "max_bytes".
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncated_by,omitempty"`
	Limit       int    `json:"limit"`
	// Command is PostgreSQL's command tag ("SELECT 3", "SHOW", "SET").
	Command    string  `json:"command,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Table is one entry of a table listing.
type Table struct {
	Name string `json:"name"`
	// Type is "table", "view", "materialized view", "partitioned table" or
	// "foreign table" (PostgreSQL); "table", "view", "virtual" or "shadow"
	// (SQLite).
	Type    string `json:"type"`
	Comment string `json:"comment,omitempty"`
}

// Tables is a table listing.
type Tables struct {
	Backend string  `json:"backend"`
	Schema  string  `json:"schema"`
	Tables  []Table `json:"tables"`
	// Note tells a caller facing an empty SQLite database how to point the
	// tools at a database of their own.
	Note string `json:"note,omitempty"`
}

// ColumnInfo describes one column of a table.
type ColumnInfo struct {
	Position int    `json:"position"`
	Name     string `json:"name"`
	// Type is the declared type: format_type() in PostgreSQL
	// ("character varying(20)", "integer"), the declared type in SQLite.
	Type     string  `json:"type"`
	Nullable bool    `json:"nullable"`
	Default  *string `json:"default"`
	// PrimaryKey is the column's 1-based position in the primary key, 0 if
	// it is not part of it.
	PrimaryKey int `json:"primary_key"`
	// Identity is "ALWAYS" or "BY DEFAULT" for a PostgreSQL identity column.
	Identity string `json:"identity,omitempty"`
	// Generated reports a generated (computed) column.
	Generated bool   `json:"generated,omitempty"`
	Comment   string `json:"comment,omitempty"`
}

// TableSchema describes one table or view.
type TableSchema struct {
	Backend    string       `json:"backend"`
	Schema     string       `json:"schema"`
	Table      string       `json:"table"`
	Type       string       `json:"type"`
	Comment    string       `json:"comment,omitempty"`
	Columns    []ColumnInfo `json:"columns"`
	PrimaryKey []string     `json:"primary_key"`
}

// invalid is a bad argument, named by field.
func invalid(field, format string, args ...any) *mcperr.Error {
	return mcperr.Invalid(field, nil, "", format, args...)
}

// notFound is a schema or table that does not exist, named by field.
func notFound(field, format string, args ...any) *mcperr.Error {
	e := mcperr.New(mcperr.NotFound, format, args...)
	e.Field = field
	return e
}

// internalError is a failure of this package rather than of the database
// (a value it cannot decode): reported as an internal error, not as the
// database being unavailable.
type internalError struct{ error }

// backend is one database engine.
type backend interface {
	query(ctx context.Context, q Query, limit int, timeout time.Duration) (*Result, error)
	tables(ctx context.Context, schema string) ([]Table, error)
	schema(ctx context.Context, schema, table string) (*TableSchema, error)
	defaultSchema() string
	close()
}

// DB is an open database, safe for concurrent use.
type DB struct {
	cfg     Config
	name    string
	backend backend
	// source names the database in fenced results: no user or password.
	source string
	// empty: an SQLite file without a single table or view when opened.
	empty bool
	// named: the SQLite file came from DATABASE_URL (it was not created).
	named bool
	// probe is the start-up check of PostgreSQL, stopped by Close.
	stopProbe context.CancelFunc
	probing   sync.WaitGroup
}

// SQLitePath returns the file an SQLite DATABASE_URL names, made absolute,
// and whether the URL is one: sqlite:///abs/path, sqlite:/abs/path,
// sqlite:relative/path, sqlite3:… and file:… (any ?query is ignored: the
// file is always opened read-only).
func SQLitePath(databaseURL string) (string, bool, error) {
	scheme, rest, ok := strings.Cut(databaseURL, ":")
	if !ok {
		return "", false, nil
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3", "file":
	default:
		return "", false, nil
	}
	rest, _, _ = strings.Cut(rest, "?")
	if strings.HasPrefix(rest, "//") {
		// sqlite://host/path: only an empty host (or localhost) is a file here.
		host, path, _ := strings.Cut(rest[2:], "/")
		if host != "" && host != "localhost" {
			return "", true, fmt.Errorf("DATABASE_URL %s://%s/…: an SQLite URL names a local file: write %s:///absolute/path.db or %s:relative/path.db",
				scheme, host, scheme, scheme)
		}
		rest = "/" + path
	}
	path, err := url.PathUnescape(rest)
	if err != nil || path == "" || path == "/" {
		return "", true, fmt.Errorf("DATABASE_URL %s: names no file (write %s:///absolute/path.db or %s:relative/path.db)", scheme, scheme, scheme)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", true, fmt.Errorf("DATABASE_URL: the SQLite path: %w", err)
	}
	return abs, true, nil
}

// Open opens the configured database: PostgreSQL (lazily: no connection is
// made until the first call or the start-up probe, so a database that is
// down does not keep the server from starting), an SQLite file named by
// DATABASE_URL (which must exist), or the embedded SQLite file, created if
// missing.
func Open(cfg Config) (*DB, error) {
	cfg = cfg.withDefaults()
	if cfg.DatabaseURL != "" {
		path, isSQLite, err := SQLitePath(cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		if isSQLite {
			b, empty, err := openSQLite(cfg, path, false)
			if err != nil {
				return nil, err
			}
			return &DB{cfg: cfg, name: SQLite, backend: b, source: "SQLite file " + filepath.Base(path), empty: empty, named: true}, nil
		}
		return openPostgres(cfg)
	}
	if cfg.EmbeddedPath == "" {
		return nil, errors.New("neither a DATABASE_URL nor an embedded database path is configured")
	}
	b, empty, err := openSQLite(cfg, cfg.EmbeddedPath, true)
	if err != nil {
		return nil, err
	}
	return &DB{cfg: cfg, name: SQLite, backend: b, source: "SQLite file " + filepath.Base(cfg.EmbeddedPath), empty: empty}, nil
}

// Close stops the start-up probe and releases the connections.
func (db *DB) Close() {
	if db.stopProbe != nil {
		db.stopProbe()
		db.probing.Wait()
	}
	db.backend.close()
}

// Backend returns Postgres or SQLite.
func (db *DB) Backend() string { return db.name }

// Source names the database for the fence around its rows: the engine and
// the database or file name, nothing secret.
func (db *DB) Source() string { return db.source }

// Empty reports an SQLite database that had no table or view when opened.
func (db *DB) Empty() bool { return db.empty }

// Named reports an SQLite file named by DATABASE_URL rather than the
// embedded (or --db-path) file.
func (db *DB) Named() bool { return db.named }

// Config returns the effective configuration (defaults applied). Its
// DatabaseURL is a secret.
func (db *DB) Config() Config { return db.cfg }

// DefaultSchema is "public" for PostgreSQL and "main" for SQLite.
func (db *DB) DefaultSchema() string { return db.backend.defaultSchema() }

// EmptyHint says how to point the tools at a database of one's own; it is
// the note of an empty SQLite database's table listing.
const EmptyHint = "This SQLite database has no tables. To query your own database, restart the server with " +
	"DATABASE_URL=postgres://user:password@host:5432/dbname (use a read-only role), or " +
	"DATABASE_URL=sqlite:///absolute/path/app.db, or --db-path /absolute/path/app.db (SQLite files are opened read-only)."

// Query runs one read-only statement.
func (db *DB) Query(ctx context.Context, q Query) (*Result, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = db.cfg.DefaultLimit
	case limit < 0 || limit > db.cfg.MaxLimit:
		return nil, invalid("limit", "limit must be between 1 and %d", db.cfg.MaxLimit)
	}
	timeout := db.cfg.StatementTimeout
	if q.Timeout < 0 {
		return nil, invalid("timeout_ms", "the timeout must be positive")
	}
	if q.Timeout > 0 && q.Timeout < timeout {
		timeout = q.Timeout
	}
	for i, p := range q.Params {
		switch p.(type) {
		case nil, bool, string, json.Number, float64:
		default:
			return nil, invalid("params", "params[%d] must be a string, number, boolean or null", i)
		}
	}
	start := time.Now()
	res, err := db.backend.query(ctx, q, limit, timeout)
	if err != nil {
		return nil, err
	}
	res.Backend = db.name
	res.Limit = limit
	res.RowCount = len(res.Rows)
	if res.Rows == nil {
		res.Rows = []json.RawMessage{}
	}
	if res.Columns == nil {
		res.Columns = []Column{}
	}
	res.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return res, nil
}

// Tables lists the tables and views of schema ("" for the default).
func (db *DB) Tables(ctx context.Context, schema string) (*Tables, error) {
	if schema == "" {
		schema = db.DefaultSchema()
	}
	ts, err := db.backend.tables(ctx, schema)
	if err != nil {
		return nil, err
	}
	if ts == nil {
		ts = []Table{}
	}
	out := &Tables{Backend: db.name, Schema: schema, Tables: ts}
	if db.name == SQLite && schema == "main" && len(ts) == 0 {
		out.Note = EmptyHint
	}
	return out, nil
}

// Schema describes one table or view of schema ("" for the default).
func (db *DB) Schema(ctx context.Context, schema, table string) (*TableSchema, error) {
	if schema == "" {
		schema = db.DefaultSchema()
	}
	if table == "" {
		return nil, invalid("table", "table is required")
	}
	s, err := db.backend.schema(ctx, schema, table)
	if err != nil {
		return nil, err
	}
	s.Backend = db.name
	if s.PrimaryKey == nil {
		s.PrimaryKey = []string{}
	}
	if s.Columns == nil {
		s.Columns = []ColumnInfo{}
	}
	return s, nil
}

// appendRow encodes values as one JSON array and appends it to rows unless
// that would take *size past max; it reports whether the row fitted.
func appendRow(rows *[]json.RawMessage, size *int64, max int64, values []any) (bool, error) {
	raw, err := json.Marshal(values)
	if err != nil {
		return false, err
	}
	if *size+int64(len(raw)) > max {
		return false, nil
	}
	*size += int64(len(raw))
	*rows = append(*rows, raw)
	return true, nil
}
