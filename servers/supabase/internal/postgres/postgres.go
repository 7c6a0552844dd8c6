// Package postgres is the Supabase tools' backend on a PostgreSQL database
// reached directly (DATABASE_URL): the query model rendered to
// parameterised SQL and run under shared/pgcall's discipline — one pooled
// connection and one transaction per call, READ ONLY for reads (and for
// everything when the server is read-only), per-call timeouts, privileged
// roles refused. The reads rendered from the query model are prepared once
// per connection (pgcall's Prepared statements); a write, whose triggers
// may change the session, and a function call (rpc), which may as well,
// reset it after them (a rendered write runs unprepared: the reset would
// drop it). Rows are built as JSON by the database, in the
// same shape PostgREST gives.
package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/pgcall"
)

// The catalog leaves out schema_migrations, the migration runner's
// bookkeeping, as the embedded database does.

// Config configures the backend.
type Config struct {
	URL string
	// Schemas are the exposed schemas.
	Schemas []string
	// ReadOnly makes every session and transaction read-only.
	ReadOnly        bool
	Timeout         time.Duration
	MaxConns        int
	AllowPrivileged bool
	// CatalogTTL is how long the table catalog is reused (1 minute when
	// zero); a table it does not know makes it reload at once.
	CatalogTTL time.Duration
}

// DB is the PostgreSQL backend.
type DB struct {
	pool *pgcall.Pool
	cfg  Config

	mu      sync.Mutex
	tables  map[string]*query.Table // "schema.name"
	loaded  time.Time
	loading sync.Mutex
}

var _ backend.Backend = (*DB)(nil)

// Open prepares the pool; it connects lazily (see Check).
func Open(cfg Config) (*DB, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.CatalogTTL <= 0 {
		cfg.CatalogTTL = time.Minute
	}
	if len(cfg.Schemas) == 0 {
		cfg.Schemas = []string{"public"}
	}
	// Every call has the same timeout: as the sessions' own, it needs no
	// SET LOCAL (a prepared read on a session no write has committed on
	// needs none of pgcall's guard either).
	pool, err := pgcall.Open(pgcall.Config{URL: cfg.URL, MaxConns: cfg.MaxConns, ReadOnly: cfg.ReadOnly,
		ApplicationName: "supabase-mcp", AllowPrivileged: cfg.AllowPrivileged, DefaultTimeout: cfg.Timeout})
	if err != nil {
		return nil, err
	}
	return &DB{pool: pool, cfg: cfg}, nil
}

// Kind is "postgres".
func (d *DB) Kind() string { return "postgres" }

// Check connects and checks the role.
func (d *DB) Check(ctx context.Context) error { return d.pool.Check(ctx) }

// Close closes the pool.
func (d *DB) Close() { d.pool.Close() }

func (d *DB) opts(mode pgcall.Mode) pgcall.Options {
	if d.cfg.ReadOnly {
		mode = pgcall.ReadOnly
	}
	return pgcall.Options{Mode: mode, Timeout: d.cfg.Timeout}
}

// dbError keeps pgcall's classification but reports constraint and
// catalog errors with their SQLSTATE, as the other backends do.
func dbError(err error) error {
	if err == nil {
		return nil
	}
	var de *backend.DBError
	if errors.As(err, &de) {
		return de
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "23"), strings.HasPrefix(pe.Code, "22"), pe.Code == "42P01", pe.Code == "42703",
			pe.Code == "42883", pe.Code == "42501", pe.Code == "P0001":
			return backend.NewDBError(pe.Code, pe.Message, pe.Detail, pe.Hint)
		}
	}
	return err
}

var dialect = &query.Dialect{Postgres: true, BindValue: bindValue, BindJSON: bindJSON}

func bindValue(_ *query.Column, v query.Value) (any, error) {
	if v.Kind == query.Null {
		return nil, nil
	}
	return v.Text, nil
}

// bindJSON gives a written value's text: JSON itself for json and jsonb
// columns, the string or literal otherwise (PostgreSQL parses it as the
// column's type).
func bindJSON(col *query.Column, raw json.RawMessage) (any, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return nil, nil
	case query.IsJSONType(col.Type):
		return s, nil
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return nil, mcperr.Invalid("data."+col.Name, nil, "a JSON string", "not a valid JSON string")
		}
		return str, nil
	}
	return s, nil
}

func params(args []any) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			out[i] = []byte(s)
		}
	}
	return out
}

// receiver takes a one-row result of text columns.
type receiver struct {
	values [][]byte
	check  func(values [][]byte) error
}

func (r *receiver) Describe(d pgcall.Description) ([]int16, error) {
	return make([]int16, len(d.Fields)), nil // text
}

func (r *receiver) Row(values [][]byte) error {
	r.values = make([][]byte, len(values))
	for i, v := range values {
		if v != nil {
			r.values[i] = append([]byte{}, v...)
		}
	}
	if r.check != nil {
		return r.check(r.values)
	}
	return nil
}

// exec runs one statement. prepared is true for the statements the query
// model renders (select, insert, update, delete: identifiers checked
// against the catalog, values as parameters), which pgcall prepares once
// per connection when read-only (a write resets the session after it and
// runs unprepared); false for a function call, which may change the
// session and so is followed by a reset.
func (d *DB) exec(ctx context.Context, mode pgcall.Mode, st query.Statement, prepared bool, check func([][]byte) error) ([][]byte, error) {
	r := &receiver{check: check}
	_, err := d.pool.Exec(ctx, d.opts(mode), pgcall.Statement{SQL: st.SQL, Params: params(st.Args), Field: "filters",
		Prepared: prepared}, r)
	if err != nil {
		return nil, dbError(err)
	}
	if r.values == nil {
		return nil, errors.New("postgres: the statement returned no row")
	}
	return r.values, nil
}

func count(b []byte) (int64, error) { return strconv.ParseInt(string(b), 10, 64) }

// splitRows splits the rows a rendered statement gives (JSON objects joined
// with query.RowSep) and keeps limit of them (limit <= 0: all). Each
// must look like an object; the kit checks the whole result against the
// tool's outputSchema before it leaves.
func splitRows(raw []byte, limit int) (*backend.Result, error) {
	n := 0
	if len(raw) > 0 {
		n = bytes.Count(raw, []byte{query.RowSep}) + 1
	}
	more := limit > 0 && n > limit
	if more {
		n = limit
	}
	rows := make([]json.RawMessage, 0, n)
	for len(rows) < n {
		row := raw
		if i := bytes.IndexByte(raw, query.RowSep); i >= 0 {
			row, raw = raw[:i], raw[i+1:]
		}
		if len(row) < 2 || row[0] != '{' || row[len(row)-1] != '}' {
			return nil, errors.New("postgres: a row of the result is not a JSON object")
		}
		rows = append(rows, row)
	}
	return &backend.Result{Rows: rows, RowCount: len(rows), Truncated: more}, nil
}

// Select reads rows in a READ ONLY transaction.
func (d *DB) Select(ctx context.Context, q *query.Select) (*backend.Result, error) {
	plan, err := query.PlanSelect(catalog{d, ctx}, q)
	if err != nil {
		return nil, err
	}
	st, err := query.SQLSelect(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	vals, err := d.exec(ctx, pgcall.ReadOnly, st, true, nil)
	if err != nil {
		return nil, err
	}
	res, err := splitRows(vals[0], q.Limit)
	if err != nil {
		return nil, err
	}
	if q.Count {
		c, err := count(vals[1])
		if err != nil {
			return nil, err
		}
		res.Count = &c
	}
	return res, nil
}

// Insert adds the rows in one READ WRITE transaction.
func (d *DB) Insert(ctx context.Context, q *query.Insert) (*backend.Result, error) {
	plan, err := query.PlanInsert(catalog{d, ctx}, q)
	if err != nil {
		return nil, err
	}
	sts, err := query.SQLInsert(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	vals, err := d.exec(ctx, pgcall.ReadWrite, sts[0], true, nil)
	if err != nil {
		return nil, err
	}
	return splitRows(vals[0], 0)
}

// guarded runs a write that returns (rows, count) and rolls it back when
// it changed more than max rows.
func (d *DB) guarded(ctx context.Context, st query.Statement, max int) (*backend.Result, error) {
	vals, err := d.exec(ctx, pgcall.ReadWrite, st, true, func(v [][]byte) error {
		n, err := count(v[1])
		if err != nil {
			return err
		}
		if max > 0 && n > int64(max) {
			return backend.TooMany(n, max)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return splitRows(vals[0], 0)
}

// Update changes the matching rows; past MaxAffected the transaction is
// rolled back.
func (d *DB) Update(ctx context.Context, q *query.Update) (*backend.Result, error) {
	plan, err := query.PlanUpdate(catalog{d, ctx}, q)
	if err != nil {
		return nil, err
	}
	st, err := query.SQLUpdate(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	return d.guarded(ctx, st, q.MaxAffected)
}

// Delete removes the matching rows, with the same guard.
func (d *DB) Delete(ctx context.Context, q *query.Delete) (*backend.Result, error) {
	plan, err := query.PlanDelete(catalog{d, ctx}, q)
	if err != nil {
		return nil, err
	}
	st, err := query.SQLDelete(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	return d.guarded(ctx, st, q.MaxAffected)
}
