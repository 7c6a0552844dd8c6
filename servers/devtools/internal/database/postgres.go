package database

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/pgcall"
)

// probeTimeout bounds the start-up check of PostgreSQL.
const probeTimeout = 15 * time.Second

type pgBackend struct {
	pool *pgcall.Pool
	cfg  Config
}

func openPostgres(cfg Config) (*DB, error) {
	pool, err := pgcall.Open(pgcall.Config{
		URL:             cfg.DatabaseURL,
		MaxConns:        cfg.MaxConns,
		ReadOnly:        true,
		ApplicationName: "devtools-mcp",
		AllowPrivileged: cfg.AllowSuperuser,
		DefaultTimeout:  cfg.StatementTimeout,
		// Bounds the memory one result row can take: a row this large could
		// never fit in a result anyway.
		MaxMessageBytes: int(4*cfg.MaxResultBytes) + 1<<20,
	})
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	db := &DB{cfg: cfg, name: Postgres, backend: &pgBackend{pool: pool, cfg: cfg},
		source: "PostgreSQL database " + pool.Target().Database}
	if cfg.Logger != nil {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		db.stopProbe = cancel
		db.probing.Add(1)
		go func() {
			defer db.probing.Done()
			defer cancel()
			probe(ctx, pool, cfg.Logger)
		}()
	}
	return db, nil
}

// probe connects once at start-up and logs whether the database can be
// used. The server starts either way: the database may come up later.
func probe(ctx context.Context, pool *pgcall.Pool, log *zerolog.Logger) {
	target := pool.Target()
	err := pool.Check(ctx)
	if errors.Is(err, context.Canceled) {
		return // closed before the check finished
	}
	ev := log.Info()
	msg := "database: PostgreSQL is reachable"
	if err != nil {
		ev = log.Warn()
		msg = "database: PostgreSQL cannot be used yet; the database tools will report why until it can"
		ev = ev.Str("error_code", string(mcperr.Wrap(err).Code)).Str("error", mcperr.Wrap(err).Message)
	}
	ev.Str("db_host", target.Host).Uint16("db_port", target.Port).Str("db_name", target.Database).Msg(msg)
}

func (b *pgBackend) close()                { b.pool.Close() }
func (b *pgBackend) defaultSchema() string { return "public" }

// binaryResults are the types whose binary form pgx decodes into values
// with a faithful JSON form; every other type is fetched as the server's
// text (exact for numeric, canonical for uuid, valid JSON for json/jsonb).
var binaryResults = map[uint32]timeStyle{
	pgtype.BoolOID: 0, pgtype.Int2OID: 0, pgtype.Int4OID: 0, pgtype.Int8OID: 0, pgtype.OIDOID: 0,
	pgtype.Float4OID: 0, pgtype.Float8OID: 0, pgtype.ByteaOID: 0,
	pgtype.TimestamptzOID: timeZoned, pgtype.TimestampOID: timeLocal, pgtype.DateOID: timeDate,
	pgtype.BoolArrayOID: 0, pgtype.Int2ArrayOID: 0, pgtype.Int4ArrayOID: 0, pgtype.Int8ArrayOID: 0,
	pgtype.Float4ArrayOID: 0, pgtype.Float8ArrayOID: 0, pgtype.ByteaArrayOID: 0,
	pgtype.TextArrayOID: 0, pgtype.VarcharArrayOID: 0,
	pgtype.TimestamptzArrayOID: timeZoned, pgtype.TimestampArrayOID: timeLocal, pgtype.DateArrayOID: timeDate,
}

// pgRows receives a query's result: it picks each column's format, and
// encodes and caps the rows.
type pgRows struct {
	cfg     Config
	limit   int
	fields  []pgconn.FieldDescription
	typeMap *pgtype.Map
	res     *Result
	size    int64
	full    bool   // no more rows are wanted
	buf     []byte // the row being encoded
	arena   []byte // encoded rows live here, a chunk at a time
}

func (r *pgRows) Describe(d pgcall.Description) ([]int16, error) {
	r.typeMap = d.TypeMap
	r.fields = d.Fields
	formats := make([]int16, len(r.fields))
	for i := range r.fields {
		if _, ok := binaryResults[r.fields[i].DataTypeOID]; ok {
			formats[i] = pgtype.BinaryFormatCode
		}
		r.fields[i].Format = formats[i]
	}
	return formats, nil
}

// arenaChunk is the size of the first block encoded rows are copied into
// (later blocks double, up to arenaMaxChunk): a few allocations for many
// rows instead of one per row.
const (
	arenaChunk    = 4 << 10
	arenaMaxChunk = 256 << 10
)

func (r *pgRows) Row(values [][]byte) error {
	if r.full {
		return nil
	}
	if len(r.res.Rows) == r.limit {
		r.res.Truncated, r.res.TruncatedBy, r.full = true, "limit", true
		return nil
	}
	buf := append(r.buf[:0], '[')
	for i, raw := range values {
		if i > 0 {
			buf = append(buf, ',')
		}
		var ok bool
		if buf, ok = appendPG(buf, r.fields[i], raw); ok {
			continue
		}
		v, err := pgValue(r.typeMap, r.fields[i], raw)
		if err != nil {
			return fmt.Errorf("decoding column %q: %w", r.fields[i].Name, err)
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding column %q: %w", r.fields[i].Name, err)
		}
		buf = append(buf, enc...)
	}
	buf = append(buf, ']')
	r.buf = buf
	if r.size+int64(len(buf)) > r.cfg.MaxResultBytes {
		r.res.Truncated, r.res.TruncatedBy, r.full = true, "max_bytes", true
		return nil
	}
	r.size += int64(len(buf))
	if cap(r.arena)-len(r.arena) < len(buf) {
		r.arena = make([]byte, 0, max(min(2*cap(r.arena), arenaMaxChunk), arenaChunk, len(buf)))
	}
	start := len(r.arena)
	r.arena = append(r.arena, buf...)
	r.res.Rows = append(r.res.Rows, r.arena[start:len(r.arena):len(r.arena)])
	return nil
}

// query runs the statement through pgcall: two round trips, then the
// transaction's rollback and the session's reset off the critical path.
// Execute fetches at most limit+1 rows (the extra one only tells that the
// result was truncated), so a huge result costs no more than its first rows.
func (b *pgBackend) query(ctx context.Context, q Query, limit int, timeout time.Duration) (*Result, error) {
	// Every parameter goes as text: the server parses it as the type it
	// inferred for $n, exactly as it would a quoted literal.
	params := make([][]byte, len(q.Params))
	for i, p := range q.Params {
		params[i] = pgText(p)
	}
	res := &Result{}
	rcv := &pgRows{cfg: b.cfg, limit: limit, res: res}
	out, err := b.pool.Exec(ctx, pgcall.Options{Mode: pgcall.ReadOnly, Timeout: timeout},
		pgcall.Statement{SQL: q.SQL, Params: params, MaxRows: limit + 1, Field: "query"}, rcv)
	if errors.Is(err, pgcall.ErrRowTooLarge) {
		return nil, invalid("query", "a row of the result is larger than the %s result cap", bytesize.Format(b.cfg.MaxResultBytes)).
			WithCause(err)
	}
	if err != nil {
		return nil, err
	}
	res.Command = out.Tag
	if strings.HasPrefix(out.Tag, "COPY") {
		return nil, invalid("query", "COPY is not supported: its output is not returned (use a SELECT)")
	}
	if len(rcv.fields) == 0 && out.Tag == "" {
		return nil, invalid("query", "the query is empty")
	}
	res.Columns = make([]Column, len(rcv.fields))
	for i, f := range rcv.fields {
		res.Columns[i] = Column{Name: f.Name, Type: out.TypeNames[i]}
	}
	return res, nil
}

// pgText renders a JSON scalar as the text PostgreSQL parses for a
// parameter; nil is SQL NULL.
func pgText(p any) []byte {
	switch x := p.(type) {
	case nil:
		return nil
	case bool:
		return []byte(strconv.FormatBool(x))
	case string:
		return []byte(x)
	case json.Number:
		return []byte(x.String())
	case float64:
		return strconv.AppendFloat(nil, x, 'g', -1, 64)
	}
	return []byte(fmt.Sprint(p))
}

// voidOID is the type of functions that return nothing.
const voidOID = 2278

// pgValue decodes one result value into its JSON form.
func pgValue(m *pgtype.Map, f pgconn.FieldDescription, raw []byte) (any, error) {
	if raw == nil {
		return nil, nil
	}
	if f.Format == pgtype.TextFormatCode {
		switch f.DataTypeOID {
		case voidOID: // pg_sleep(), pg_advisory_lock(): nothing to show
			return nil, nil
		case pgtype.JSONOID, pgtype.JSONBOID:
			if json.Valid(raw) {
				return json.RawMessage(append([]byte(nil), raw...)), nil
			}
		}
		return string(raw), nil
	}
	t, ok := m.TypeForOID(f.DataTypeOID)
	if !ok {
		return nil, fmt.Errorf("no decoder for binary type oid %d", f.DataTypeOID)
	}
	ts := binaryResults[f.DataTypeOID]
	if _, ok := t.Codec.(*pgtype.ArrayCodec); ok {
		// Through pgtype.Array to keep the dimensions: DecodeValue
		// flattens {{1,2},{3,4}} into [1,2,3,4].
		var a pgtype.Array[any]
		if err := m.PlanScan(f.DataTypeOID, f.Format, &a).Scan(raw, &a); err != nil {
			return nil, err
		}
		return nest(a.Elements, a.Dims, ts), nil
	}
	v, err := t.Codec.DecodeValue(m, f.DataTypeOID, f.Format, raw)
	if err != nil {
		return nil, err
	}
	return jsonValue(v, ts), nil
}

// nest arranges an array's elements (in row-major order) into nested JSON
// arrays, one level per dimension.
func nest(elems []any, dims []pgtype.ArrayDimension, ts timeStyle) []any {
	if len(dims) <= 1 {
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = jsonValue(e, ts)
		}
		return out
	}
	n := int(dims[0].Length)
	out := make([]any, n)
	if n == 0 {
		return out
	}
	step := len(elems) / n
	for i := range n {
		out[i] = nest(elems[i*step:(i+1)*step], dims[1:], ts)
	}
	return out
}

// relkindCase maps pg_class.relkind to the names Table.Type uses.
const relkindCase = `CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
  WHEN 'p' THEN 'partitioned table' WHEN 'f' THEN 'foreign table' END`

// catalog runs fn in a read-only call with the configured statement timeout.
func (b *pgBackend) catalog(ctx context.Context, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	return b.pool.Tx(ctx, pgcall.Options{Mode: pgcall.ReadOnly, Timeout: b.cfg.StatementTimeout}, fn)
}

func (b *pgBackend) tables(ctx context.Context, schema string) ([]Table, error) {
	var out []Table
	err := b.catalog(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		// One query: no row when the schema does not exist, one row of
		// NULLs when it has no table.
		rows, err := conn.Query(ctx, `SELECT c.relname, `+relkindCase+`, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_catalog.pg_namespace n
LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'v', 'm', 'p', 'f') AND NOT c.relispartition
WHERE n.nspname = $1
ORDER BY c.relname`, schema)
		if err != nil {
			return err
		}
		var name, kind *string
		var comment string
		seen := false
		_, err = pgx.ForEachRow(rows, []any{&name, &kind, &comment}, func() error {
			seen = true
			if name != nil {
				out = append(out, Table{Name: *name, Type: *kind, Comment: comment})
			}
			return nil
		})
		if err == nil && !seen {
			return notFound("schema", "schema %q does not exist", schema)
		}
		return err
	})
	return out, err
}

func (b *pgBackend) schema(ctx context.Context, schema, table string) (*TableSchema, error) {
	out := &TableSchema{Schema: schema, Table: table}
	err := b.catalog(ctx, func(ctx context.Context, conn *pgx.Conn) error {
		var oid *uint32
		var kind, comment *string
		err := conn.QueryRow(ctx, `SELECT c.oid, `+relkindCase+`, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_catalog.pg_namespace n
LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = $2 AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
WHERE n.nspname = $1`, schema, table).Scan(&oid, &kind, &comment)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("schema", "schema %q does not exist", schema)
		}
		if err != nil {
			return err
		}
		if oid == nil {
			return notFound("table", "table %q does not exist in schema %q", table, schema)
		}
		out.Type, out.Comment = *kind, *comment
		rows, err := conn.Query(ctx, `SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
  pg_get_expr(d.adbin, d.adrelid),
  coalesce((SELECT k.n FROM pg_catalog.pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, n)
            WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.attnum = a.attnum), 0)::int,
  CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' ELSE '' END,
  a.attgenerated <> '', coalesce(col_description(a.attrelid, a.attnum), '')
FROM pg_catalog.pg_attribute a
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`, *oid)
		if err != nil {
			return err
		}
		var c ColumnInfo
		var pos int16
		_, err = pgx.ForEachRow(rows, []any{&pos, &c.Name, &c.Type, &c.Nullable, &c.Default, &c.PrimaryKey,
			&c.Identity, &c.Generated, &c.Comment}, func() error {
			c.Position = int(pos)
			out.Columns = append(out.Columns, c)
			return nil
		})
		if err != nil {
			return err
		}
		out.PrimaryKey = primaryKey(out.Columns)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// primaryKey lists the primary-key columns in key order.
func primaryKey(cols []ColumnInfo) []string {
	var n int
	for _, c := range cols {
		n = max(n, c.PrimaryKey)
	}
	pk := make([]string, n)
	for _, c := range cols {
		if c.PrimaryKey > 0 {
			pk[c.PrimaryKey-1] = c.Name
		}
	}
	return pk
}
