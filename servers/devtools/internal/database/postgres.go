package database

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-fleet/mcp-fleet/servers/devtools/internal/bytesize"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// backstop is how much longer than the statement timeout a call may take on
// the Go side (connecting, BEGIN, ROLLBACK, DISCARD ALL) before its context
// ends it; the server's own statement_timeout normally fires first, which
// keeps the connection usable.
const backstop = 5 * time.Second

// cleanupTimeout bounds ROLLBACK and DISCARD ALL when the call's own context
// has already ended.
const cleanupTimeout = 5 * time.Second

// errPrivilegedRole marks a connection refused because its role is too
// powerful (see Config.AllowSuperuser).
var errPrivilegedRole = errors.New("privileged database role")

// privilegedRoleSQL is true for a role that is, or may SET ROLE to, a
// superuser or a role that runs programs or touches files on the database
// server: all of which work from inside a read-only transaction (COPY … TO
// PROGRAM, COPY … TO 'file', pg_read_file).
const privilegedRoleSQL = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
WHERE (r.rolsuper OR r.rolname IN ('pg_execute_server_program', 'pg_write_server_files', 'pg_read_server_files'))
  AND pg_has_role(current_user, r.oid, 'MEMBER'))`

type pgBackend struct {
	pool *pgxpool.Pool
	cfg  Config
}

func openPostgres(cfg Config) (*pgBackend, error) {
	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		// The parser's message may quote the URL, password included.
		return nil, errors.New("database: DATABASE_URL is not a valid PostgreSQL connection URL")
	}
	pc.MaxConns = int32(cfg.MaxConns)
	pc.MinConns = 0
	pc.MaxConnIdleTime = 5 * time.Minute
	cc := pc.ConnConfig
	// Unnamed statements only: nothing is cached on the session, so the
	// DISCARD ALL after every call cannot leave pgx's caches stale.
	cc.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	cc.StatementCacheCapacity = 0
	cc.DescriptionCacheCapacity = 0
	// Bounds the memory one result row can take: a row this large could
	// never fit in a result anyway.
	cc.MaxProtocolMessageBodyLen = int(4*cfg.MaxResultBytes) + 1<<20
	// When a call's context ends, ask the server to cancel the statement
	// (instead of only breaking off the read), so that nothing goes on
	// running there and the connection stays usable.
	cc.BuildContextWatcherHandler = func(pg *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pg, DeadlineDelay: 2 * time.Second}
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = 10 * time.Second
	}
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	// A second wall: outside our explicit read-only transactions the
	// session is read-only too.
	cc.RuntimeParams["default_transaction_read_only"] = "on"
	if cc.RuntimeParams["application_name"] == "" {
		cc.RuntimeParams["application_name"] = "devtools-mcp"
	}
	if !cfg.AllowSuperuser {
		pc.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			var privileged bool
			if err := c.QueryRow(ctx, privilegedRoleSQL).Scan(&privileged); err != nil {
				return err
			}
			if privileged {
				return errPrivilegedRole
			}
			return nil
		}
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return nil, errors.New("database: cannot set up the PostgreSQL connection pool")
	}
	return &pgBackend{pool: pool, cfg: cfg}, nil
}

func (b *pgBackend) close()                { b.pool.Close() }
func (b *pgBackend) defaultSchema() string { return "public" }

// run calls fn on a pooled connection inside a fresh READ ONLY transaction
// whose statement, lock and idle timeouts are timeout. Whatever happens, the
// transaction is rolled back and the session reset (DISCARD ALL: settings,
// roles, prepared statements, cursors, listeners, advisory locks, temporary
// tables) before the connection returns to the pool; a connection that
// cannot be reset is closed instead.
func (b *pgBackend) run(parent context.Context, timeout time.Duration, fn func(context.Context, *pgx.Conn) error) (err error) {
	ctx, cancel := context.WithTimeout(parent, timeout+backstop)
	defer cancel()
	pc, err := b.pool.Acquire(ctx)
	if err != nil {
		return b.mapErr(parent, ctx, err, timeout)
	}
	conn := pc.Conn()
	defer func() {
		if !b.reset(ctx, conn) {
			cctx, ccancel := context.WithTimeout(context.Background(), cleanupTimeout)
			_ = conn.Close(cctx)
			ccancel()
		}
		pc.Release() // a closed connection is destroyed, not pooled
	}()
	ms := timeout.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	// Constant text and integers only; the simple protocol sends it in one
	// round trip. The closing SELECT takes the transaction's first snapshot,
	// after which PostgreSQL refuses SET TRANSACTION READ WRITE.
	begin := fmt.Sprintf("BEGIN READ ONLY; SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; "+
		"SET LOCAL idle_in_transaction_session_timeout = %d; SELECT 1", ms, ms, ms+backstop.Milliseconds())
	if _, err := conn.PgConn().Exec(ctx, begin).ReadAll(); err != nil {
		return b.mapErr(parent, ctx, err, timeout)
	}
	if err := fn(ctx, conn); err != nil {
		return b.mapErr(parent, ctx, err, timeout)
	}
	return nil
}

// reset rolls back and discards all session state; it reports whether the
// connection is clean and idle.
func (b *pgBackend) reset(ctx context.Context, conn *pgx.Conn) bool {
	if conn.IsClosed() || conn.PgConn().IsBusy() {
		return false
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
	}
	pg := conn.PgConn()
	// Two messages: DISCARD ALL cannot run in a multi-statement string.
	if _, err := pg.Exec(ctx, "ROLLBACK").ReadAll(); err != nil {
		return false
	}
	if _, err := pg.Exec(ctx, "DISCARD ALL").ReadAll(); err != nil {
		return false
	}
	return pg.TxStatus() == 'I'
}

// abandon gives up on a connection whose protocol state is unknown: it asks
// the server to stop whatever runs there and closes the connection (which
// then never returns to the pool).
func abandon(pg *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = pg.CancelRequest(ctx)
	_ = pg.Close(ctx)
}

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

// transactionTags are the command tags of statements that end or replace
// the call's transaction.
var transactionTags = []string{"BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE",
	"PREPARE TRANSACTION", "COMMIT PREPARED", "ROLLBACK PREPARED"}

func (b *pgBackend) query(ctx context.Context, q Query, limit int, timeout time.Duration) (*Result, error) {
	res := &Result{}
	err := b.run(ctx, timeout, func(ctx context.Context, conn *pgx.Conn) error {
		pg := conn.PgConn()
		// Parse + Describe of the unnamed statement: the extended protocol
		// refuses a string holding more than one statement here.
		sd, err := pg.Prepare(ctx, "", q.SQL, nil)
		if err != nil {
			return err
		}
		if len(sd.ParamOIDs) != len(q.Params) {
			return invalid("params", "the statement takes %d parameter(s) ($1 … $n) but params has %d value(s)",
				len(sd.ParamOIDs), len(q.Params))
		}
		// A copy: pgconn reuses the slice for the connection's next query.
		fields := slices.Clone(sd.Fields)
		tag, err := b.execute(ctx, pg, conn.TypeMap(), sd, fields, q.Params, limit, res)
		if err != nil {
			return err
		}
		res.Command = tag
		if err := checkStillInside(pg, tag); err != nil {
			return err
		}
		if strings.HasPrefix(tag, "COPY") {
			return invalid("query", "COPY is not supported: its output is not returned (use a SELECT)")
		}
		if len(fields) == 0 && tag == "" {
			return invalid("query", "the query is empty")
		}
		res.Columns, err = pgColumns(ctx, conn, fields)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// execute binds the prepared unnamed statement to a portal and fetches at
// most limit+1 rows from it: Execute's row count makes the server stop there
// (the extra row only tells that the result was truncated), so a huge result
// costs no more than its first rows, and nothing needs cancelling. It
// returns the command tag ("" when the portal was suspended).
func (b *pgBackend) execute(ctx context.Context, pg *pgconn.PgConn, m *pgtype.Map, sd *pgconn.StatementDescription,
	fields []pgconn.FieldDescription, params []any, limit int, res *Result) (string, error) {
	// Every parameter goes as text: the server parses it as the type it
	// inferred for $n, exactly as it would a quoted literal.
	values := make([][]byte, len(params))
	for i, p := range params {
		values[i] = pgText(p)
	}
	formats := make([]int16, len(fields))
	for i := range fields {
		if _, ok := binaryResults[fields[i].DataTypeOID]; ok {
			formats[i] = pgtype.BinaryFormatCode
		}
		fields[i].Format = formats[i]
	}
	fe := pg.Frontend()
	fe.Send(&pgproto3.Bind{PreparedStatement: sd.Name, Parameters: values, ResultFormatCodes: formats})
	fe.Send(&pgproto3.Execute{MaxRows: uint32(limit) + 1})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		return "", err
	}
	var (
		size    int64
		tag     string
		stmtErr error
		full    bool // no more rows are wanted
		row     = make([]any, len(fields))
	)
	for {
		msg, err := pg.ReceiveMessage(ctx)
		if err != nil {
			// Mid-protocol (the context ended, the server went away, a
			// message was too large): the connection cannot be reused.
			abandon(pg)
			var tooBig *pgproto3.ExceededMaxBodyLenErr
			if errors.As(err, &tooBig) {
				return "", invalid("query", "a row of the result is larger than the %s result cap", bytesize.Format(b.cfg.MaxResultBytes))
			}
			return "", err
		}
		switch msg := msg.(type) {
		case *pgproto3.DataRow:
			if stmtErr != nil || full {
				continue
			}
			if len(res.Rows) == limit {
				res.Truncated, res.TruncatedBy, full = true, "limit", true
				continue
			}
			for i, raw := range msg.Values {
				if row[i], err = pgValue(m, fields[i], raw); err != nil {
					stmtErr = internalError{fmt.Errorf("decoding column %q: %w", fields[i].Name, err)}
					break
				}
			}
			if stmtErr != nil {
				continue
			}
			fits, err := appendRow(&res.Rows, &size, b.cfg.MaxResultBytes, row)
			if err != nil {
				stmtErr = internalError{err}
			} else if !fits {
				res.Truncated, res.TruncatedBy, full = true, "max_bytes", true
			}
		case *pgproto3.CommandComplete:
			tag = string(msg.CommandTag)
		case *pgproto3.ErrorResponse:
			if stmtErr == nil {
				stmtErr = pgconn.ErrorResponseToPgError(msg)
			}
		case *pgproto3.CopyInResponse:
			// COPY … FROM STDIN would wait for data forever.
			fe.Send(&pgproto3.CopyFail{Message: "COPY FROM STDIN is not supported"})
			if err := fe.Flush(); err != nil {
				abandon(pg)
				return "", err
			}
		case *pgproto3.ReadyForQuery:
			return tag, stmtErr
		}
		// BindComplete, PortalSuspended, EmptyQueryResponse, notices and
		// COPY TO STDOUT data need nothing.
	}
}

// checkStillInside refuses a statement that ended or replaced the call's
// transaction (COMMIT, ROLLBACK, END, COMMIT AND CHAIN, PREPARE
// TRANSACTION…). It ran read-only and alone, so it changed nothing, but the
// caller must not believe it did something.
func checkStillInside(pg *pgconn.PgConn, tag string) error {
	word := ""
	for _, t := range transactionTags {
		if tag == t || strings.HasPrefix(tag, t+" ") {
			word = t
		}
	}
	if word == "" && pg.TxStatus() == 'T' {
		return nil
	}
	if word == "" {
		word = tag
	}
	return errorf(Denied, nil, "transaction control (%s) is not allowed: every call runs in its own read-only "+
		"transaction, which is always rolled back", word)
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

// pgColumns names the result columns and their types: pgx's type map knows
// the built-in types; the rest (enums, domains, extension types) are looked
// up in pg_type, still inside the call's transaction.
func pgColumns(ctx context.Context, conn *pgx.Conn, fields []pgconn.FieldDescription) ([]Column, error) {
	cols := make([]Column, len(fields))
	var unknown []uint32
	for i, f := range fields {
		cols[i].Name = f.Name
		if t, ok := conn.TypeMap().TypeForOID(f.DataTypeOID); ok {
			cols[i].Type = t.Name
		} else {
			unknown = append(unknown, f.DataTypeOID)
		}
	}
	if len(unknown) == 0 {
		return cols, nil
	}
	rows, err := conn.Query(ctx, "SELECT oid, typname FROM pg_catalog.pg_type WHERE oid = ANY($1)", unknown)
	if err != nil {
		return nil, err
	}
	names := map[uint32]string{}
	var oid uint32
	var name string
	if _, err := pgx.ForEachRow(rows, []any{&oid, &name}, func() error { names[oid] = name; return nil }); err != nil {
		return nil, err
	}
	for i, f := range fields {
		if cols[i].Type == "" {
			cols[i].Type = names[f.DataTypeOID]
		}
	}
	return cols, nil
}

// relkinds maps pg_class.relkind to the names Table.Type uses.
const relkindCase = `CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
  WHEN 'p' THEN 'partitioned table' WHEN 'f' THEN 'foreign table' END`

func (b *pgBackend) schemaExists(ctx context.Context, conn *pgx.Conn, schema string) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)",
		schema).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return &Error{Kind: NotFound, Field: "schema", Msg: fmt.Sprintf("schema %q does not exist", schema)}
	}
	return nil
}

func (b *pgBackend) tables(ctx context.Context, schema string) ([]Table, error) {
	var out []Table
	err := b.run(ctx, b.cfg.StatementTimeout, func(ctx context.Context, conn *pgx.Conn) error {
		if err := b.schemaExists(ctx, conn, schema); err != nil {
			return err
		}
		rows, err := conn.Query(ctx, `SELECT c.relname, `+relkindCase+`, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'm', 'p', 'f') AND NOT c.relispartition
ORDER BY c.relname`, schema)
		if err != nil {
			return err
		}
		var t Table
		_, err = pgx.ForEachRow(rows, []any{&t.Name, &t.Type, &t.Comment}, func() error {
			out = append(out, t)
			return nil
		})
		return err
	})
	return out, err
}

func (b *pgBackend) schema(ctx context.Context, schema, table string) (*TableSchema, error) {
	out := &TableSchema{Schema: schema, Table: table}
	err := b.run(ctx, b.cfg.StatementTimeout, func(ctx context.Context, conn *pgx.Conn) error {
		if err := b.schemaExists(ctx, conn, schema); err != nil {
			return err
		}
		var oid uint32
		err := conn.QueryRow(ctx, `SELECT c.oid, `+relkindCase+`, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'v', 'm', 'p', 'f')`, schema, table).
			Scan(&oid, &out.Type, &out.Comment)
		if errors.Is(err, pgx.ErrNoRows) {
			return &Error{Kind: NotFound, Field: "table", Msg: fmt.Sprintf("table %q does not exist in schema %q", table, schema)}
		}
		if err != nil {
			return err
		}
		rows, err := conn.Query(ctx, `SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
  pg_get_expr(d.adbin, d.adrelid),
  coalesce((SELECT k.n FROM pg_catalog.pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, n)
            WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.attnum = a.attnum), 0)::int,
  CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' ELSE '' END,
  a.attgenerated <> '', coalesce(col_description(a.attrelid, a.attnum), '')
FROM pg_catalog.pg_attribute a
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`, oid)
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

// mapErr turns a driver error into an *Error whose message is safe to show.
// parent is the caller's context, ctx the call's (with the backstop).
func (b *pgBackend) mapErr(parent, ctx context.Context, err error, timeout time.Duration) error {
	var de *Error
	if errors.As(err, &de) {
		return de
	}
	var ie internalError
	if errors.As(err, &ie) {
		return ie.error
	}
	if errors.Is(err, errPrivilegedRole) {
		return errorf(Denied, err, "the database role may run programs or read and write files on the database "+
			"server (superuser, pg_execute_server_program, pg_read_server_files or pg_write_server_files); "+
			"connect with a dedicated read-only role")
	}
	if parent.Err() != nil {
		return parent.Err() // the client went away or its own deadline passed
	}
	if ctx.Err() != nil || pgconn.Timeout(err) {
		return errorf(Timeout, err, "the statement did not finish within its %v timeout", timeout)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pgError(pe, timeout)
	}
	return errorf(Unavailable, err, msgUnavailable)
}

// pgError classifies a server error by SQLSTATE. The server's message is
// kept (it names the offending statement, column or value, never the
// connection); detail and hint follow when present.
func pgError(pe *pgconn.PgError, timeout time.Duration) *Error {
	msg := "PostgreSQL: " + pe.Message
	if pe.Position > 0 {
		msg += fmt.Sprintf(" (at character %d)", pe.Position)
	}
	if pe.Detail != "" {
		msg += "; detail: " + pe.Detail
	}
	if pe.Hint != "" {
		msg += "; hint: " + pe.Hint
	}
	msg += " [SQLSTATE " + pe.Code + "]"
	class := pe.Code[:min(2, len(pe.Code))]
	switch {
	case pe.Code == "57014": // query_canceled: statement_timeout
		return errorf(Timeout, pe, "the statement exceeded its %v timeout and was cancelled (%s)", timeout, msg)
	case pe.Code == "55P03" || pe.Code == "25P03": // lock_not_available, idle_in_transaction_session_timeout
		return errorf(Timeout, pe, "the statement timed out waiting (%s)", msg)
	case pe.Code == "25006": // read_only_sql_transaction
		return errorf(Denied, pe, "refused, queries are read-only: %s", msg)
	case pe.Code == "42601" && strings.Contains(pe.Message, "multiple commands"):
		return &Error{Kind: Invalid, Field: "query", Msg: "only one SQL statement is allowed per call (" + msg + ")", cause: pe}
	case pe.Code == "42501" || class == "28" || class == "25" || class == "2D" || class == "3B":
		// insufficient privilege, authorization, transaction state
		return errorf(Denied, pe, "refused: %s", msg)
	case class == "40" || class == "53" || pe.Code == "55006" || pe.Code == "55P02":
		// serialization failure, deadlock, insufficient resources, object in use
		return errorf(Busy, pe, "%s", msg)
	case class == "08" || class == "57" || class == "58" || class == "XX" || class == "F0":
		return errorf(Unavailable, pe, msgUnavailable)
	}
	return &Error{Kind: Invalid, Field: "query", Msg: msg, cause: pe}
}
