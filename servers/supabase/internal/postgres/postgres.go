// Package postgres is the Supabase tools' backend on a PostgreSQL database
// reached directly (DATABASE_URL): the query model rendered to
// parameterised SQL and run under shared/pgcall's discipline — one pooled
// connection and one transaction per call, READ ONLY for reads (and for
// everything when the server is read-only), per-call timeouts, the session
// reset after every call, privileged roles refused. Rows are built as JSON
// by the database, in the same shape PostgREST gives.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
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
	pool, err := pgcall.Open(pgcall.Config{URL: cfg.URL, MaxConns: cfg.MaxConns, ReadOnly: cfg.ReadOnly,
		ApplicationName: "supabase-mcp", AllowPrivileged: cfg.AllowPrivileged})
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

const relationsSQL = `SELECT n.nspname, c.relname, CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END,
  greatest(c.reltuples, -1)::bigint, coalesce(obj_description(c.oid, 'pg_class'), ''), c.oid
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname <> 'schema_migrations'
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
ORDER BY 1, 2`

const columnsSQL = `SELECT a.attrelid, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
  coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), ''), a.attgenerated <> '' OR a.attidentity = 'a'
FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum`

const constraintsSQL = `SELECT k.conrelid, k.contype, k.conname,
  ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i) JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i)::text[],
  coalesce(rn.nspname, ''), coalesce(r.relname, ''),
  ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i) JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i)::text[]
FROM pg_catalog.pg_constraint k
LEFT JOIN pg_catalog.pg_class r ON r.oid = k.confrelid
LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = r.relnamespace
WHERE k.conrelid = ANY($1) AND k.contype IN ('p', 'u', 'f')
ORDER BY k.conrelid, k.contype, k.conname`

// load reads the catalog of the exposed schemas.
func (d *DB) load(ctx context.Context) (map[string]*query.Table, error) {
	d.loading.Lock()
	defer d.loading.Unlock()
	tables := map[string]*query.Table{}
	err := d.pool.Tx(ctx, d.opts(pgcall.ReadOnly), func(ctx context.Context, conn *pgx.Conn) error {
		byOID := map[uint32]*query.Table{}
		var oids []uint32
		rows, err := conn.Query(ctx, relationsSQL, d.cfg.Schemas)
		if err != nil {
			return err
		}
		for rows.Next() {
			t := &query.Table{}
			var oid uint32
			if err := rows.Scan(&t.Schema, &t.Name, &t.Kind, &t.RowEstimate, &t.Comment, &oid); err != nil {
				rows.Close()
				return err
			}
			byOID[oid] = t
			oids = append(oids, oid)
			tables[t.Schema+"."+t.Name] = t
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = conn.Query(ctx, columnsSQL, oids)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				oid uint32
				c   query.Column
			)
			if err := rows.Scan(&oid, &c.Name, &c.Type, &c.Nullable, &c.Default, &c.Generated); err != nil {
				rows.Close()
				return err
			}
			byOID[oid].Columns = append(byOID[oid].Columns, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = conn.Query(ctx, constraintsSQL, oids)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				oid                 uint32
				kind, name          string
				cols, refCols       []string
				refSchema, refTable string
			)
			if err := rows.Scan(&oid, &kind, &name, &cols, &refSchema, &refTable, &refCols); err != nil {
				rows.Close()
				return err
			}
			t := byOID[oid]
			switch kind {
			case "p":
				t.PrimaryKey = cols
				for i, c := range cols {
					if col := t.Column(c); col != nil {
						col.PrimaryKey = i + 1
					}
				}
			case "u":
				t.Unique = append(t.Unique, cols)
			case "f":
				t.ForeignKeys = append(t.ForeignKeys, query.ForeignKey{Name: name, Columns: cols, RefSchema: refSchema,
					RefTable: refTable, RefColumns: refCols})
			}
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err)
	}
	for _, t := range tables {
		for _, fk := range t.ForeignKeys {
			if ref := tables[fk.RefSchema+"."+fk.RefTable]; ref != nil {
				ref.Referenced = append(ref.Referenced, query.ForeignKey{Name: fk.Name, Columns: fk.Columns,
					RefSchema: t.Schema, RefTable: t.Name, RefColumns: fk.RefColumns})
			}
		}
	}
	d.mu.Lock()
	d.tables, d.loaded = tables, time.Now()
	d.mu.Unlock()
	return tables, nil
}

// catalog is a Catalog bound to a call's context.
type catalog struct {
	d   *DB
	ctx context.Context
}

func (c catalog) Table(schema, name string) (*query.Table, error) {
	d := c.d
	d.mu.Lock()
	tables, fresh := d.tables, time.Since(d.loaded) < d.cfg.CatalogTTL
	d.mu.Unlock()
	if t := tables[schema+"."+name]; t != nil && fresh {
		return t, nil
	}
	tables, err := d.load(c.ctx)
	if err != nil {
		return nil, err
	}
	if t := tables[schema+"."+name]; t != nil {
		return t, nil
	}
	return nil, query.TableNotFound("table", schema, name)
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

func (d *DB) exec(ctx context.Context, mode pgcall.Mode, st query.Statement, check func([][]byte) error) ([][]byte, error) {
	r := &receiver{check: check}
	_, err := d.pool.Exec(ctx, d.opts(mode), pgcall.Statement{SQL: st.SQL, Params: params(st.Args), Field: "filters"}, r)
	if err != nil {
		return nil, dbError(err)
	}
	if r.values == nil {
		return nil, errors.New("postgres: the statement returned no row")
	}
	return r.values, nil
}

func count(b []byte) (int64, error) { return strconv.ParseInt(string(b), 10, 64) }

// Select reads rows in a READ ONLY transaction.
func (d *DB) Select(ctx context.Context, q *query.Select) (*backend.Result, error) {
	plan, err := query.PlanSelect(catalog{d, ctx}, q)
	if err != nil {
		return nil, err
	}
	st, _, err := query.SQLSelect(dialect, plan, q)
	if err != nil {
		return nil, err
	}
	vals, err := d.exec(ctx, pgcall.ReadOnly, st, nil)
	if err != nil {
		return nil, err
	}
	rows, n, more, err := backend.TrimRows(vals[0], q.Limit)
	if err != nil {
		return nil, err
	}
	res := &backend.Result{Rows: rows, RowCount: n, Truncated: more}
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
	vals, err := d.exec(ctx, pgcall.ReadWrite, sts[0], nil)
	if err != nil {
		return nil, err
	}
	rows, n, _, err := backend.TrimRows(vals[0], 0)
	if err != nil {
		return nil, err
	}
	return &backend.Result{Rows: rows, RowCount: n}, nil
}

// guarded runs a write that returns (rows, count) and rolls it back when
// it changed more than max rows.
func (d *DB) guarded(ctx context.Context, st query.Statement, max int) (*backend.Result, error) {
	vals, err := d.exec(ctx, pgcall.ReadWrite, st, func(v [][]byte) error {
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
	rows, n, _, err := backend.TrimRows(vals[0], 0)
	if err != nil {
		return nil, err
	}
	return &backend.Result{Rows: rows, RowCount: n}, nil
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

// Tables lists the tables and views of a schema with the planner's row
// estimates.
func (d *DB) Tables(ctx context.Context, schema string) ([]backend.TableSummary, error) {
	tables, err := d.load(ctx)
	if err != nil {
		return nil, err
	}
	var out []backend.TableSummary
	for _, t := range tables {
		if t.Schema == schema {
			out = append(out, backend.TableSummary{Schema: t.Schema, Name: t.Name, Kind: t.Kind, RowEstimate: t.RowEstimate, Columns: len(t.Columns)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Describe returns one table.
func (d *DB) Describe(ctx context.Context, schema, table string) (*query.Table, error) {
	if _, err := d.load(ctx); err != nil {
		return nil, err
	}
	t, err := catalog{d, ctx}.Table(schema, table)
	if err != nil {
		return nil, err
	}
	cp := *t
	return &cp, nil
}

// fn is a function found in the catalog.
type fn struct {
	names     []string // input arguments, in order
	types     []string
	defaults  int // the last `defaults` inputs have defaults
	retset    bool
	composite bool
	void      bool
	readOnly  bool
}

const functionSQL = `SELECT p.proname, coalesce(p.proargnames, '{}')::text[], coalesce(p.proargmodes::text[], '{}')::text[],
  ARRAY(SELECT pg_catalog.format_type(t, NULL) FROM unnest(p.proargtypes) WITH ORDINALITY u(t, i) ORDER BY u.i)::text[],
  p.pronargdefaults, p.proretset, rt.typtype = 'c' OR rt.oid = 'record'::regtype, rt.oid = 'void'::regtype,
  p.provolatile <> 'v', p.prokind,
  EXISTS (SELECT 1 FROM pg_catalog.pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e'),
  pg_catalog.has_function_privilege(p.oid, 'EXECUTE'), p.provariadic <> 0
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_type rt ON rt.oid = p.prorettype
WHERE n.nspname = $1 AND p.proname = $2`

// lookup finds the one function of that name the arguments fit.
func (d *DB) lookup(ctx context.Context, q *query.Call) (*fn, error) {
	var found []*fn
	var refusal error
	err := d.pool.Tx(ctx, d.opts(pgcall.ReadOnly), func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, functionSQL, q.Schema, q.Function)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				name, kind             string
				allNames, modes, types []string
				f                      fn
				ext, canExec, variadic bool
				defaults               int16
			)
			if err := rows.Scan(&name, &allNames, &modes, &types, &defaults, &f.retset, &f.composite, &f.void,
				&f.readOnly, &kind, &ext, &canExec, &variadic); err != nil {
				return err
			}
			switch {
			case kind != "f":
				refusal = mcperr.New(mcperr.PermissionDeny, "%s.%s is not a plain function (an aggregate, window function or procedure) and cannot be called", q.Schema, q.Function)
				continue
			case ext:
				refusal = mcperr.New(mcperr.PermissionDeny, "%s.%s belongs to a database extension; only the application's own functions can be called", q.Schema, q.Function)
				continue
			case !canExec:
				refusal = mcperr.New(mcperr.PermissionDeny, "the database role may not execute %s.%s", q.Schema, q.Function)
				continue
			case variadic:
				refusal = mcperr.Invalid("function", q.Function, "a function with named arguments", "%s.%s takes variadic arguments, which calls by name cannot pass", q.Schema, q.Function)
				continue
			}
			f.defaults = int(defaults)
			unnamed := false
			for i, n := range allNames {
				if len(modes) > 0 && modes[i] != "i" && modes[i] != "b" {
					continue
				}
				if n == "" {
					unnamed = true
				}
				f.names = append(f.names, n)
			}
			if len(allNames) == 0 && len(types) > 0 {
				unnamed = true
			}
			if unnamed {
				refusal = mcperr.Invalid("function", q.Function, "a function whose arguments have names", "%s.%s has unnamed arguments, which calls by name cannot pass", q.Schema, q.Function)
				continue
			}
			f.types = types
			found = append(found, &f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err)
	}
	var fits []*fn
	for _, f := range found {
		if fitsArgs(f, q.Args) {
			fits = append(fits, f)
		}
	}
	switch {
	case len(fits) == 1:
		return fits[0], nil
	case len(fits) > 1:
		return nil, mcperr.Invalid("params", nil, "arguments that choose one function", "%s.%s has several versions these arguments fit", q.Schema, q.Function)
	case len(found) > 0:
		f := found[0]
		return nil, mcperr.Invalid("params", nil, "the arguments "+strings.Join(f.names, ", "),
			"the arguments do not fit %s.%s(%s): every argument without a default is needed and no other name is accepted",
			q.Schema, q.Function, strings.Join(f.names, ", "))
	case refusal != nil:
		return nil, refusal
	}
	return nil, backend.NewDBError("PGRST202", fmt.Sprintf("function %s.%s does not exist or is not exposed", q.Schema, q.Function), "", "")
}

func fitsArgs(f *fn, args query.Row) bool {
	for _, k := range args.Keys {
		ok := false
		for _, n := range f.names {
			ok = ok || n == k
		}
		if !ok {
			return false
		}
	}
	for i, n := range f.names {
		if _, ok := args.Get(n); !ok && i < len(f.names)-f.defaults {
			return false
		}
	}
	return true
}

// Call runs a function of an exposed schema with named arguments: READ ONLY
// when the function is declared STABLE or IMMUTABLE (or the server is
// read-only), READ WRITE otherwise.
func (d *DB) Call(ctx context.Context, q *query.Call) (*backend.Result, error) {
	f, err := d.lookup(ctx, q)
	if err != nil {
		return nil, err
	}
	var args []any
	var b strings.Builder
	b.WriteString(query.QuoteIdent(q.Schema) + "." + query.QuoteIdent(q.Function) + "(")
	for i, k := range q.Args.Keys {
		var typ string
		for j, n := range f.names {
			if n == k {
				typ = f.types[j]
			}
		}
		v, err := bindJSON(&query.Column{Name: k, Type: typ}, q.Args.Values[i])
		if err != nil {
			return nil, err
		}
		if s := strings.TrimSpace(string(q.Args.Values[i])); !query.IsJSONType(typ) && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) {
			return nil, mcperr.Invalid("params."+k, nil, "a "+typ, "params.%s: %s.%s takes %s, not a JSON object or array", k, q.Schema, q.Function, typ)
		}
		args = append(args, v)
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s => $%d::%s", query.QuoteIdent(k), i+1, typ)
	}
	b.WriteString(")")
	call := b.String()
	var sql string
	switch {
	case f.void:
		sql = "SELECT 'null'::text FROM " + call + " AS _v"
	case f.retset || f.composite:
		sql = "SELECT coalesce(json_agg(_r), '[]'::json)::text FROM (SELECT * FROM " + call
		if q.Limit > 0 {
			sql += " LIMIT " + strconv.Itoa(q.Limit+1)
		}
		sql += ") _r"
	default:
		sql = "SELECT to_json(" + call + ")::text"
	}
	mode := pgcall.ReadWrite
	if f.readOnly {
		mode = pgcall.ReadOnly
	}
	vals, err := d.exec(ctx, mode, query.Statement{SQL: sql, Args: args}, nil)
	if err != nil {
		return nil, err
	}
	if f.retset || (f.composite && !f.void) {
		if !f.retset {
			// A single composite value: one object.
			rows, _, _, err := backend.TrimRows(vals[0], 0)
			if err != nil {
				return nil, err
			}
			var elems []json.RawMessage
			_ = json.Unmarshal(rows, &elems)
			if len(elems) == 1 {
				return &backend.Result{Scalar: true, Value: elems[0]}, nil
			}
		}
		rows, n, more, err := backend.TrimRows(vals[0], q.Limit)
		if err != nil {
			return nil, err
		}
		return &backend.Result{Rows: rows, RowCount: n, Truncated: more}, nil
	}
	if vals[0] == nil {
		return &backend.Result{Scalar: true, Value: json.RawMessage("null")}, nil
	}
	return &backend.Result{Scalar: true, Value: json.RawMessage(vals[0])}, nil
}
