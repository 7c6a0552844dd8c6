// Package pgcall runs an agent's calls against PostgreSQL under one
// discipline, shared by every server that lets an agent reach a database:
//
//   - One call is one pooled connection and one transaction in the call's
//     mode: READ ONLY (enforced by the database, not by reading the SQL) or
//     READ WRITE. The transaction's statement, lock and
//     idle-in-transaction timeouts are set for that call only (SET LOCAL).
//   - A statement runs alone, through the extended protocol, whose Parse
//     refuses a string holding more than one statement. A statement that ends
//     or replaces the call's transaction (COMMIT, ROLLBACK, PREPARE
//     TRANSACTION…) is reported as refused.
//   - After every call the transaction is rolled back (read-only, or failed)
//     or committed (read-write), and the session is reset with DISCARD ALL,
//     so nothing leaks into the next call: settings, roles, prepared
//     statements, cursors, advisory locks, LISTEN, temporary tables. (A
//     Prepared read is not reset; see below for what ends it instead.) A
//     connection whose reset failed, whose protocol state is unknown, or
//     whose call was cancelled while it ran is closed, never reused.
//   - A role that can run programs or read and write files on the database
//     server (a superuser, or a member of pg_execute_server_program,
//     pg_read_server_files or pg_write_server_files) is refused unless
//     Config.AllowPrivileged is set: such a role can do that even inside a
//     read-only transaction (COPY … TO PROGRAM).
//   - Errors are *mcperr.Error values whose messages are written for the
//     agent: the database's own message where it helps, the host, port and
//     database name when the server cannot be reached, and never the
//     password or the connection URL.
//
// # Round trips
//
// A read-only [Pool.Exec] costs two round trips on the call's critical path.
// The first carries BEGIN with the SET LOCALs (one simple-protocol Query),
// then Parse and Describe of the statement and a Sync; the second carries
// Bind and Execute (at most MaxRows rows) and a Sync, followed in the same
// write by ROLLBACK and DISCARD ALL. The caller gets its result as soon as the
// statement's ReadyForQuery arrives; the replies to ROLLBACK and DISCARD ALL
// are read in the background before the connection returns to the pool, and
// a connection whose reset reply is anything but success is closed. A
// read-write Exec needs a third round trip: COMMIT is sent only once the
// statement's outcome is known.
//
// A Statement marked Prepared (SQL the server wrote itself, never an
// agent's) run read-only is prepared once per connection and kept there,
// and its call ends with ROLLBACK and pg_advisory_unlock_all(): no DISCARD
// ALL, which would drop it. The transaction's opening (BEGIN READ ONLY, and
// the call's timeouts for the transaction when they are not the session's)
// is pipelined in front of Bind and Execute, and the ROLLBACK and unlock in
// front of the Sync, so such a call costs one round trip once its
// statement is prepared on the connection (two the first time: Parse and
// Describe, then Bind and Execute), and the server plans it from its plan
// cache instead of parsing and planning it afresh.
//
// The database's own code a Prepared read reaches (a view's function) may
// still change the session. ROLLBACK undoes settings (set_config(…, false)
// too), roles and custom variables; the unlock releases the session-level
// advisory locks ROLLBACK keeps. A read-only transaction can take no
// sequence value, create no temporary table, and its LISTEN never takes
// effect. What remains: statements the code prepared or deallocated (SQL
// PREPARE and DEALLOCATE ignore ROLLBACK) — a lost statement is prepared
// again; after a read that failed (the unlock skipped or lost), the
// connection's records are checked against the statements its session
// holds, in the background with the rollback, so the next call neither
// retries nor binds a name the code took. A read that succeeds is not
// checked: code that deallocates one of the connection's cached statements
// and prepares another under its name, then returns normally, has the next
// call on that connection bind its statement (as code that replaces the
// unlock keeps its advisory locks) — the database's code is the operator's,
// and the check measured too dear to make after every read: the unlock also
// asking whether the session holds a statement prepared with SQL PREPARE
// added ~25 µs (28%) to each read on a connection holding 60 statements,
// since PostgreSQL lists them all to answer. A dblink
// connection the code opened is not closed either (DISCARD ALL does not
// close one). A change the server reports (time zone, date style…)
// closes the connection.
//
// A Prepared write's triggers may change anything, and writes are not the
// hot path: a Prepared write, committed or rolled back, is reset with
// DISCARD ALL after it, off the critical path, as agent SQL is. The reset
// would drop its statement, so it is not prepared at all: it runs as agent
// SQL does, in three round trips (BEGIN, Parse and Describe; Bind and
// Execute; COMMIT once the statement's outcome is known), and its
// connection's prepared statements are forgotten (its next Prepared call
// prepares again). A connection that serves an agent's SQL is reset with
// DISCARD ALL as always, and its prepared statements are forgotten with it.
//
// When a table's columns change under a prepared statement
// (PostgreSQL's "cached plan must not change result type"), or the
// session lost it or the statement that sets the call's timeouts (the
// database's code ran DEALLOCATE), the call is rolled back and the
// statement prepared again, once, on the same connection — unless the
// call's context ended meanwhile. Should the statement fail so again (or
// the database's code raise those errors), the error is the database's,
// UPSTREAM_ERROR and retryable: a Prepared statement's SQL is the
// server's, not the caller's.
//
// The pool does not ping a connection before handing it out (that would be a
// third round trip after every idle second). A connection that turns out to
// be dead during the first round trip, which runs nothing of the caller's,
// is dropped with the rest of the idle pool and the call is retried once on a
// new connection.
package pgcall

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// DefaultMaxConns is the pool size when Config.MaxConns is zero. An agent
// host commonly runs several agents or sub-agents against one server; with 8
// concurrent callers a pool of 4 makes half of them wait for a connection
// (see the package benchmarks), while idle connections cost the database
// little and are closed after IdleTimeout.
const DefaultMaxConns = 8

// IdleTimeout is how long an unused connection stays open.
const IdleTimeout = 5 * time.Minute

// DefaultConnectTimeout bounds connecting when the URL sets no
// connect_timeout.
const DefaultConnectTimeout = 10 * time.Second

// backstop is how much longer than its statement timeout a call may take on
// the Go side before its context ends it; the server's own statement_timeout
// normally fires first, which keeps the connection usable.
const backstop = 5 * time.Second

// cancelGrace is how long the server has to answer a cancel request before
// the call breaks off its reads.
const cancelGrace = 2 * time.Second

// cleanupTimeout bounds the background reset and the closing of a broken
// connection.
const cleanupTimeout = 5 * time.Second

// Mode is a call's transaction mode.
type Mode int

const (
	// ReadOnly runs the call in a READ ONLY transaction, always rolled back.
	ReadOnly Mode = iota
	// ReadWrite runs the call in a READ WRITE transaction, committed when the
	// call succeeds.
	ReadWrite
)

// begin is the statement that opens a transaction of the mode.
func (m Mode) begin() string {
	if m == ReadWrite {
		return "BEGIN READ WRITE"
	}
	return "BEGIN READ ONLY"
}

func (m Mode) String() string {
	if m == ReadWrite {
		return "read-write"
	}
	return "read-only"
}

// Config configures a Pool.
type Config struct {
	// URL is a PostgreSQL connection URL (postgres://…) or keyword/value
	// string. It is a secret: it never appears in an error.
	URL string
	// MaxConns caps the open connections (DefaultMaxConns).
	MaxConns int
	// ReadOnly makes every session read-only by default
	// (default_transaction_read_only), a second wall behind the READ ONLY
	// transactions; ReadWrite calls are then refused.
	ReadOnly bool
	// ApplicationName is the session's application_name when the URL sets
	// none.
	ApplicationName string
	// AllowPrivileged lets the pool use a role that can run programs or read
	// and write files on the database server. Refused by default.
	AllowPrivileged bool
	// DefaultTimeout, when set, becomes the session's own statement, lock
	// and idle-in-transaction timeouts, which every call finds in place
	// (DISCARD ALL restores them after agent SQL and writes, ROLLBACK undoes
	// a read's change): a call with this timeout then needs no SET LOCAL,
	// which saves the server three statements per call.
	DefaultTimeout time.Duration
	// MaxMessageBytes caps one protocol message from the server, so one
	// result row (64 MiB when zero). A larger row fails the call with
	// ErrRowTooLarge in its chain.
	MaxMessageBytes int
	// MaxPrepared caps the Prepared statements one connection keeps
	// (DefaultMaxPrepared when zero); the least recently used is closed to
	// make room.
	MaxPrepared int

	// dial, when set, replaces the network dialer (tests count round trips).
	dial pgconn.DialFunc
}

// Target is where a pool connects: safe to log and to show, as it holds no
// user name or password.
type Target struct {
	Host     string
	Port     uint16
	Database string
}

func (t Target) String() string {
	host := t.Host
	if len(host) > 0 && host[0] != '/' {
		host = net.JoinHostPort(host, strconv.Itoa(int(t.Port)))
	} else {
		host += ":" + strconv.Itoa(int(t.Port)) // a Unix socket directory
	}
	return fmt.Sprintf("%s, database %q", host, t.Database)
}

// Pool is a PostgreSQL connection pool that runs calls under the package's
// discipline. It is safe for concurrent use.
type Pool struct {
	pool   *pgxpool.Pool
	cfg    Config
	target Target
	// resets tracks the background resets, so Close can wait for them.
	resets sync.WaitGroup
}

// errPrivilegedRole marks a connection refused because of its role.
var errPrivilegedRole = errors.New("privileged database role")

// ErrRowTooLarge is in the chain of the error of a call whose result holds
// a row larger than Config.MaxMessageBytes.
var ErrRowTooLarge = errors.New("a result row is larger than the largest message accepted")

// privilegedRoleSQL is true for a role that is, or may SET ROLE to, a
// superuser or a role that runs programs or touches files on the database
// server.
const privilegedRoleSQL = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
WHERE (r.rolsuper OR r.rolname IN ('pg_execute_server_program', 'pg_write_server_files', 'pg_read_server_files'))
  AND pg_has_role(current_user, r.oid, 'MEMBER'))`

// Open prepares a pool. It connects lazily: a database that is down does
// not keep a server from starting (see Pool.Check). The only error is a URL
// that cannot be parsed, and its message does not quote the URL.
func Open(cfg Config) (*Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		// The parser's message may quote the URL, password included.
		return nil, errors.New("the PostgreSQL connection URL is not valid (expected postgres://user:password@host:port/database?options)")
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 64 << 20
	}
	if cfg.MaxPrepared <= 0 {
		cfg.MaxPrepared = DefaultMaxPrepared
	}
	pc.MaxConns = int32(cfg.MaxConns)
	pc.MinConns = 0
	pc.MaxConnIdleTime = IdleTimeout
	pc.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	cc := pc.ConnConfig
	// One-round-trip queries with text parameters inside Tx, and nothing
	// cached on the session: DISCARD ALL after every call would leave a
	// statement cache stale.
	cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	cc.StatementCacheCapacity = 0
	cc.DescriptionCacheCapacity = 0
	cc.MaxProtocolMessageBodyLen = cfg.MaxMessageBytes
	// When a call's context ends, ask the server to cancel the statement
	// rather than only breaking off the read.
	cc.BuildContextWatcherHandler = func(pg *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pg, DeadlineDelay: cancelGrace}
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.dial != nil {
		cc.DialFunc = cfg.dial
	}
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	if cfg.ReadOnly {
		cc.RuntimeParams["default_transaction_read_only"] = "on"
	}
	if cfg.DefaultTimeout > 0 {
		st, lock, idle := timeouts(cfg.DefaultTimeout)
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(st, 10)
		cc.RuntimeParams["lock_timeout"] = strconv.FormatInt(lock, 10)
		cc.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(idle, 10)
	}
	if cc.RuntimeParams["application_name"] == "" && cfg.ApplicationName != "" {
		cc.RuntimeParams["application_name"] = cfg.ApplicationName
	}
	if !cfg.AllowPrivileged {
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
	p := &Pool{cfg: cfg, target: Target{Host: cc.Host, Port: cc.Port, Database: cc.Database}}
	p.pool, err = pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return nil, errors.New("cannot set up the PostgreSQL connection pool")
	}
	return p, nil
}

// Target says where the pool connects.
func (p *Pool) Target() Target { return p.target }

// MaxConns is the pool's size.
func (p *Pool) MaxConns() int { return p.cfg.MaxConns }

// Close waits for the background resets and closes every connection.
func (p *Pool) Close() {
	p.resets.Wait()
	p.pool.Close()
}

// Check connects (or takes an idle connection) and runs the role check. It
// is the start-up probe: its error says why the database cannot be used,
// with the same rules as a call's.
func (p *Pool) Check(ctx context.Context) error {
	pc, err := p.pool.Acquire(ctx)
	if err != nil {
		return p.classify(ctx, ctx, err, Options{}, "")
	}
	pc.Release()
	return nil
}

// Options are one call's settings.
type Options struct {
	Mode Mode
	// Timeout is the statement and lock timeout; it must be positive.
	Timeout time.Duration
}

func (o Options) check(p *Pool) error {
	if o.Timeout <= 0 {
		return mcperr.New(mcperr.Internal, "internal error: a database call without a timeout").
			WithCause(errors.New("pgcall: Options.Timeout must be positive"))
	}
	if o.Mode == ReadWrite && p.cfg.ReadOnly {
		return mcperr.New(mcperr.PermissionDeny, "refused: this database connection is read-only")
	}
	return nil
}

// timeouts are the statement, lock and idle-in-transaction timeouts of a
// call, in milliseconds. The lock timeout is a little shorter, so that a
// statement that waits on a lock all along is reported as such; the idle
// timeout ends a session whose caller stopped mid-transaction.
func timeouts(d time.Duration) (statement, lock, idle int64) {
	ms := max(d.Milliseconds(), 1)
	return ms, max(ms-ms/10, 1), ms + backstop.Milliseconds()
}

// beginSQL opens the call's transaction. Constant text and integers only.
// In read-only mode the closing SELECT takes the transaction's snapshot,
// after which PostgreSQL refuses SET TRANSACTION READ WRITE.
func (p *Pool) beginSQL(o Options) string {
	var b strings.Builder
	b.WriteString(o.Mode.begin())
	if o.Timeout != p.cfg.DefaultTimeout {
		st, lock, idle := timeouts(o.Timeout)
		fmt.Fprintf(&b, "; SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; "+
			"SET LOCAL idle_in_transaction_session_timeout = %d", st, lock, idle)
	}
	if o.Mode == ReadOnly {
		b.WriteString("; SELECT 1")
	}
	return b.String()
}

// Tx runs fn on a pooled connection inside a transaction of the call's mode
// with its timeouts. A read-only transaction is always rolled back; a
// read-write one is committed when fn returns nil. fn must run statements
// only through conn and must not end the transaction itself. Its errors are
// classified like the database's (an *mcperr.Error or mcperr.Coded error
// passes through unchanged).
func (p *Pool) Tx(parent context.Context, o Options, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	if err := o.check(p); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(parent, o.Timeout+backstop)
	defer cancel()
	var (
		pc  *pgxpool.Conn
		err error
	)
	for attempt := 0; ; attempt++ {
		pc, err = p.pool.Acquire(ctx)
		if err != nil {
			return p.classify(parent, ctx, err, o, "")
		}
		forgetPrepared(pc.Conn().PgConn()) // the call ends with DISCARD ALL
		_, err = pc.Conn().PgConn().Exec(ctx, p.beginSQL(o)).ReadAll()
		if err == nil {
			break
		}
		p.finish(ctx, pc, 0, true)
		if !p.retryable(ctx, attempt, err) {
			return p.classify(parent, ctx, err, o, "")
		}
	}
	err = fn(ctx, pc.Conn())
	pg := pc.Conn().PgConn()
	if pg.IsBusy() || pg.IsClosed() {
		p.finish(ctx, pc, 0, true)
		return p.classify(parent, ctx, err, o, "")
	}
	if err == nil && pg.TxStatus() != 'T' {
		err = mcperr.New(mcperr.Internal, "internal error: the transaction ended early").
			WithCause(errors.New("pgcall: Tx function ended the transaction"))
	}
	if err == nil && o.Mode == ReadWrite {
		tag, cerr := pg.Exec(ctx, "COMMIT").ReadAll()
		if cerr == nil && len(tag) == 1 && tag[0].CommandTag.String() != "COMMIT" {
			cerr = mcperr.New(mcperr.Conflict, "the transaction could not be committed and was rolled back")
		}
		if cerr != nil {
			p.finish(ctx, pc, 0, true)
			return p.classify(parent, ctx, cerr, o, "")
		}
		p.reset(ctx, pc, "DISCARD ALL")
		return nil
	}
	p.reset(ctx, pc, "ROLLBACK", "DISCARD ALL")
	if err != nil {
		return p.classify(parent, ctx, err, o, "")
	}
	return nil
}

// retryable reports whether a failure of a call's first round trip, which
// runs nothing of the caller's, came from a dead connection and the call may
// be tried again on a new one; it then drops the idle connections, which are
// likely dead as well (the server restarted).
func (p *Pool) retryable(ctx context.Context, attempt int, err error) bool {
	if attempt > 0 || ctx.Err() != nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// A FATAL error is the session ending (an administrator, a
		// restart): it was sent before anything of the call ran.
		if !strings.EqualFold(pe.SeverityUnlocalized, "FATAL") && !strings.EqualFold(pe.Severity, "FATAL") {
			return false
		}
	} else {
		var me *mcperr.Error
		if errors.As(err, &me) || errors.Is(err, errPrivilegedRole) {
			return false
		}
	}
	p.pool.Reset()
	return true
}

// reset returns the connection to the pool after the given queries have
// brought it back to a clean idle state: they are sent and their replies
// read in the background, and the connection is pooled only if every one
// succeeded.
func (p *Pool) reset(ctx context.Context, pc *pgxpool.Conn, queries ...string) {
	p.release(ctx, pc, queries, 0, false, nil)
}

// finish releases a connection once the replies of pending queries already
// sent (counted in ReadyForQuery messages) have been read.
func (p *Pool) finish(ctx context.Context, pc *pgxpool.Conn, pending int, broken bool) {
	p.release(ctx, pc, nil, pending, broken, nil)
}

// release hands a connection back to the pool in the background: it sends
// queries, reads the replies of those and of pending ones, and pools the
// connection only if all succeeded and left the session idle outside a
// transaction. A broken connection, or one whose call's context ended (a
// cancel request may still be on its way to the server, where it would hit
// the next call), is closed instead. When sc is set, the last query is
// heldSQL, and the statement records of sc are brought in line with its
// answer before the connection is pooled.
func (p *Pool) release(ctx context.Context, pc *pgxpool.Conn, queries []string, pending int, broken bool, sc *stmtCache) {
	broken = broken || ctx.Err() != nil
	if !broken && len(queries) == 0 && pending == 0 && drain(pc.Conn().PgConn(), 0, nil) {
		pc.Release() // idle already: nothing to wait for
		return
	}
	p.resets.Add(1)
	go func() {
		defer p.resets.Done()
		pg := pc.Conn().PgConn()
		if !broken {
			fe := pg.Frontend()
			for _, q := range queries {
				fe.Send(&pgproto3.Query{String: q})
			}
			if len(queries) > 0 && fe.Flush() != nil {
				broken = true
			}
		}
		var held map[string]bool
		var row func([][]byte)
		if sc != nil {
			held = map[string]bool{}
			row = func(values [][]byte) {
				if len(values) == 1 && values[0] != nil {
					held[string(values[0])] = true
				}
			}
		}
		if broken || !drain(pg, pending+len(queries), row) {
			cctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			if !pg.IsClosed() {
				_ = pg.CancelRequest(cctx) // stop whatever may still run there
			}
			_ = pc.Conn().Close(cctx)
			cancel()
		} else if sc != nil {
			sc.keep(held)
		}
		pc.Release() // a closed connection is destroyed, not pooled
	}()
}
