package pgcall

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// DefaultMaxPrepared is how many prepared statements one connection keeps
// when Config.MaxPrepared is zero.
const DefaultMaxPrepared = 64

// preparedKey is where a connection's prepared statements are kept, in its
// pgconn.PgConn.CustomData: they live exactly as long as the session that
// holds them.
const preparedKey = "pgcall.prepared"

// stmtCache is the prepared statements of one session, by SQL text. Only
// the call that holds the connection touches it.
type stmtCache struct {
	byText map[string]*preparedStmt
	// seq numbers the statements, so a name is never reused in a session.
	seq uint64
	// tick orders the uses, for eviction.
	tick uint64
	// closing are statements dropped from the cache that the server still
	// holds: the next call closes them first thing.
	closing []string
	// guard and unlock are true once the session holds the guard and the
	// unlock statement.
	guard, unlock bool
}

// preparedStmt is one prepared statement and what the server said of it.
type preparedStmt struct {
	name      string
	paramOIDs []uint32
	fields    []pgconn.FieldDescription
	typeNames []string
	used      uint64
}

// cacheOf returns the connection's statement cache, creating it.
func cacheOf(pg *pgconn.PgConn) *stmtCache {
	if sc, ok := pg.CustomData()[preparedKey].(*stmtCache); ok {
		return sc
	}
	sc := &stmtCache{byText: map[string]*preparedStmt{}}
	pg.CustomData()[preparedKey] = sc
	return sc
}

// forgetPrepared drops the record of a connection's prepared statements:
// a call that runs an agent's SQL, or a Prepared write, ends with DISCARD
// ALL, which deallocates them all (or the connection is closed).
func forgetPrepared(pg *pgconn.PgConn) {
	delete(pg.CustomData(), preparedKey)
}

// get returns the statement prepared for sql, if any.
func (sc *stmtCache) get(sql string) *preparedStmt {
	ps := sc.byText[sql]
	if ps != nil {
		sc.tick++
		ps.used = sc.tick
	}
	return ps
}

// name reserves a new statement name.
func (sc *stmtCache) name() string {
	sc.seq++
	return "pgcall_" + strconv.FormatUint(sc.seq, 10)
}

// add records a statement the server has prepared, evicting the least
// recently used one beyond max.
func (sc *stmtCache) add(sql string, ps *preparedStmt, max int) {
	for len(sc.byText) >= max {
		var oldest string
		var at uint64
		for text, e := range sc.byText {
			if oldest == "" || e.used < at {
				oldest, at = text, e.used
			}
		}
		sc.drop(oldest)
	}
	sc.tick++
	ps.used = sc.tick
	sc.byText[sql] = ps
}

// drop forgets a statement and schedules its Close.
func (sc *stmtCache) drop(sql string) {
	if ps := sc.byText[sql]; ps != nil {
		delete(sc.byText, sql)
		sc.closing = append(sc.closing, ps.name)
	}
}

// sendClosing queues a Close for every statement dropped since the last
// call. It goes first in the write, before anything that can fail and make
// the server skip the messages after it; closing a statement that does not
// exist is not an error.
func (sc *stmtCache) sendClosing(fe *pgproto3.Frontend) {
	for _, name := range sc.closing {
		fe.Send(&pgproto3.Close{ObjectType: 'S', Name: name})
	}
	sc.closing = sc.closing[:0]
}

// staleResult reports the error PostgreSQL gives when a prepared
// statement's result columns changed under it (a table's columns were
// altered since it was prepared): it must be prepared again.
func staleResult(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "0A000" && strings.Contains(pe.Message, "cached plan must not change result type")
}

// lostStatements reports that the session no longer holds a statement the
// cache records: the database's own code deallocated it (EXECUTE
// 'DEALLOCATE ALL' in a trigger). Every record of the session is dropped.
func lostStatements(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "26000"
}

// heldSQL names the statements the session holds that were prepared
// through the protocol: pgcall's own, as every other statement the
// connection parses is unnamed. One the database's code prepared under a
// name pgcall used (SQL PREPARE, after DEALLOCATE) is from_sql.
const heldSQL = "SELECT name FROM pg_catalog.pg_prepared_statements WHERE NOT from_sql"

// keep drops the records of the statements the session no longer holds as
// pgcall prepared them (held: heldSQL's answer), the guard's and the
// unlock's included; there is nothing of them to close.
func (sc *stmtCache) keep(held map[string]bool) {
	for text, ps := range sc.byText {
		if !held[ps.name] {
			delete(sc.byText, text)
		}
	}
	sc.guard = sc.guard && held[guardName]
	sc.unlock = sc.unlock && held[unlockName]
}

// forgetAll drops every record of the session's statements, closing them
// on the next write in case some are still there (closing a statement that
// does not exist is not an error), and the guard's, which is prepared again
// when needed.
func (sc *stmtCache) forgetAll() {
	for _, ps := range sc.byText {
		sc.closing = append(sc.closing, ps.name)
	}
	clear(sc.byText)
	sc.guard, sc.unlock = false, false
}

// guardName is a statement a connection prepares once, which a Prepared
// call whose timeout is not the session's default runs first in its
// transaction: the call's timeouts, for the transaction only (SET LOCAL
// through one Bind instead of three statements parsed every call). Nothing
// else needs restoring: the session a Prepared call finds is the one the
// pool opened, as a read-only call's changes end with its ROLLBACK (and its
// advisory locks with the unlock after it), and a write is followed by
// DISCARD ALL.
const guardName = "pgcall_guard"

const guardSQL = "SELECT pg_catalog.set_config('statement_timeout', $1, true), " +
	"pg_catalog.set_config('lock_timeout', $2, true), pg_catalog.set_config('idle_in_transaction_session_timeout', $3, true)"

// unlockName is unlockAllSQL prepared once per connection: a Prepared read
// runs it after its ROLLBACK, every call, which then costs the server no
// parsing and planning.
const unlockName = "pgcall_unlock"

// sendBegin queues a Prepared read's opening, pipelined with its statement
// so that it costs no round trip of its own: the Parse of the guard when it
// is needed and of the unlock, if the connection may lack them (first: no
// error before them can make the server skip them), BEGIN READ ONLY (only
// reads are prepared; through the extended protocol, so that an error skips
// everything up to the Sync), and the guard when needed. It returns the statements
// queued, each answering CommandComplete.
func (c *call) sendBegin(fe *pgproto3.Frontend) int {
	guard := c.o.Timeout != c.p.cfg.DefaultTimeout
	c.guardSent = guard && !c.sc.guard
	if c.guardSent {
		fe.Send(&pgproto3.Close{ObjectType: 'S', Name: guardName})
		fe.Send(&pgproto3.Parse{Name: guardName, Query: guardSQL})
	}
	c.unlockSent = !c.sc.unlock
	if c.unlockSent {
		fe.Send(&pgproto3.Close{ObjectType: 'S', Name: unlockName})
		fe.Send(&pgproto3.Parse{Name: unlockName, Query: unlockAllSQL})
	}
	fe.Send(&pgproto3.Parse{Query: c.o.Mode.begin()})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	if !guard {
		return 1
	}
	st, lock, idle := timeouts(c.o.Timeout)
	fe.Send(&pgproto3.Bind{PreparedStatement: guardName, Parameters: [][]byte{
		strconv.AppendInt(nil, st, 10), strconv.AppendInt(nil, lock, 10), strconv.AppendInt(nil, idle, 10)}})
	fe.Send(&pgproto3.Execute{})
	return 2
}

// parseComplete notes a ParseComplete of a write that sendBegin opened:
// the first are the guard's and the unlock's, in that order, when sent.
func (c *call) parseComplete() {
	switch {
	case c.guardSent:
		c.sc.guard = true
		c.guardSent = false
	case c.unlockSent:
		c.sc.unlock = true
		c.unlockSent = false
	}
}

// errStale asks runPrepared to prepare the statement again.
var errStale = errors.New("pgcall: prepared statement is stale")

// runPrepared runs a Prepared read: prepared on this connection first if
// need be (two round trips), else bound at once behind the transaction's
// opening (one round trip). A statement whose result columns changed since
// it was prepared, or that the session lost (or the guard), is prepared
// again once, unless the call's context ended meanwhile.
func (c *call) runPrepared(r Receiver) (*Outcome, error) {
	sc := c.sc
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			// The recovery brought the connection back to idle under a
			// deadline of its own, which replaced the one interrupt sets:
			// a call cancelled by now must not run again.
			if err := c.ctx.Err(); err != nil {
				c.release(0, true)
				return nil, err
			}
		}
		ps := sc.get(c.st.SQL)
		cached := ps != nil
		if !cached {
			var err error
			if ps, err = c.prepare(); errors.Is(err, errStale) {
				continue
			} else if err != nil {
				return nil, err
			}
		}
		desc := Description{ParamOIDs: ps.paramOIDs, Fields: ps.fields, TypeMap: c.pc.Conn().TypeMap()}
		formats, err := c.accept(r, desc)
		if err != nil {
			return nil, err
		}
		// On a statement already prepared, this trip is the call's first:
		// a dead connection found now has run nothing.
		c.firstTrip = cached && attempt == 0
		c.staleRetry = cached && !c.retried
		out, err := c.execute(r, desc, formats, ps, cached)
		if errors.Is(err, errStale) {
			continue
		}
		return out, err
	}
}

// prepare is a prepared call's first round trip when its statement is new
// on the connection: the transaction's opening, then Parse and Describe of
// the statement under a new name. The statement is recorded in the cache
// once the server holds it. When the guard the cache records is gone from
// the session (DEALLOCATE run by the database's code), the transaction is
// rolled back, every record dropped, and errStale returned, once.
func (c *call) prepare() (*preparedStmt, error) {
	sc := c.sc
	fe := c.pg.Frontend()
	sc.sendClosing(fe)
	c.sendBegin(fe)
	before := 1 // the Parse messages ahead of the statement's: BEGIN's, the guard's and the unlock's
	for _, sent := range []bool{c.guardSent, c.unlockSent} {
		if sent {
			before++
		}
	}
	ps := &preparedStmt{name: sc.name()}
	// The database's code may have taken the name with PREPARE (which
	// ROLLBACK does not undo); closing a name that is free is no error.
	fe.Send(&pgproto3.Close{ObjectType: 'S', Name: ps.name})
	fe.Send(&pgproto3.Parse{Name: ps.name, Query: c.st.SQL})
	fe.Send(&pgproto3.Describe{ObjectType: 'S', Name: ps.name})
	fe.Send(&pgproto3.Sync{})
	c.firstTrip = true
	if err := c.flush(); err != nil {
		return nil, err
	}
	var firstErr error
	parsed := 0
	for done := false; !done; {
		msg, err := c.recv()
		if err != nil {
			return nil, errors.Join(firstErr, err)
		}
		switch msg := msg.(type) {
		case *pgproto3.ErrorResponse:
			if firstErr == nil {
				firstErr = pgconn.ErrorResponseToPgError(msg)
			}
		case *pgproto3.ParseComplete:
			c.parseComplete()
			parsed++
		case *pgproto3.ParameterStatus:
			c.drift = true
		case *pgproto3.ParameterDescription:
			ps.paramOIDs = slices.Clone(msg.ParameterOIDs)
		case *pgproto3.RowDescription:
			ps.fields = fieldDescriptions(msg)
		case *pgproto3.ReadyForQuery:
			done = true
		}
	}
	c.firstTrip = false
	if firstErr != nil {
		if parsed > before { // the server holds the statement nonetheless
			sc.closing = append(sc.closing, ps.name)
		}
		if !c.retried && lostStatements(firstErr) {
			return nil, c.recoverStale(firstErr)
		}
		c.rollback()
		return nil, firstErr
	}
	sc.add(c.st.SQL, ps, c.p.cfg.MaxPrepared)
	return ps, nil
}

// recoverStale follows a prepared statement that failed because its result
// columns changed, or because the session lost it (or the guard): it
// failed before it ran, so the call's transaction, rolled back here, did
// nothing. (Should the database's own code have raised the error as the
// statement ran, the advisory unlock covers what ROLLBACK leaves.) The
// connection is brought back to idle on the spot, the statement forgotten
// (and closed on the next write), and errStale returned so that it is
// prepared again.
func (c *call) recoverStale(stmtErr error) error {
	c.staleRetry, c.retried = false, true
	c.pg.Frontend().Send(&pgproto3.Query{String: "ROLLBACK; " + unlockAllSQL})
	// Past here a failure is the connection's, not the statement's: the
	// caller is told the database was lost, not that its input was wrong.
	if err := c.flush(); err != nil {
		return err
	}
	if !drain(c.pg, 1, nil) {
		c.release(0, true)
		return errors.New("the session did not come back after a prepared statement was refused")
	}
	if lostStatements(stmtErr) {
		c.sc.forgetAll()
	} else {
		c.sc.drop(c.st.SQL)
	}
	return errStale
}
