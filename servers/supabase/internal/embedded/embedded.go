// Package embedded is the Supabase tools' backend when no Supabase project
// or PostgreSQL database is configured: an SQLite file in the server's data
// directory, created with the workflow-state schema (and, on creation, the
// sample rows), with calculate_quote_scores registered as a function of the
// database. Reads run on read-only connections; writes on the single writer,
// one transaction per call.
package embedded

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"modernc.org/sqlite"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/schemasql"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/state"
)

// Schema is the one schema of the embedded database, named as Supabase
// names its default.
const Schema = "public"

// Config configures the embedded database.
type Config struct {
	Path string
	// Sample loads the sample rows into a database this call creates.
	Sample bool
	// Timeout bounds one call (30 s when zero).
	Timeout time.Duration
}

// DB is the embedded backend.
type DB struct {
	db      *state.SQLite
	timeout time.Duration
	mu      sync.Mutex
	tables  map[string]*query.Table
	stmts   stmtCache
}

var _ backend.Backend = (*DB)(nil)

// Open opens (creating if needed) the database file.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	register()
	_, statErr := os.Stat(cfg.Path)
	fresh := errors.Is(statErr, os.ErrNotExist)
	db, err := state.OpenSQLite(ctx, cfg.Path, state.Options{Migrations: schemasql.SQLite()})
	if err != nil {
		return nil, err
	}
	if fresh && cfg.Sample {
		if _, err := db.ExecContext(ctx, schemasql.Sample()); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("loading the sample rows: %w", err)
		}
	}
	d := &DB{db: db, timeout: cfg.Timeout}
	if d.timeout <= 0 {
		d.timeout = 30 * time.Second
	}
	if err := d.load(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return d, nil
}

// Kind is "embedded".
func (d *DB) Kind() string { return "embedded" }

// Close closes the database.
func (d *DB) Close() {
	d.stmts.close()
	_ = d.db.Close()
}

// Path is the database file.
func (d *DB) Path() string { return d.db.Path() }

// load reads the catalog of tables and views.
func (d *DB) load(ctx context.Context) error {
	r := d.db.Readers()
	rows, err := r.QueryContext(ctx, `SELECT name, type FROM sqlite_schema
WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name`)
	if err != nil {
		return fmt.Errorf("reading the embedded catalog: %w", err)
	}
	type entry struct{ name, kind string }
	var list []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.name, &e.kind); err != nil {
			_ = rows.Close()
			return err
		}
		list = append(list, e)
	}
	_ = rows.Close()
	tables := map[string]*query.Table{}
	for _, e := range list {
		t := &query.Table{Schema: Schema, Name: e.name, Kind: e.kind}
		if err := d.describe(ctx, t); err != nil {
			return fmt.Errorf("reading the embedded catalog (%s): %w", e.name, err)
		}
		tables[e.name] = t
	}
	for _, t := range tables {
		for _, fk := range t.ForeignKeys {
			if ref := tables[fk.RefTable]; ref != nil {
				ref.Referenced = append(ref.Referenced, query.ForeignKey{Name: fk.Name, Columns: fk.Columns,
					RefSchema: Schema, RefTable: t.Name, RefColumns: fk.RefColumns})
			}
		}
	}
	d.mu.Lock()
	d.tables = tables
	d.mu.Unlock()
	return nil
}

func (d *DB) describe(ctx context.Context, t *query.Table) error {
	r := d.db.Readers()
	rows, err := r.QueryContext(ctx, "SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?)", t.Name)
	if err != nil {
		return err
	}
	var pk []struct {
		pos  int
		name string
	}
	for rows.Next() {
		var (
			c           query.Column
			typ         string
			notnull     int
			dflt        sql.NullString
			pos, hidden int
		)
		if err := rows.Scan(&c.Name, &typ, &notnull, &dflt, &pos, &hidden); err != nil {
			_ = rows.Close()
			return err
		}
		c.Type = pgType(typ)
		c.Nullable = notnull == 0 && pos == 0
		c.Default = dflt.String
		c.PrimaryKey = pos
		c.Generated = hidden == 2 || hidden == 3
		if pos > 0 {
			pk = append(pk, struct {
				pos  int
				name string
			}{pos, c.Name})
		}
		t.Columns = append(t.Columns, c)
	}
	_ = rows.Close()
	sort.Slice(pk, func(i, j int) bool { return pk[i].pos < pk[j].pos })
	for _, p := range pk {
		t.PrimaryKey = append(t.PrimaryKey, p.name)
	}
	if t.Kind != "table" {
		return nil
	}
	fks, err := r.QueryContext(ctx, "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?) ORDER BY id, seq", t.Name)
	if err != nil {
		return err
	}
	byID := map[int]*query.ForeignKey{}
	var order []int
	for fks.Next() {
		var (
			id              int
			table, from, to string
		)
		if err := fks.Scan(&id, &table, &from, &to); err != nil {
			_ = fks.Close()
			return err
		}
		fk := byID[id]
		if fk == nil {
			fk = &query.ForeignKey{Name: fmt.Sprintf("%s_%s_fkey", t.Name, from), RefSchema: Schema, RefTable: table}
			byID[id] = fk
			order = append(order, id)
		}
		fk.Columns = append(fk.Columns, from)
		fk.RefColumns = append(fk.RefColumns, to)
	}
	_ = fks.Close()
	sort.Ints(order)
	for _, id := range order {
		t.ForeignKeys = append(t.ForeignKeys, *byID[id])
	}
	idx, err := r.QueryContext(ctx, "SELECT name FROM pragma_index_list(?) WHERE \"unique\" AND origin = 'u' ORDER BY name", t.Name)
	if err != nil {
		return err
	}
	var names []string
	for idx.Next() {
		var n string
		if err := idx.Scan(&n); err != nil {
			_ = idx.Close()
			return err
		}
		names = append(names, n)
	}
	_ = idx.Close()
	for _, n := range names {
		cols, err := r.QueryContext(ctx, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", n)
		if err != nil {
			return err
		}
		var u []string
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				_ = cols.Close()
				return err
			}
			u = append(u, c)
		}
		_ = cols.Close()
		t.Unique = append(t.Unique, u)
	}
	return nil
}

// Table finds a table of the catalog (the Catalog interface).
func (d *DB) Table(schema, name string) (*query.Table, error) {
	d.mu.Lock()
	t := d.tables[name]
	d.mu.Unlock()
	if t == nil || schema != Schema {
		return nil, query.TableNotFound("table", schema, name)
	}
	return t, nil
}

// dbError maps an SQLite error to the SQLSTATE PostgreSQL would report.
func dbError(err error) error {
	if err == nil {
		return nil
	}
	var me *mcperr.Error
	var de *backend.DBError
	if errors.As(err, &me) || errors.As(err, &de) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return backend.NewDBError("57014", "canceling statement due to statement timeout", "", "narrow the query")
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	msg := se.Error()
	switch se.Code() {
	case 2067, 1555: // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
		return backend.NewDBError("23505", "duplicate key value violates unique constraint", msg, "")
	case 1299: // SQLITE_CONSTRAINT_NOTNULL
		return backend.NewDBError("23502", "null value violates not-null constraint", msg, "")
	case 787: // SQLITE_CONSTRAINT_FOREIGNKEY
		return backend.NewDBError("23503", "insert or update violates foreign key constraint", msg, "the referenced row must exist first")
	case 275: // SQLITE_CONSTRAINT_CHECK
		return backend.NewDBError("23514", "new row violates check constraint", msg, "")
	case 5, 6, 517: // BUSY, LOCKED, BUSY_SNAPSHOT
		return backend.NewDBError("40001", "the database is busy; retry", "", "")
	case 8: // SQLITE_READONLY
		return backend.NewDBError("25006", "the embedded database is read-only", "", "")
	}
	if strings.Contains(msg, "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint") {
		return backend.NewDBError("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification", "",
			"onConflict must name a unique column (or the primary key)")
	}
	if i := strings.Index(msg, argErrorPrefix); i >= 0 {
		return backend.NewDBError("22023", strings.TrimSuffix(msg[i+len(argErrorPrefix):], " (1)"), "", "")
	}
	return err
}

func (d *DB) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, d.timeout)
}

// collect reads the JSON text of each row a write returns.
func collect(rows *sql.Rows) ([]json.RawMessage, error) {
	defer rows.Close()
	out := []json.RawMessage{}
	for rows.Next() {
		var s sql.RawBytes
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, append([]byte(nil), s...))
	}
	return out, rows.Err()
}

// Select reads rows on a read-only connection: one statement (rows and
// count from one snapshot), prepared once per connection.
func (d *DB) Select(parent context.Context, q *query.Select) (*backend.Result, error) {
	plan, err := query.PlanSelect(d, q)
	if err != nil {
		return nil, err
	}
	st, err := query.SQLSelect(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	ctx, cancel := d.ctx(parent)
	defer cancel()
	stmt, done, err := d.stmts.get(ctx, d.db.Readers(), st.SQL)
	if err != nil {
		return nil, dbError(err)
	}
	defer done()
	var (
		n     int
		text  sql.NullString
		count int64
	)
	dest := []any{&n, &text}
	if q.Count {
		dest = append(dest, &count)
	}
	if err := stmt.QueryRowContext(ctx, st.Args...).Scan(dest...); err != nil {
		return nil, dbError(err)
	}
	objs, err := splitRows(text.String, n)
	if err != nil {
		return nil, err
	}
	more := q.Limit > 0 && len(objs) > q.Limit
	if more {
		objs = objs[:q.Limit]
	}
	res := &backend.Result{Rows: objs, RowCount: len(objs), Truncated: more}
	if q.Count {
		res.Count = &count
	}
	return res, nil
}

// splitRows cuts the n rows of a read out of their joined text (see
// query.SQLSelect). The rows are views of text's bytes, which nothing
// writes: the driver allocated them for this string alone, and copying
// ~300 bytes per row only fed the garbage collector.
func splitRows(text string, n int) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, n)
	if n == 0 {
		return out, nil
	}
	b := unsafe.Slice(unsafe.StringData(text), len(text))
	for {
		i := bytes.IndexByte(b, query.RowSep)
		if i < 0 {
			break
		}
		out = append(out, json.RawMessage(b[:i:i]))
		b = b[i+1:]
	}
	out = append(out, json.RawMessage(b[:len(b):len(b)]))
	if len(out) != n {
		// SQLite escapes a control character in JSON text; a separator
		// inside a row would have shifted every row after it.
		return nil, fmt.Errorf("the embedded database returned %d rows in %d parts", n, len(out))
	}
	return out, nil
}

// write runs fn in one write transaction, committed when it succeeds.
func (d *DB) write(parent context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	ctx, cancel := d.ctx(parent)
	defer cancel()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return dbError(err)
	}
	if err := fn(ctx, tx); err != nil {
		_ = tx.Rollback()
		return dbError(err)
	}
	return dbError(tx.Commit())
}

// Insert adds the rows in one transaction.
func (d *DB) Insert(parent context.Context, q *query.Insert) (*backend.Result, error) {
	plan, err := query.PlanInsert(d, q)
	if err != nil {
		return nil, err
	}
	sts, err := query.SQLInsert(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	var objs []json.RawMessage
	err = d.write(parent, func(ctx context.Context, tx *sql.Tx) error {
		for _, st := range sts {
			rows, err := tx.QueryContext(ctx, st.SQL, st.Args...)
			if err != nil {
				return err
			}
			got, err := collect(rows)
			if err != nil {
				return err
			}
			objs = append(objs, got...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &backend.Result{Rows: objs, RowCount: len(objs)}, nil
}

// guarded counts the rows a write would change, refuses past max, then
// runs it.
func (d *DB) guarded(parent context.Context, t *query.Table, where query.Group, max int, st query.Statement) (*backend.Result, error) {
	count, err := query.SQLCount(dialect, t, where)
	if err != nil {
		return nil, err
	}
	var objs []json.RawMessage
	err = d.write(parent, func(ctx context.Context, tx *sql.Tx) error {
		var n int64
		if err := tx.QueryRowContext(ctx, count.SQL, count.Args...).Scan(&n); err != nil {
			return err
		}
		if max > 0 && n > int64(max) {
			return backend.TooMany(n, max)
		}
		rows, err := tx.QueryContext(ctx, st.SQL, st.Args...)
		if err != nil {
			return err
		}
		objs, err = collect(rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &backend.Result{Rows: objs, RowCount: len(objs)}, nil
}

// Update changes the matching rows, refusing more than MaxAffected.
func (d *DB) Update(parent context.Context, q *query.Update) (*backend.Result, error) {
	plan, err := query.PlanUpdate(d, q)
	if err != nil {
		return nil, err
	}
	st, err := query.SQLUpdate(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	return d.guarded(parent, plan.Table, q.Where, q.MaxAffected, st)
}

// Delete removes the matching rows, refusing more than MaxAffected.
func (d *DB) Delete(parent context.Context, q *query.Delete) (*backend.Result, error) {
	plan, err := query.PlanDelete(d, q)
	if err != nil {
		return nil, err
	}
	st, err := query.SQLDelete(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	return d.guarded(parent, plan.Table, q.Where, q.MaxAffected, st)
}

// Call runs a registered function with named arguments.
func (d *DB) Call(parent context.Context, q *query.Call) (*backend.Result, error) {
	fn, ok := functions[q.Function]
	if !ok || q.Schema != Schema {
		return nil, backend.NewDBError("PGRST202", fmt.Sprintf("function %s.%s does not exist", q.Schema, q.Function), "",
			"the embedded database offers calculate_quote_scores")
	}
	args := make([]any, len(fn.params))
	for _, k := range q.Args.Keys {
		found := false
		for _, p := range fn.params {
			found = found || p.name == k
		}
		if !found {
			return nil, mcperr.Invalid("params."+k, k, "a parameter of "+fn.name, "%s has no parameter %q", fn.name, k)
		}
	}
	for i, p := range fn.params {
		raw, ok := q.Args.Get(p.name)
		if !ok {
			if !p.optional {
				return nil, mcperr.Invalid("params."+p.name, nil, "a value", "%s needs the parameter %q", fn.name, p.name)
			}
			continue
		}
		v, err := bindJSON(&query.Column{Name: p.name, Type: p.typ}, raw)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	marks := make([]string, len(args))
	for i := range marks {
		marks[i] = fmt.Sprintf("?%d", i+1)
	}
	ctx, cancel := d.ctx(parent)
	defer cancel()
	var out string
	err := d.db.Readers().QueryRowContext(ctx, "SELECT "+fn.name+"("+strings.Join(marks, ", ")+")", args...).Scan(&out)
	if err != nil {
		return nil, dbError(err)
	}
	return backend.RowsResult(json.RawMessage(out), q.Limit)
}

// Tables lists the tables and views with their row counts.
func (d *DB) Tables(parent context.Context, schema string) ([]backend.TableSummary, error) {
	if schema != Schema {
		return nil, nil
	}
	ctx, cancel := d.ctx(parent)
	defer cancel()
	if err := d.load(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	names := make([]string, 0, len(d.tables))
	for n := range d.tables {
		names = append(names, n)
	}
	tables := d.tables
	d.mu.Unlock()
	sort.Strings(names)
	out := make([]backend.TableSummary, 0, len(names))
	for _, n := range names {
		t := tables[n]
		var rows int64
		if err := d.db.Readers().QueryRowContext(ctx, "SELECT count(*) FROM "+query.QuoteIdent(n)).Scan(&rows); err != nil {
			return nil, dbError(err)
		}
		out = append(out, backend.TableSummary{Schema: Schema, Name: n, Kind: t.Kind, RowEstimate: rows, Columns: len(t.Columns)})
	}
	return out, nil
}

// Describe returns a table's columns, keys and relations.
func (d *DB) Describe(ctx context.Context, schema, table string) (*query.Table, error) {
	t, err := d.Table(schema, table)
	if err != nil {
		return nil, err
	}
	cp := *t
	return &cp, nil
}
