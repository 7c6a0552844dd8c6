package pgcall

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// env is a throwaway database with a table, and a login role without
// privileges beyond reading and writing it.
type env struct {
	superURL string
	userURL  string
	role     string
	admin    *pgx.Conn
}

func newEnv(t testing.TB) *env {
	t.Helper()
	dbURL := pgtest.URL(t)
	ctx := context.Background()
	admin := pgtest.Conn(t, dbURL)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{superURL: dbURL, admin: admin}
	e.role, e.userURL = pgtest.Role(t, dbURL)
	if _, err := admin.Exec(ctx, fmt.Sprintf(`
CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO t SELECT g, 'row' || g FROM generate_series(1, 150) g;
CREATE TYPE mood AS ENUM ('ok', 'sad');
GRANT SELECT, INSERT, UPDATE, DELETE ON t TO %[1]s;
GRANT CREATE, TEMPORARY ON DATABASE %[2]s TO %[1]s;`, e.role, pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize())); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return e
}

func (e *env) open(t testing.TB, cfg Config) *Pool {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = e.userURL
	}
	p, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// rows collects a result as text.
type rows struct {
	desc    Description
	formats []int16
	got     []string
	failAt  int // Row fails at this row (1-based); 0: never
	descErr error
}

func (r *rows) Describe(d Description) ([]int16, error) {
	r.desc = d
	if r.descErr != nil {
		return nil, r.descErr
	}
	return r.formats, nil
}

func (r *rows) Row(values [][]byte) error {
	var parts []string
	for i, v := range values {
		switch {
		case v == nil:
			parts = append(parts, "NULL")
		case i < len(r.formats) && r.formats[i] == pgtype.BinaryFormatCode:
			var n int32
			if err := r.desc.TypeMap.Scan(r.desc.Fields[i].DataTypeOID, pgtype.BinaryFormatCode, v, &n); err != nil {
				return err
			}
			parts = append(parts, "bin:"+strconv.Itoa(int(n)))
		default:
			parts = append(parts, string(v))
		}
	}
	r.got = append(r.got, strings.Join(parts, ","))
	if r.failAt > 0 && len(r.got) == r.failAt {
		return errors.New("receiver failed")
	}
	return nil
}

var ro = Options{Mode: ReadOnly, Timeout: 10 * time.Second}
var rw = Options{Mode: ReadWrite, Timeout: 10 * time.Second}

func exec(t testing.TB, p *Pool, o Options, sql string, params ...string) (*rows, *Outcome) {
	t.Helper()
	r := &rows{}
	out, err := p.Exec(context.Background(), o, stmt(sql, params...), r)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r, out
}

func stmt(sql string, params ...string) Statement {
	st := Statement{SQL: sql}
	for _, p := range params {
		st.Params = append(st.Params, []byte(p))
	}
	return st
}

func codeOf(err error) mcperr.Code {
	if err == nil {
		return ""
	}
	return mcperr.Wrap(err).Code
}

func TestExecReadOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{ReadOnly: true, MaxConns: 1, ApplicationName: "pgcall-test"})
	r := &rows{formats: []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode, pgtype.TextFormatCode}}
	out, err := p.Exec(context.Background(), ro, Statement{
		SQL:     "SELECT id, name, 'ok'::mood FROM t WHERE id > $1 ORDER BY id",
		Params:  [][]byte{[]byte("140")},
		MaxRows: 5,
	}, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.got, " "); got != "bin:141,row141,ok bin:142,row142,ok bin:143,row143,ok bin:144,row144,ok bin:145,row145,ok" {
		t.Errorf("rows %s", got)
	}
	if !out.Suspended || out.Tag != "" || strings.Join(out.TypeNames, " ") != "int4 text mood" {
		t.Errorf("outcome %+v", out)
	}
	if len(r.desc.ParamOIDs) != 1 || r.desc.ParamOIDs[0] != pgtype.Int4OID || len(r.desc.Fields) != 3 || r.desc.Fields[1].Name != "name" {
		t.Errorf("description %+v", r.desc)
	}

	rs, out := exec(t, p, ro, "SELECT current_setting('application_name'), current_setting('transaction_read_only'), current_setting('statement_timeout')")
	if rs.got[0] != "pgcall-test,on,10s" || out.Tag != "SELECT 1" || out.Suspended {
		t.Errorf("settings %v, outcome %+v", rs.got, out)
	}
	// NULL, no rows, and a statement without a result.
	if rs, _ := exec(t, p, ro, "SELECT NULL::text"); rs.got[0] != "NULL" {
		t.Errorf("null: %v", rs.got)
	}
	if rs, out := exec(t, p, ro, "SELECT 1 WHERE false"); len(rs.got) != 0 || out.Tag != "SELECT 0" {
		t.Errorf("no rows: %v %+v", rs.got, out)
	}
	if rs, out := exec(t, p, ro, "SET LOCAL work_mem = '8MB'"); len(rs.desc.Fields) != 0 || out.Tag != "SET" {
		t.Errorf("no result: %+v %+v", rs.desc, out)
	}
	if _, out := exec(t, p, ro, ""); out.Tag != "" || out.Suspended {
		t.Errorf("empty statement: %+v", out)
	}

	for _, tc := range []struct {
		sql   string
		code  mcperr.Code
		field string
		text  string
	}{
		{"INSERT INTO t VALUES (1000, 'x')", mcperr.PermissionDeny, "", "read-only"},
		{"SELECT 1; DELETE FROM t", mcperr.Validation, "query", "only one SQL statement"},
		{"SELEC 1", mcperr.Validation, "query", "syntax error"},
		{"SELECT nope FROM t", mcperr.Validation, "query", `column "nope" does not exist`},
		{"COMMIT", mcperr.PermissionDeny, "", "transaction control (COMMIT)"},
		{"ROLLBACK", mcperr.PermissionDeny, "", "always rolled back"},
		{"SET TRANSACTION READ WRITE", mcperr.PermissionDeny, "", "SQLSTATE 25001"},
		{"SELECT 1/0", mcperr.Validation, "query", "division by zero"},
	} {
		_, err := p.Exec(context.Background(), ro, stmt(tc.sql), &rows{})
		me := mcperr.Wrap(err)
		if me == nil || me.Code != tc.code || me.Field != tc.field || !strings.Contains(me.Message, tc.text) {
			t.Errorf("%s: %v, want %s on %q containing %q", tc.sql, err, tc.code, tc.field, tc.text)
		}
	}
	var n string
	if err := e.admin.QueryRow(context.Background(), "SELECT count(*)::text FROM t").Scan(&n); err != nil || n != "150" {
		t.Errorf("rows after: %s, %v", n, err)
	}

	// Read-write calls are refused on a read-only pool; so is a call
	// without a timeout.
	if _, err := p.Exec(context.Background(), rw, stmt("SELECT 1"), &rows{}); codeOf(err) != mcperr.PermissionDeny {
		t.Errorf("read-write on a read-only pool: %v", err)
	}
	if _, err := p.Exec(context.Background(), Options{}, stmt("SELECT 1"), &rows{}); codeOf(err) != mcperr.Internal {
		t.Errorf("no timeout: %v", err)
	}
	if err := p.Tx(context.Background(), Options{}, func(context.Context, *pgx.Conn) error { return nil }); codeOf(err) != mcperr.Internal {
		t.Errorf("Tx without a timeout: %v", err)
	}
}

func TestReceiverErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	_, err := p.Exec(context.Background(), ro, stmt("SELECT $1::int, $2::int", "1"), &rows{})
	if me := mcperr.Wrap(err); me.Code != mcperr.Validation || me.Field != "params" || !strings.Contains(me.Message, "takes 2 parameter(s)") {
		t.Errorf("parameter count: %v", err)
	}
	want := mcperr.Invalid("limit", nil, "", "wrong")
	_, err = p.Exec(context.Background(), ro, stmt("SELECT $1::int", "1"), &rows{descErr: want})
	if !errors.Is(err, want) {
		t.Errorf("Describe's error: %v", err)
	}
	r := &rows{failAt: 2}
	_, err = p.Exec(context.Background(), ro, stmt("SELECT g FROM generate_series(1, 10) g"), r)
	if codeOf(err) != mcperr.Internal || len(r.got) != 2 {
		t.Errorf("Row's error: %v after %d rows", err, len(r.got))
	}
	// The connection is still good, and still the same one.
	pid := exec1(t, p, "SELECT pg_backend_pid()")
	if got := exec1(t, p, "SELECT pg_backend_pid()"); got != pid {
		t.Errorf("backend changed %s → %s", pid, got)
	}
}

func exec1(t testing.TB, p *Pool, sql string) string {
	t.Helper()
	r, _ := exec(t, p, ro, sql)
	if len(r.got) != 1 {
		t.Fatalf("%s: %v", sql, r.got)
	}
	return r.got[0]
}

// TestSessionStateDoesNotLeak: on one connection, nothing a call does is
// seen by the next, in either mode.
func TestSessionStateDoesNotLeak(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	const state = `SELECT concat_ws(' ', current_setting('search_path'), current_setting('statement_timeout'),
  current_setting('work_mem'), current_user, current_setting('transaction_read_only'),
  (SELECT count(*) FROM pg_prepared_statements), (SELECT count(*) FROM pg_cursors),
  (SELECT count(*) FROM pg_listening_channels()),
  (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()),
  (SELECT count(*) FROM pg_class WHERE relpersistence = 't'))`
	baseline := exec1(t, p, state)
	pid := exec1(t, p, "SELECT pg_backend_pid()")
	for _, tc := range []struct {
		o   Options
		sql string
	}{
		{ro, "SET search_path TO evil"},
		{ro, "SELECT set_config('statement_timeout', '0', false)"},
		{ro, "SET work_mem = '1GB'"},
		{ro, "LISTEN evil"},
		{ro, "PREPARE evil AS SELECT 1"},
		{ro, "DECLARE evil CURSOR WITH HOLD FOR SELECT 1"},
		{ro, "SELECT pg_advisory_lock(42)"},
		{rw, "SELECT pg_advisory_lock(43)"},
		{rw, "SET SESSION search_path TO evil"},
		{rw, "CREATE TEMP TABLE evil (a int)"},
		{rw, "PREPARE evil AS SELECT 1"},
		{rw, "LISTEN evil"},
	} {
		_, err := p.Exec(context.Background(), tc.o, stmt(tc.sql), &rows{})
		if err != nil && codeOf(err) != mcperr.PermissionDeny {
			t.Errorf("%s %s: %v", tc.o.Mode, tc.sql, err)
		}
		if got := exec1(t, p, state); got != baseline {
			t.Errorf("after %s %q the next call sees %q, want %q", tc.o.Mode, tc.sql, got, baseline)
		}
		var free bool
		if err := e.admin.QueryRow(context.Background(), "SELECT pg_try_advisory_lock(42) AND pg_try_advisory_lock(43)").Scan(&free); err != nil || !free {
			t.Errorf("after %q an advisory lock is still held (%v)", tc.sql, err)
		}
		if _, err := e.admin.Exec(context.Background(), "SELECT pg_advisory_unlock_all()"); err != nil {
			t.Fatal(err)
		}
	}
	if got := exec1(t, p, "SELECT pg_backend_pid()"); got != pid {
		t.Errorf("the backend changed (%s → %s): the test did not reuse one session", pid, got)
	}
}

// TestWriteFailedAfterItsStatement: when what runs after a write's
// statement in its transaction fails (here the lookup of its result's type
// names, which the role may no longer read), the transaction cannot commit:
// the call says so instead of reporting the write made.
func TestWriteFailedAfterItsStatement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	exec1(t, p, "SELECT 1") // connected and checked before the catalog is closed
	if _, err := e.admin.Exec(context.Background(), "REVOKE SELECT ON pg_catalog.pg_type FROM PUBLIC"); err != nil {
		t.Fatal(err)
	}
	for i, st := range []Statement{
		stmt("INSERT INTO t VALUES (2001, 'x') RETURNING 'ok'::mood"),
		prepared("INSERT INTO t VALUES (2002, 'x') RETURNING 'ok'::mood"),
	} {
		out, err := p.Exec(context.Background(), rw, st, &rows{})
		if codeOf(err) != mcperr.Upstream || !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("statement %d: %+v, %v; want an error saying nothing was written", i, out, err)
		}
	}
	var n int
	if err := e.admin.QueryRow(context.Background(), "SELECT count(*) FROM t WHERE id > 2000").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows written (%v), want none", n, err)
	}
}

func TestExecReadWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	r, out := exec(t, p, rw, "INSERT INTO t VALUES ($1, $2) RETURNING id", "1000", "new")
	if r.got[0] != "1000" || out.Tag != "INSERT 0 1" {
		t.Errorf("insert: %v %+v", r.got, out)
	}
	// A failed statement is rolled back; so is one whose rows the receiver
	// refused.
	if _, err := p.Exec(context.Background(), rw, stmt("INSERT INTO t VALUES (1000, 'dup')"), &rows{}); codeOf(err) != mcperr.Validation ||
		!strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := p.Exec(context.Background(), rw, stmt("UPDATE t SET name = 'changed' RETURNING id"), &rows{failAt: 1}); err == nil {
		t.Error("the receiver's error was lost")
	}
	// Transaction control: refused, and nothing else ran with it.
	for _, sql := range []string{"COMMIT", "ROLLBACK", "BEGIN"} {
		if _, err := p.Exec(context.Background(), rw, stmt(sql), &rows{}); codeOf(err) != mcperr.PermissionDeny ||
			!strings.Contains(err.Error(), "committed when the statement succeeds") {
			t.Errorf("%s: %v", sql, err)
		}
	}
	// A MaxRows stop still commits the whole statement.
	r, out = exec(t, p, rw, "UPDATE t SET name = 'x' || id WHERE id <= 10 RETURNING id")
	if len(r.got) != 10 || out.Tag != "UPDATE 10" {
		t.Errorf("update: %d rows, %+v", len(r.got), out)
	}
	var got string
	if err := e.admin.QueryRow(context.Background(),
		"SELECT count(*) || ' ' || count(*) FILTER (WHERE name = 'changed') || ' ' || count(*) FILTER (WHERE name LIKE 'x%') FROM t").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "151 0 10" {
		t.Errorf("table after: %s", got)
	}
	// A deferred constraint fails at COMMIT: the statement is reported
	// failed and nothing is kept.
	if _, err := e.admin.Exec(context.Background(), `CREATE TABLE d (a int UNIQUE DEFERRABLE INITIALLY DEFERRED);
GRANT ALL ON d TO `+e.role); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(context.Background(), rw, stmt("INSERT INTO d VALUES (1), (1)"), &rows{}); err == nil ||
		!strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("deferred violation: %v", err)
	}
	// COPY FROM STDIN is refused, and the connection is not reused.
	pid := exec1(t, p, "SELECT pg_backend_pid()")
	if _, err := p.Exec(context.Background(), rw, stmt("COPY t FROM STDIN"), &rows{}); codeOf(err) != mcperr.Validation {
		t.Errorf("copy from stdin: %v", err)
	}
	if got := exec1(t, p, "SELECT pg_backend_pid()"); got == pid {
		t.Error("the connection of a COPY FROM STDIN was reused")
	}
	// COPY TO STDOUT runs (its data is not rows).
	if r, out := exec(t, p, rw, "COPY (SELECT 1) TO STDOUT"); len(r.got) != 0 || out.Tag != "COPY 1" {
		t.Errorf("copy to stdout: %v %+v", r.got, out)
	}
}

func TestTx(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	ctx := context.Background()
	count := func() (n int) {
		if err := e.admin.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var ro1 string
	err := p.Tx(ctx, ro, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT current_setting('transaction_read_only') || ' ' || count(*) FROM t WHERE id < $1", 5).Scan(&ro1)
	})
	if err != nil || ro1 != "on 4" {
		t.Errorf("read-only Tx: %q, %v", ro1, err)
	}
	err = p.Tx(ctx, ro, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "DELETE FROM t")
		return err
	})
	if codeOf(err) != mcperr.PermissionDeny || count() != 150 {
		t.Errorf("delete in a read-only Tx: %v, %d rows", err, count())
	}
	if err := p.Tx(ctx, rw, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "DELETE FROM t WHERE id > 100")
		return err
	}); err != nil || count() != 100 {
		t.Errorf("read-write Tx: %v, %d rows", err, count())
	}
	mine := mcperr.New(mcperr.NotFound, "no such thing")
	if err := p.Tx(ctx, rw, func(ctx context.Context, c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "DELETE FROM t"); err != nil {
			return err
		}
		return mine
	}); err != mine || count() != 100 {
		t.Errorf("failed read-write Tx: %v, %d rows", err, count())
	}
	if err := p.Tx(ctx, rw, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "COMMIT")
		return err
	}); codeOf(err) != mcperr.Internal {
		t.Errorf("Tx that ends its transaction: %v", err)
	}
	// A deferred violation fails the commit.
	if _, err := e.admin.Exec(ctx, "CREATE TABLE d (a int UNIQUE DEFERRABLE INITIALLY DEFERRED); GRANT ALL ON d TO "+e.role); err != nil {
		t.Fatal(err)
	}
	if err := p.Tx(ctx, rw, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "INSERT INTO d VALUES (1), (1)")
		return err
	}); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("deferred violation at commit: %v", err)
	}
	// Rows left open: the connection is busy, so it is closed.
	pid := exec1(t, p, "SELECT pg_backend_pid()")
	if err := p.Tx(ctx, ro, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Query(ctx, "SELECT g FROM generate_series(1, 100000) g")
		return err
	}); err != nil {
		t.Errorf("Tx with rows left open: %v", err)
	}
	if got := exec1(t, p, "SELECT pg_backend_pid()"); got == pid {
		t.Error("a busy connection was reused")
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	short := Options{Mode: ReadOnly, Timeout: 200 * time.Millisecond}
	_, err := p.Exec(context.Background(), short, stmt("SELECT pg_sleep(10)"), &rows{})
	me := mcperr.Wrap(err)
	if me.Code != mcperr.Timeout || me.Retryable() || !strings.Contains(me.Message, "200ms") || !strings.Contains(me.Message, "narrow the query") {
		t.Errorf("statement timeout: %v", err)
	}
	exec1(t, p, "SELECT 1")

	// The pool's default timeout is the session's own: no SET LOCAL, and a
	// call with another timeout leaves it as it was.
	pd := e.open(t, Config{MaxConns: 1, DefaultTimeout: 200 * time.Millisecond})
	if _, err := pd.Exec(context.Background(), short, stmt("SELECT pg_sleep(10)"), &rows{}); codeOf(err) != mcperr.Timeout {
		t.Errorf("session statement timeout: %v", err)
	}
	const settings = "SELECT current_setting('statement_timeout') || ' ' || current_setting('lock_timeout') || ' ' || current_setting('idle_in_transaction_session_timeout')"
	if got := exec1(t, pd, settings); got != "10s 9s 15s" {
		t.Errorf("a call's own timeouts: %s", got)
	}
	r, _ := exec(t, pd, short, settings)
	if r.got[0] != "200ms 180ms 5200ms" {
		t.Errorf("the session's timeouts: %s", r.got[0])
	}

	tx, err := e.admin.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(context.Background(), "LOCK TABLE t IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	// The lock is met while parsing (the first round trip) or running.
	_, err = p.Exec(context.Background(), short, stmt("SELECT count(*) FROM t"), &rows{})
	if me := mcperr.Wrap(err); me.Code != mcperr.Timeout || !me.Retryable() || !strings.Contains(me.Message, "lock") {
		t.Errorf("lock wait: %v", err)
	}
	err = p.Tx(context.Background(), short, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "SELECT count(*) FROM t")
		return err
	})
	if codeOf(err) != mcperr.Timeout {
		t.Errorf("lock wait in Tx: %v", err)
	}
}

func TestCallerCancels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1})
	pid := exec1(t, p, "SELECT pg_backend_pid()")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := p.Exec(ctx, ro, stmt("SELECT pg_sleep(10)"), &rows{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	// The connection of a cancelled call is not reused: a cancel request
	// may still reach it.
	if got := exec1(t, p, "SELECT pg_backend_pid()"); got == pid {
		t.Error("the cancelled call's connection was reused")
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := p.Tx(ctx, ro, func(context.Context, *pgx.Conn) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Tx with a cancelled context: %v", err)
	}
}

// TestDeadConnections: connections that died while idle (the server
// restarted, an administrator ended them) cost no call an error.
func TestDeadConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 3})
	var wg sync.WaitGroup
	for range 3 { // open three connections
		wg.Add(1)
		go func() {
			defer wg.Done()
			exec(t, p, ro, "SELECT pg_sleep(0.2)")
		}()
	}
	wg.Wait()
	kill := func() {
		t.Helper()
		var n int
		if err := e.admin.QueryRow(context.Background(),
			"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1", e.role).Scan(&n); err != nil || n == 0 {
			t.Fatalf("terminating the pool's sessions: %d, %v", n, err)
		}
		time.Sleep(100 * time.Millisecond) // let the server close them
	}
	kill()
	exec1(t, p, "SELECT 1")
	kill()
	if err := p.Tx(context.Background(), ro, func(context.Context, *pgx.Conn) error { return nil }); err != nil {
		t.Errorf("Tx on dead connections: %v", err)
	}
	// A session that dies under its statement is reported, not retried.
	_, err := p.Exec(context.Background(), ro, stmt("SELECT pg_terminate_backend(pg_backend_pid())"), &rows{})
	if me := mcperr.Wrap(err); me.Code != mcperr.Upstream || !strings.HasPrefix(me.Message, "database unavailable: ") ||
		!strings.Contains(me.Message, "57P01") {
		t.Errorf("terminated session: %v", err)
	}
}

func TestPrivilegedRole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	refused := e.open(t, Config{URL: e.superURL})
	_, err := refused.Exec(context.Background(), ro, stmt("SELECT 1"), &rows{})
	if codeOf(err) != mcperr.PermissionDeny || !strings.Contains(err.Error(), "dedicated role") {
		t.Errorf("superuser: %v", err)
	}
	if err := refused.Check(context.Background()); codeOf(err) != mcperr.PermissionDeny {
		t.Errorf("Check as superuser: %v", err)
	}
	if err := refused.Tx(context.Background(), ro, func(context.Context, *pgx.Conn) error { return nil }); codeOf(err) != mcperr.PermissionDeny {
		t.Errorf("Tx as superuser: %v", err)
	}
	allowed := e.open(t, Config{URL: e.superURL, AllowPrivileged: true})
	if err := allowed.Check(context.Background()); err != nil {
		t.Errorf("allowed superuser: %v", err)
	}
	// Even a superuser cannot write in a read-only call.
	if _, err := allowed.Exec(context.Background(), ro, stmt("DELETE FROM t"), &rows{}); codeOf(err) != mcperr.PermissionDeny {
		t.Errorf("superuser delete: %v", err)
	}
	for _, member := range []string{"pg_execute_server_program", "pg_write_server_files", "pg_read_server_files"} {
		if _, err := e.admin.Exec(context.Background(), "GRANT "+member+" TO "+e.role); err != nil {
			t.Fatal(err)
		}
		p := e.open(t, Config{})
		if err := p.Check(context.Background()); codeOf(err) != mcperr.PermissionDeny {
			t.Errorf("member of %s: %v", member, err)
		}
		if _, err := e.admin.Exec(context.Background(), "REVOKE "+member+" FROM "+e.role); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.open(t, Config{}).Check(context.Background()); err != nil {
		t.Errorf("plain role: %v", err)
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, err := url.Parse(e.userURL)
	if err != nil {
		t.Fatal(err)
	}
	wrongPW := *u
	wrongPW.User = url.UserPassword("nobody_here", "hunter2")
	noDB := *u
	noDB.Path = "/no_such_db"
	for _, tc := range []struct {
		name, url string
		code      mcperr.Code
		text      string
	}{
		{"refused", "postgres://someone:hunter2@127.0.0.1:1/secretdb?sslmode=disable&connect_timeout=2", mcperr.Upstream,
			`database unavailable: cannot connect to PostgreSQL at 127.0.0.1:1, database "secretdb": connection refused`},
		{"no such host", "postgres://someone:hunter2@no-such-host.invalid:5432/secretdb?connect_timeout=2", mcperr.Upstream,
			"the host name does not resolve"},
		{"unknown role", wrongPW.String(), mcperr.Authentication, "refused the credentials"},
		{"no database", noDB.String(), mcperr.Upstream, "has no such database"},
		{"tls", strings.Replace(e.userURL, "sslmode=disable", "sslmode=require", 1), mcperr.Upstream, "TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Open(Config{URL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for name, call := range map[string]func() error{
				"check": func() error { return p.Check(context.Background()) },
				"exec":  func() error { _, err := p.Exec(context.Background(), ro, stmt("SELECT 1"), &rows{}); return err },
				"tx": func() error {
					return p.Tx(context.Background(), ro, func(context.Context, *pgx.Conn) error { return nil })
				},
			} {
				err := call()
				if codeOf(err) != tc.code || !strings.Contains(err.Error(), tc.text) {
					t.Errorf("%s: %v, want %s containing %q", name, err, tc.code, tc.text)
				}
				for _, secret := range []string{"hunter2", "someone", "nobody_here"} {
					if err != nil && strings.Contains(err.Error(), secret) {
						t.Errorf("%s: the error shows %q: %v", name, secret, err)
					}
				}
			}
		})
	}
	for _, bad := range []string{"postgres://u:hunter2@[::1:5432/db", "postgres://u:hunter2@host/db?sslmode=bogus"} {
		if _, err := Open(Config{URL: bad}); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): %v", bad, err)
		}
	}
}

func TestRowTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 1, MaxMessageBytes: 1 << 16})
	_, err := p.Exec(context.Background(), ro, stmt("SELECT repeat('x', 1 << 20)"), &rows{})
	if codeOf(err) != mcperr.Validation || !errors.Is(err, ErrRowTooLarge) {
		t.Errorf("huge row: %v", err)
	}
	exec1(t, p, "SELECT 1")
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.open(t, Config{MaxConns: 3})
	if p.MaxConns() != 3 {
		t.Fatalf("MaxConns %d", p.MaxConns())
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 8 {
				id := strconv.Itoa(i*8 + j + 1)
				switch j % 3 {
				case 0:
					r := &rows{}
					if _, err := p.Exec(context.Background(), ro, stmt("SELECT id FROM t WHERE id = $1", id), r); err != nil || r.got[0] != id {
						errs <- fmt.Errorf("select %s: %v %v", id, r.got, err)
					}
				case 1:
					if _, err := p.Exec(context.Background(), ro, stmt("SET search_path TO evil"), &rows{}); err != nil {
						errs <- err
					}
				case 2:
					if err := p.Tx(context.Background(), ro, func(ctx context.Context, c *pgx.Conn) error {
						var sp string
						if err := c.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&sp); err != nil {
							return err
						}
						if sp != `"$user", public` {
							return fmt.Errorf("search_path leaked: %s", sp)
						}
						return nil
					}); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDefaults(t *testing.T) {
	p, err := Open(Config{URL: "postgres://u:secret@db.example:6543/app"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.MaxConns() != DefaultMaxConns || p.Target().String() != `db.example:6543, database "app"` {
		t.Errorf("defaults: %d, %s", p.MaxConns(), p.Target())
	}
	if got := (Target{Host: "/var/run/postgresql", Port: 5432, Database: "x"}).String(); got != `/var/run/postgresql:5432, database "x"` {
		t.Errorf("socket target: %s", got)
	}
	if ReadOnly.String() != "read-only" || ReadWrite.String() != "read-write" {
		t.Error("mode names")
	}
	if got := p.beginSQL(Options{Mode: ReadOnly, Timeout: time.Microsecond}); got != "BEGIN READ ONLY; SET LOCAL statement_timeout = 1; "+
		"SET LOCAL lock_timeout = 1; SET LOCAL idle_in_transaction_session_timeout = 5001; SELECT 1" {
		t.Errorf("begin: %s", got)
	}
	if got := p.beginSQL(Options{Mode: ReadWrite, Timeout: time.Second}); got != "BEGIN READ WRITE; SET LOCAL statement_timeout = 1000; "+
		"SET LOCAL lock_timeout = 900; SET LOCAL idle_in_transaction_session_timeout = 6000" {
		t.Errorf("begin: %s", got)
	}
	p.cfg.DefaultTimeout = time.Second
	if got := p.beginSQL(Options{Mode: ReadOnly, Timeout: time.Second}); got != "BEGIN READ ONLY; SELECT 1" {
		t.Errorf("begin with the session's timeout: %s", got)
	}
}

func TestPgErrorClasses(t *testing.T) {
	for code, want := range map[string]mcperr.Code{
		"57014": mcperr.Timeout, "55P03": mcperr.Timeout, "25P03": mcperr.Timeout,
		"25006": mcperr.PermissionDeny, "42501": mcperr.PermissionDeny, "25001": mcperr.PermissionDeny,
		"28000": mcperr.PermissionDeny, "3B001": mcperr.PermissionDeny, "2D000": mcperr.PermissionDeny,
		"40001": mcperr.Upstream, "40P01": mcperr.Upstream, "53300": mcperr.Upstream, "55006": mcperr.Upstream,
		"08006": mcperr.Upstream, "57P01": mcperr.Upstream, "58030": mcperr.Upstream, "XX000": mcperr.Upstream,
		"42601": mcperr.Validation, "42P01": mcperr.Validation, "22P02": mcperr.Validation, "P0001": mcperr.Validation,
	} {
		e := pgError(&pgconn.PgError{Code: code, Message: "m"}, ro, "query")
		if e.Code != want {
			t.Errorf("SQLSTATE %s: %s, want %s", code, e.Code, want)
		}
	}
	e := pgError(&pgconn.PgError{Code: "42601", Message: "cannot insert multiple commands into a prepared statement"}, ro, "sql")
	if e.Code != mcperr.Validation || e.Field != "sql" || !strings.HasPrefix(e.Message, "only one") {
		t.Errorf("multiple commands: %+v", e)
	}
	e = pgError(&pgconn.PgError{Code: "22P02", Message: "bad", Detail: "d", Hint: "h", Position: 7}, ro, "query")
	if e.Message != "PostgreSQL: bad (at character 7); detail: d; hint: h [SQLSTATE 22P02]" {
		t.Errorf("message: %q", e.Message)
	}
	if e := pgError(&pgconn.PgError{Code: "25006", Message: "m"}, rw, ""); !strings.Contains(e.Message, "the database is read-only") {
		t.Errorf("read-only database: %q", e.Message)
	}
}

func TestFailureClasses(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Err: errors.New("x")}, "connection failed"},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), "timed out"},
		{fmt.Errorf("read: %w", net.ErrClosed), "closed the connection"},
		{errors.New("tls: handshake failure"), "TLS"},
		{&net.DNSError{Err: "no such host", Name: "h"}, "does not resolve"},
	} {
		if got := failure(tc.err); !strings.Contains(got, tc.want) {
			t.Errorf("failure(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
