package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

type sqliteBackend struct {
	db  *sql.DB
	cfg Config
}

// connector opens connections with our own Driver value, so the connection
// hook that installs the authorizer applies to our connections only.
type connector struct {
	drv *sqlite.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// openSQLite opens the SQLite file at path read-only; create makes it
// (empty, 0600, in a 0700 directory) when it is missing, else a missing file
// is an error. It reports whether the database has no table or view.
func openSQLite(cfg Config, path string, create bool) (*sqliteBackend, bool, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, false, fmt.Errorf("the SQLite database path: %w", err)
	}
	if create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, false, fmt.Errorf("creating the embedded database directory: %w", err)
		}
		// mode=ro never creates the file; an empty file is an empty database.
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("creating the embedded database: %w", err)
		}
		_ = f.Close()
	} else if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, false, fmt.Errorf("the SQLite database %s cannot be opened: %w", path, err)
	}

	drv := &sqlite.Driver{}
	drv.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		reg, ok := c.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver offers no authorizer")
		}
		return reg.RegisterAuthorizer(baseAuthorizer)
	})
	// mode=ro: SQLite opens the file read-only, so every write fails with
	// SQLITE_READONLY whatever the statement; query_only and defensive mode
	// add their own refusals (and the authorizer stops PRAGMA query_only=0).
	u := url.URL{Scheme: "file", Path: path,
		RawQuery: "mode=ro&_defensive=1&_pragma=query_only(1)&_pragma=busy_timeout(5000)"}
	db := sql.OpenDB(connector{drv: drv, dsn: u.String()})
	db.SetMaxOpenConns(cfg.MaxConns)
	db.SetMaxIdleConns(cfg.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view')").Scan(&n); err != nil {
		_ = db.Close()
		return nil, false, fmt.Errorf("opening the SQLite database %s: %w", path, err)
	}
	if err := checkWholeStatement(db); err != nil {
		_ = db.Close()
		return nil, false, err
	}
	return &sqliteBackend{db: db, cfg: cfg}, n == 0, nil
}

func (b *sqliteBackend) close()                { _ = b.db.Close() }
func (b *sqliteBackend) defaultSchema() string { return "main" }

// infoPragmas only report on the schema or the file; their argument, if
// any, names a table, an index or a check depth, never a new setting.
var infoPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_info": true, "index_xinfo": true,
	"index_list": true, "foreign_key_list": true, "foreign_key_check": true, "database_list": true,
	"collation_list": true, "function_list": true, "module_list": true, "pragma_list": true,
	"compile_options": true, "integrity_check": true, "quick_check": true,
}

// readPragmas are settings that may be read (no argument) but not set.
var readPragmas = map[string]bool{
	"user_version": true, "application_id": true, "schema_version": true, "data_version": true,
	"page_count": true, "page_size": true, "freelist_count": true, "max_page_count": true, "encoding": true,
	"journal_mode": true, "auto_vacuum": true, "foreign_keys": true, "query_only": true,
	"recursive_triggers": true, "cache_size": true, "busy_timeout": true, "synchronous": true,
}

// deniedFunctions could load code or change global state.
var deniedFunctions = map[string]bool{"load_extension": true, "fts3_tokenizer": true}

// baseAuthorizer lets SQLite compile reads only: SELECT, reading columns,
// functions (but a few) and informational PRAGMAs. Everything else — every
// write, DDL, ATTACH, transaction control, SAVEPOINT, ANALYZE, REINDEX,
// setting a PRAGMA — is refused while it compiles, before it can run.
func baseAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if deniedFunctions[strings.ToLower(arg2)] {
			return sqlite.AuthorizerDeny
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		name := strings.ToLower(arg1)
		if infoPragmas[name] || (readPragmas[name] && arg2 == "") {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// queryPolicy is the authorizer of one database_query call: baseAuthorizer,
// noting whether the statement reads anything at all. VACUUM (INTO), for
// one, compiles without consulting the authorizer; a statement that never
// asks to SELECT or to read a PRAGMA is not a query and is refused before
// it runs.
type queryPolicy struct {
	isQuery bool
}

func (p *queryPolicy) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, db, trigger string) sqlite.AuthorizerReturnCode {
	r := baseAuthorizer(action, arg1, arg2, db, trigger)
	if r == sqlite.AuthorizerOK && (action == sqlite.AuthSelect || action == sqlite.AuthPragma) {
		p.isQuery = true
	}
	return r
}

// errDriverChanged reports a modernc.org/sqlite whose prepared statements
// no longer look as wholeStatement expects; every query is refused then.
var errDriverChanged = errors.New("the SQLite driver's prepared statements changed shape: " +
	"update wholeStatement in servers/devtools/internal/database/sqlite.go")

// wholeStatement reports whether preparing st consumed all of its SQL text
// as exactly one statement. modernc.org/sqlite calls sqlite3_prepare_v2 on
// the text and keeps the statement handle (the unexported field pstmt) only
// when SQLite left no tail; for a multi-statement script, or text with no
// statement at all, it keeps none and would run the statements one by one
// at execution. The driver offers no other way to see the tail, hence the
// reflection; checkWholeStatement pins this behaviour when the database is
// opened, so a driver upgrade that changes it stops the embedded database
// from opening (loudly) instead of letting scripts through.
func wholeStatement(st driver.Stmt) (bool, error) {
	v := reflect.ValueOf(st)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false, errDriverChanged
	}
	f := v.Elem().FieldByName("pstmt")
	if !f.IsValid() || f.Kind() != reflect.Uintptr {
		return false, errDriverChanged
	}
	return f.Uint() != 0, nil
}

// checkWholeStatement verifies wholeStatement on a fresh connection.
func checkWholeStatement(db *sql.DB) error {
	conn, err := db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		prep, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return errDriverChanged
		}
		for sql, want := range map[string]bool{"SELECT 1": true, "SELECT 1;": true, "SELECT 1; SELECT 2": false,
			"SELECT 1; -- x": false, "-- x": false} {
			st, err := prep.PrepareContext(context.Background(), sql)
			if err != nil {
				return err
			}
			got, err := wholeStatement(st)
			_ = st.Close()
			if err != nil {
				return err
			}
			if got != want {
				return errDriverChanged
			}
		}
		return nil
	})
}

// errMultiStatement is returned as a fresh value each time: the kit may
// record a cause on it.
func errMultiStatement() error {
	return invalid("query", "only one SQL statement is allowed per call (remove everything after the first statement's semicolon)")
}

func (b *sqliteBackend) query(ctx context.Context, q Query, limit int, timeout time.Duration) (*Result, error) {
	args := make([]driver.NamedValue, len(q.Params))
	for i, p := range q.Params {
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: sqliteParam(p)}
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := b.db.Conn(tctx)
	if err != nil {
		return nil, b.mapErr(ctx, tctx, err, timeout)
	}
	defer conn.Close()
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return nil, b.mapErr(ctx, tctx, err, timeout)
	}
	// No string or blob may outgrow the result cap: a value that large could
	// never be returned, and building one (randomblob(500e6)) would hold the
	// memory for as long as SQLite ignores the interrupt.
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, valueLengthLimit(b.cfg.MaxResultBytes)); err != nil {
		return nil, b.mapErr(ctx, tctx, err, timeout)
	}
	res := &Result{}
	var qerr error
	err = conn.Raw(func(dc any) error {
		reg, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver offers no authorizer")
		}
		pol := &queryPolicy{}
		if err := reg.RegisterAuthorizer(pol.authorize); err != nil {
			return err
		}
		qerr = b.runQuery(tctx, dc, pol, q.SQL, args, limit, res)
		if err := reg.RegisterAuthorizer(baseAuthorizer); err != nil {
			return driver.ErrBadConn // never pool a connection without the base policy
		}
		return nil
	})
	if err == nil {
		err = qerr
	}
	if err != nil {
		return nil, b.mapErr(ctx, tctx, err, timeout)
	}
	return res, nil
}

func (b *sqliteBackend) runQuery(ctx context.Context, dc any, pol *queryPolicy, query string,
	args []driver.NamedValue, limit int, res *Result) error {
	prep, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return errors.New("the SQLite driver cannot prepare")
	}
	st, err := prep.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	defer st.Close()
	whole, err := wholeStatement(st)
	switch {
	case err != nil:
		return err
	case !whole && pol.isQuery:
		return errMultiStatement()
	case !whole:
		return invalid("query", "the query is empty, or is not one query")
	case !pol.isQuery:
		return invalid("query", "not a query: only SELECT, WITH, VALUES, EXPLAIN and informational PRAGMAs are allowed")
	}
	sq, ok := st.(driver.StmtQueryContext)
	if !ok {
		return errors.New("the SQLite driver cannot query")
	}
	rows, err := sq.QueryContext(ctx, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	names := rows.Columns()
	res.Columns = make([]Column, len(names))
	typed, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	for i, n := range names {
		res.Columns[i].Name = n
		if typed != nil {
			res.Columns[i].Type = typed.ColumnTypeDatabaseTypeName(i)
		}
	}
	dest := make([]driver.Value, len(names))
	row := make([]any, len(names))
	var size int64
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(res.Rows) == limit {
			res.Truncated, res.TruncatedBy = true, "limit"
			break
		}
		for i, v := range dest {
			row[i] = jsonValue(v, timeZoned)
		}
		fits, err := appendRow(&res.Rows, &size, b.cfg.MaxResultBytes, row)
		if err != nil {
			return internalError{err}
		}
		if !fits {
			res.Truncated, res.TruncatedBy = true, "max_bytes"
			break
		}
	}
	return nil
}

// sqliteParam binds a JSON scalar: integers as INTEGER, other numbers as
// REAL, true/false as 1/0, strings as TEXT, null as NULL. An integer too
// large for 64 bits is bound as its text.
func sqliteParam(p any) any {
	n, ok := p.(json.Number)
	if !ok {
		return p
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	if !strings.ContainsAny(string(n), ".eE") {
		return string(n)
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return string(n)
}

func (b *sqliteBackend) schemaExists(ctx context.Context, schema string) error {
	if schema == "temp" { // always there, listed only once used
		return nil
	}
	var n int
	if err := b.db.QueryRowContext(ctx, "SELECT count(*) FROM pragma_database_list WHERE name = ?", schema).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return notFound("schema", "schema %q does not exist (an SQLite database has \"main\" and \"temp\")", schema)
	}
	return nil
}

func (b *sqliteBackend) tables(ctx context.Context, schema string) ([]Table, error) {
	tctx, cancel := context.WithTimeout(ctx, b.cfg.StatementTimeout)
	defer cancel()
	if err := b.schemaExists(tctx, schema); err != nil {
		return nil, b.mapErr(ctx, tctx, err, b.cfg.StatementTimeout)
	}
	rows, err := b.db.QueryContext(tctx, `SELECT name, type FROM pragma_table_list
WHERE schema = ? AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`, schema)
	if err != nil {
		return nil, b.mapErr(ctx, tctx, err, b.cfg.StatementTimeout)
	}
	defer rows.Close()
	var out []Table
	for rows.Next() {
		var t Table
		if err := rows.Scan(&t.Name, &t.Type); err != nil {
			return nil, b.mapErr(ctx, tctx, err, b.cfg.StatementTimeout)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, b.mapErr(ctx, tctx, err, b.cfg.StatementTimeout)
	}
	return out, nil
}

func (b *sqliteBackend) schema(ctx context.Context, schema, table string) (*TableSchema, error) {
	tctx, cancel := context.WithTimeout(ctx, b.cfg.StatementTimeout)
	defer cancel()
	out, err := b.describe(tctx, schema, table)
	if err != nil {
		return nil, b.mapErr(ctx, tctx, err, b.cfg.StatementTimeout)
	}
	return out, nil
}

func (b *sqliteBackend) describe(ctx context.Context, schema, table string) (*TableSchema, error) {
	if err := b.schemaExists(ctx, schema); err != nil {
		return nil, err
	}
	out := &TableSchema{Schema: schema}
	err := b.db.QueryRowContext(ctx, `SELECT name, type FROM pragma_table_list
WHERE schema = ? AND name = ? COLLATE NOCASE`, schema, table).Scan(&out.Table, &out.Type)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("table", "table %q does not exist in schema %q", table, schema)
	}
	if err != nil {
		return nil, err
	}
	rows, err := b.db.QueryContext(ctx, `SELECT cid, name, type, "notnull", dflt_value, pk, hidden
FROM pragma_table_xinfo(?, ?) WHERE hidden <> 1 ORDER BY cid`, out.Table, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c ColumnInfo
		var notNull bool
		var hidden int
		var def sql.NullString
		if err := rows.Scan(&c.Position, &c.Name, &c.Type, &notNull, &def, &c.PrimaryKey, &hidden); err != nil {
			return nil, err
		}
		c.Position++ // cid is 0-based
		c.Nullable = !notNull
		if def.Valid {
			c.Default = &def.String
		}
		c.Generated = hidden == 2 || hidden == 3
		out.Columns = append(out.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out.PrimaryKey = primaryKey(out.Columns)
	return out, nil
}

// mapErr turns a driver error into an *mcperr.Error whose message is safe
// to show: SQLite's own message where it helps, never the file's path.
func (b *sqliteBackend) mapErr(parent, ctx context.Context, err error, timeout time.Duration) error {
	var me *mcperr.Error
	if errors.As(err, &me) {
		return me
	}
	var ie internalError
	if errors.As(err, &ie) {
		return ie.error
	}
	if parent.Err() != nil {
		return parent.Err()
	}
	timedOut := mcperr.New(mcperr.Timeout, "the statement did not finish within its %v timeout and was interrupted; "+
		"narrow the query (a WHERE clause, a LIMIT, an indexed column)", timeout).WithCause(err).WithRetryable(false)
	if ctx.Err() != nil {
		return timedOut
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		// The driver's bind errors: "missing argument with index N" for ?,
		// "missing named argument %q" for ?N, $N, :name and @name.
		if msg := err.Error(); strings.Contains(msg, "missing argument") || strings.Contains(msg, "missing named argument") {
			return invalid("params", "the statement has more parameters than params has values").WithCause(err)
		}
		return mcperr.New(mcperr.Upstream, "database unavailable: the SQLite database could not be used").WithCause(err)
	}
	msg := "SQLite: " + se.Error()
	if strings.Contains(se.Error(), "not authorized") { // the authorizer said no (functions report SQLITE_ERROR)
		return mcperr.New(mcperr.PermissionDeny, "refused, queries are read-only: the statement would write, change a setting, "+
			"attach a database, control a transaction or call a forbidden function (%s)", msg).WithCause(err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_AUTH, sqlite3.SQLITE_READONLY:
		return mcperr.New(mcperr.PermissionDeny, "refused, queries are read-only (%s)", msg).WithCause(err)
	case sqlite3.SQLITE_INTERRUPT:
		return timedOut
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return mcperr.New(mcperr.Upstream, "the database is locked by another program; retrying may succeed (%s)", msg).
			WithCause(err).WithRetryable(true)
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB,
		sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_FULL, sqlite3.SQLITE_PERM, sqlite3.SQLITE_INTERNAL:
		// SQLite's text for these may name the file; its code does not.
		return mcperr.New(mcperr.Upstream, "database unavailable: the SQLite database could not be read (%s)",
			sqlite.ErrorCodeString[se.Code()]).WithCause(err)
	}
	return invalid("query", "%s", msg).WithCause(err)
}

// valueLengthLimit is SQLite's per-value length cap for a result cap: the cap
// itself (at least 1 MiB), within SQLite's own int range.
func valueLengthLimit(maxResultBytes int64) int {
	const floor, ceiling = 1 << 20, 1<<31 - 1
	switch {
	case maxResultBytes < floor:
		return floor
	case maxResultBytes > ceiling:
		return ceiling
	}
	return int(maxResultBytes)
}
