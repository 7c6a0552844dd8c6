package pgcall

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Statement is one SQL statement for Exec.
type Statement struct {
	// SQL is exactly one statement.
	SQL string
	// Params are the parameter values in text form ($1 first); nil is NULL.
	// The server parses each as the type it infers for its placeholder,
	// exactly as it would a quoted literal. A statement with another number
	// of placeholders fails with a VALIDATION_ERROR on "params".
	Params [][]byte
	// MaxRows stops the statement after that many rows (0: all). A read-only
	// caller that wants n rows and to know whether there were more asks for
	// n+1.
	MaxRows int
	// Field names the caller's argument that holds the SQL, for the Field of
	// validation errors ("query" when empty).
	Field string
	// Prepared marks a statement the server wrote itself from identifiers
	// it validated: one that reads or writes rows and calls nothing an
	// agent chose (no function named in a request). Read-only, it is
	// prepared once per connection and kept there, and the call ends with
	// ROLLBACK and pg_advisory_unlock_all() but no DISCARD ALL, so a call
	// on a connection whose statement is already prepared is one round
	// trip.
	// The database's own code it reaches (a view's function) may still
	// change the session; ROLLBACK undoes settings and roles, the unlock
	// the session-level advisory locks. A read-write call runs as agent
	// SQL does, unprepared: it is reset with DISCARD ALL after it (its
	// triggers may have changed anything), which drops the connection's
	// prepared statements.
	// Agent-written SQL must never be marked Prepared.
	Prepared bool
}

func (st Statement) field() string {
	if st.Field == "" {
		return "query"
	}
	return st.Field
}

// Description is what the server reports about a parsed statement.
type Description struct {
	// ParamOIDs are the types the server inferred for $1, $2, ….
	ParamOIDs []uint32
	// Fields are the result columns; empty for a statement that returns no
	// rows.
	Fields []pgconn.FieldDescription
	// TypeMap is the connection's type map, to choose formats and decode.
	TypeMap *pgtype.Map
}

// Receiver takes a statement's result as it arrives.
type Receiver interface {
	// Describe is called once the statement is parsed, before it runs. It
	// returns the format (pgtype.TextFormatCode or BinaryFormatCode) of each
	// result field, or an error, which stops the call before the statement
	// runs (a wrong number of parameters, say). It is called once more, with
	// the new description and before any row, when a Prepared statement the
	// connection had cached turns out stale and is prepared again.
	Describe(Description) (formats []int16, err error)
	// Row receives one row's values, in the formats Describe chose; nil is
	// NULL. The slices are only valid during the call. After an error, Row
	// is not called again and Exec returns that error.
	Row(values [][]byte) error
}

// Outcome is how a statement ended.
type Outcome struct {
	// Tag is the command tag ("SELECT 3", "SHOW"); empty when the statement
	// was stopped at MaxRows.
	Tag string
	// Suspended reports that the statement had more rows than MaxRows.
	Suspended bool
	// TypeNames are the result fields' type names (pg_type.typname: int4,
	// _text, an enum's name), in field order.
	TypeNames []string
}

// transactionTags are the command tags of statements that end or replace
// the call's transaction.
var transactionTags = []string{"BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE",
	"PREPARE TRANSACTION", "COMMIT PREPARED", "ROLLBACK PREPARED"}

// typeNamesSQL names types the connection's type map does not know (enums,
// domains, extension types).
const typeNamesSQL = "SELECT oid, typname FROM pg_catalog.pg_type WHERE oid = ANY($1::pg_catalog.oid[])"

// Exec runs one statement in its own transaction of the call's mode and
// streams its rows to r. See the package documentation for the round trips.
func (p *Pool) Exec(parent context.Context, o Options, st Statement, r Receiver) (*Outcome, error) {
	if err := o.check(p); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(parent, o.Timeout+backstop)
	defer cancel()
	for attempt := 0; ; attempt++ {
		pc, err := p.pool.Acquire(ctx)
		if err != nil {
			return nil, p.classify(parent, ctx, err, o, st.field())
		}
		c := &call{p: p, pc: pc, pg: pc.Conn().PgConn(), ctx: ctx, o: o, st: st}
		if st.Prepared && o.Mode == ReadOnly {
			c.sc = cacheOf(c.pg)
		} else {
			forgetPrepared(c.pg) // the call ends with DISCARD ALL
		}
		c.stopWatch = context.AfterFunc(ctx, c.interrupt)
		out, err := c.run(r)
		if err != nil && c.firstTrip && p.retryable(ctx, attempt, err) {
			continue
		}
		var re receiverError
		if errors.As(err, &re) {
			return nil, re.error // the caller's own
		}
		if err != nil && st.Prepared && (staleResult(err) || lostStatements(err)) {
			err = unsettled{err}
		}
		if err != nil {
			return nil, p.classify(parent, ctx, err, o, st.field())
		}
		return out, nil
	}
}

// receiverError carries an error of the Receiver back to the caller as it
// is.
type receiverError struct{ error }

// unsettled marks a Prepared statement's error that says the session lost
// it or its result columns changed, still there after the one retry (or
// raised by the database's own code): the SQL is the server's, so the
// caller's input is not to blame.
type unsettled struct{ error }

func (u unsettled) Unwrap() error { return u.error }

// call is one Exec on one connection.
type call struct {
	p   *Pool
	pc  *pgxpool.Conn
	pg  *pgconn.PgConn
	ctx context.Context
	o   Options
	st  Statement
	// sc is the connection's statement cache, for a Prepared read.
	sc *stmtCache
	// firstTrip is true while a connection failure may be retried: the
	// first round trip runs nothing of the caller's.
	firstTrip bool
	released  bool
	// staleRetry is true while a prepared statement whose result columns
	// changed may be prepared again and the call retried on its connection.
	staleRetry bool
	// guardSent is true while the write sendBegin queued holds the guard's
	// Parse and its ParseComplete has not come.
	guardSent bool
	// unlockSent is the same for the unlock statement's Parse.
	unlockSent bool
	// drift is true when the server reported a change of a session setting
	// during the call (at COMMIT too: a deferred trigger): a Prepared read
	// is not reset, and a connection whose reported settings moved is not
	// worth trusting to one, so it is closed rather than reused.
	drift bool
	// retried is true once the call prepared its statement again on the
	// connection (the statement or the guard was lost, or its result
	// columns changed): it does so once.
	retried bool
	// stopWatch stops watching ctx; false means interrupt has run.
	stopWatch func() bool
}

// interrupt runs once if the call's context ends while the call holds the
// connection: it asks the server to cancel the statement and, should the
// server not answer, breaks off reads and writes after a grace period. One
// watch per call: pgconn's per-receive context watch would cost a
// goroutine for every message of the result.
func (c *call) interrupt() {
	_ = c.pg.Conn().SetDeadline(time.Now().Add(cancelGrace))
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	_ = c.pg.CancelRequest(ctx)
}

// release hands the connection back: after reading the replies of pending
// queries already sent, or closing it when broken. A connection whose call
// was interrupted is never reused: the cancel request may still be on its
// way to the server, where it would hit the next call.
func (c *call) release(pending int, broken bool) {
	if !c.released {
		c.released = true
		if !c.stopWatch() || (c.drift && c.st.Prepared) {
			broken = true
		}
		c.p.finish(c.ctx, c.pc, pending, broken)
	}
}

// recv reads one message; a failure leaves the protocol state unknown, so
// the connection is closed. The call's context is watched by interrupt.
func (c *call) recv() (pgproto3.BackendMessage, error) {
	msg, err := c.pg.ReceiveMessage(context.Background())
	if err != nil {
		c.release(0, true)
		var tooBig *pgproto3.ExceededMaxBodyLenErr
		if errors.As(err, &tooBig) {
			return nil, mcperr.Invalid(c.st.field(), nil, "", "a row of the result is larger than %d bytes, "+
				"the largest accepted", c.p.cfg.MaxMessageBytes).WithCause(ErrRowTooLarge)
		}
		return nil, err
	}
	return msg, nil
}

func (c *call) flush() error {
	if err := c.pg.Frontend().Flush(); err != nil {
		c.release(0, true)
		return err
	}
	return nil
}

// accept checks the call's parameters against the statement's and asks r
// how it wants the result columns; on a refusal the transaction is rolled
// back.
func (c *call) accept(r Receiver, desc Description) ([]int16, error) {
	if len(desc.ParamOIDs) != len(c.st.Params) {
		c.rollback()
		return nil, mcperr.Invalid("params", nil, "", "the statement takes %d parameter(s) ($1 … $n) but params has %d value(s)",
			len(desc.ParamOIDs), len(c.st.Params))
	}
	formats, err := r.Describe(desc)
	if err != nil {
		c.rollback()
		return nil, receiverError{err}
	}
	return formats, nil
}

func (c *call) run(r Receiver) (out *Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.release(0, true)
			panic(p)
		}
	}()
	if c.sc != nil {
		return c.runPrepared(r)
	}
	c.firstTrip = true
	desc, err := c.describe()
	if err != nil {
		return nil, err
	}
	c.firstTrip = false
	formats, err := c.accept(r, desc)
	if err != nil {
		return nil, err
	}
	return c.execute(r, desc, formats, nil, false)
}

// describe is the first round trip: BEGIN with the call's settings, then
// Parse and Describe of the statement.
func (c *call) describe() (Description, error) {
	fe := c.pg.Frontend()
	fe.Send(&pgproto3.Query{String: c.p.beginSQL(c.o)})
	fe.Send(&pgproto3.Parse{Query: c.st.SQL})
	fe.Send(&pgproto3.Describe{ObjectType: 'S'})
	fe.Send(&pgproto3.Sync{})
	if err := c.flush(); err != nil {
		return Description{}, err
	}
	d := Description{TypeMap: c.pc.Conn().TypeMap()}
	var beginErr, parseErr error
	for ready := 0; ready < 2; {
		msg, err := c.recv()
		if err != nil {
			return d, err
		}
		switch msg := msg.(type) {
		case *pgproto3.ErrorResponse:
			if ready == 0 {
				beginErr = pgconn.ErrorResponseToPgError(msg)
			} else {
				parseErr = pgconn.ErrorResponseToPgError(msg)
			}
		case *pgproto3.ParameterDescription:
			d.ParamOIDs = slices.Clone(msg.ParameterOIDs)
		case *pgproto3.RowDescription:
			if ready == 1 {
				d.Fields = fieldDescriptions(msg)
			}
		case *pgproto3.ReadyForQuery:
			ready++
		}
	}
	if beginErr != nil || parseErr != nil {
		c.rollback()
		return d, errors.Join(beginErr, parseErr)
	}
	return d, nil
}

// fieldDescriptions copies a RowDescription (the frontend reuses it).
func fieldDescriptions(msg *pgproto3.RowDescription) []pgconn.FieldDescription {
	out := make([]pgconn.FieldDescription, len(msg.Fields))
	for i, f := range msg.Fields {
		out[i] = pgconn.FieldDescription{Name: string(f.Name), TableOID: f.TableOID,
			TableAttributeNumber: f.TableAttributeNumber, DataTypeOID: f.DataTypeOID, DataTypeSize: f.DataTypeSize,
			TypeModifier: f.TypeModifier, Format: f.Format}
	}
	return out
}

// rollback ends the call early (the statement did not run): the transaction
// is rolled back and the session reset in the background.
func (c *call) rollback() {
	if c.released {
		return
	}
	c.released = true
	if !c.stopWatch() || (c.drift && c.st.Prepared) {
		c.p.finish(c.ctx, c.pc, 0, true)
		return
	}
	if c.sc != nil {
		// The database's code may have run and failed, or failed to
		// reach the unlock, after it deallocated or prepared statements
		// (which ROLLBACK does not undo): the records are checked against
		// what the session holds, so that the next call neither binds a
		// name the session lost (and pays the retry) nor one the code
		// took.
		c.p.release(c.ctx, c.pc, []string{"ROLLBACK", unlockAllSQL, heldSQL}, 0, false, c.sc)
		return
	}
	// A write's triggers may have done what ROLLBACK does not undo (a
	// sequence's currval, a statement prepared): reset as agent SQL is.
	c.p.reset(c.ctx, c.pc, "ROLLBACK", "DISCARD ALL")
}

// unlockAllSQL releases the session-level advisory locks, which outlive
// ROLLBACK: a view's function may take one in a read-only call.
const unlockAllSQL = "SELECT pg_catalog.pg_advisory_unlock_all()"

// execute is the second round trip: Bind and Execute, then the lookup of
// type names the type map lacks, then (read-only) ROLLBACK and DISCARD ALL,
// whose replies are read after the caller has its result. For a prepared
// statement ps, it binds ps; begin puts the transaction's opening in front
// (the statement was prepared on an earlier call), and a read-only call's
// ROLLBACK and advisory unlock go in front of the Sync instead of a reset.
func (c *call) execute(r Receiver, d Description, formats []int16, ps *preparedStmt, begin bool) (*Outcome, error) {
	out := &Outcome{TypeNames: make([]string, len(d.Fields))}
	var unknown []string
	if ps != nil && ps.typeNames != nil {
		copy(out.TypeNames, ps.typeNames)
	} else {
		for i, f := range d.Fields {
			if t, ok := d.TypeMap.TypeForOID(f.DataTypeOID); ok {
				out.TypeNames[i] = t.Name
			} else {
				unknown = append(unknown, strconv.FormatUint(uint64(f.DataTypeOID), 10))
			}
		}
	}
	fe := c.pg.Frontend()
	skip := 0 // CommandCompletes of the transaction's opening
	bind := &pgproto3.Bind{Parameters: c.st.Params, ResultFormatCodes: formats}
	if ps != nil {
		c.sc.sendClosing(fe)
		if begin {
			skip = c.sendBegin(fe)
		}
		bind.PreparedStatement = ps.name
	}
	fe.Send(bind)
	fe.Send(&pgproto3.Execute{MaxRows: uint32(max(c.st.MaxRows, 0))})
	if len(unknown) > 0 {
		fe.Send(&pgproto3.Parse{Query: typeNamesSQL})
		fe.Send(&pgproto3.Bind{Parameters: [][]byte{[]byte("{" + strings.Join(unknown, ",") + "}")}})
		fe.Send(&pgproto3.Execute{})
	}
	if ps != nil {
		// Before the Sync: the reply comes with the statement's, and the
		// connection is idle as soon as the caller has its result. After a
		// failure the server skips it, and the connection is rolled back
		// in the background instead.
		// The unlock runs after it, outside the transaction.
		fe.Send(&pgproto3.Parse{Query: "ROLLBACK"})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Bind{PreparedStatement: unlockName})
		fe.Send(&pgproto3.Execute{})
	}
	fe.Send(&pgproto3.Sync{})
	pending := 0
	if c.o.Mode == ReadOnly && ps == nil {
		fe.Send(&pgproto3.Query{String: "ROLLBACK"})
		fe.Send(&pgproto3.Query{String: "DISCARD ALL"})
		pending = 2
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	var (
		stmtErr, rowErr error
		inLookup        bool
		// sent counts the rows r has had: a statement that fails after
		// some is not run again.
		sent int
		// lateErr is an error after the statement's end: of the type
		// lookup, the ROLLBACK or the unlock.
		lateErr  bool
		txStatus byte
		names    = map[uint32]string{}
	)
	for done := false; !done; {
		msg, err := c.recv()
		if err != nil {
			// A FATAL error (the session was terminated) comes just
			// before the connection closes: it says more than EOF.
			return nil, errors.Join(stmtErr, err)
		}
		if _, failed := msg.(*pgproto3.ErrorResponse); !failed {
			c.firstTrip = false // the session is alive: what failed now is the call's own
		}
		switch msg := msg.(type) {
		case *pgproto3.ParseComplete:
			c.parseComplete()
		case *pgproto3.ParameterStatus:
			c.drift = true
		case *pgproto3.DataRow:
			switch {
			case skip > 0: // the guard's
			case inLookup:
				if len(msg.Values) == 2 {
					if oid, err := strconv.ParseUint(string(msg.Values[0]), 10, 32); err == nil {
						names[uint32(oid)] = string(msg.Values[1])
					}
				}
			case rowErr == nil:
				rowErr = r.Row(msg.Values)
				sent++
			}
		case *pgproto3.CommandComplete:
			if skip > 0 {
				skip--
				break
			}
			if !inLookup {
				out.Tag = string(msg.CommandTag)
			}
			inLookup = true
		case *pgproto3.PortalSuspended:
			out.Suspended, inLookup = true, true
		case *pgproto3.EmptyQueryResponse:
			inLookup = true
		case *pgproto3.ErrorResponse:
			if !inLookup && stmtErr == nil {
				stmtErr = pgconn.ErrorResponseToPgError(msg)
			}
			lateErr = lateErr || inLookup
		case *pgproto3.CopyInResponse:
			// COPY … FROM STDIN waits for data; the pipelined messages
			// after it put the session in a state not worth untangling.
			c.release(0, true)
			return nil, mcperr.Invalid(c.st.field(), nil, "", "COPY FROM STDIN is not supported")
		case *pgproto3.ReadyForQuery:
			// Kept: once the connection is released, the background reset
			// changes the connection's own status.
			txStatus, done = msg.TxStatus, true
		}
	}
	for i, f := range d.Fields {
		if out.TypeNames[i] == "" {
			out.TypeNames[i] = names[f.DataTypeOID]
		}
	}
	if ps != nil && c.staleRetry && sent == 0 && (staleResult(stmtErr) || lostStatements(stmtErr)) {
		return nil, c.recoverStale(stmtErr)
	}
	if ps != nil && stmtErr == nil && !lateErr && ps.typeNames == nil {
		// Only names the lookup gave: a lookup that failed (a role that may
		// not read pg_type) would leave every later call without them.
		ps.typeNames = slices.Clone(out.TypeNames)
	}
	switch {
	case ps != nil && (lateErr || txStatus != 'I'):
		// The unlock may not have run, its statement lost (DEALLOCATE by
		// the database's code): both again in the background, where the
		// records of the session's statements are checked.
		c.rollback()
	case c.o.Mode == ReadOnly:
		c.release(pending, false)
	default:
		if err := c.commit(stmtErr == nil && rowErr == nil); err != nil && stmtErr == nil {
			stmtErr = err
		}
	}
	switch {
	case stmtErr != nil:
		return nil, stmtErr
	case rowErr != nil:
		return nil, receiverError{rowErr}
	}
	if err := c.stillInside(out.Tag, txStatus); err != nil {
		return nil, err
	}
	return out, nil
}

// commit ends a read-write call: COMMIT when the statement succeeded, its
// outcome read before the call returns, and DISCARD ALL's in the background.
// Otherwise the transaction is rolled back in the background. A Prepared
// write is reset too: a trigger may have set a setting, a role or a custom
// variable for the session, taken an advisory lock, created a temporary
// table or run LISTEN.
func (c *call) commit(ok bool) error {
	switch {
	case ok && c.pg.TxStatus() == 'E':
		// The statement succeeded but what ran after it in the
		// transaction failed (the lookup of its result's type names, a
		// cancel): nothing can be committed, and the caller must not be
		// told the write was made.
		c.rollback()
		return mcperr.New(mcperr.Upstream, "the write was rolled back: the database failed after the statement, so nothing was written")
	case !ok || c.pg.TxStatus() != 'T': // failed, or ended by the statement itself
		c.rollback()
		return nil
	}
	fe := c.pg.Frontend()
	fe.Send(&pgproto3.Query{String: "COMMIT"})
	fe.Send(&pgproto3.Query{String: "DISCARD ALL"})
	pending := 1
	if err := c.flush(); err != nil {
		return err
	}
	var endErr error
	tag := ""
	for {
		msg, err := c.recv()
		if err != nil {
			return err
		}
		switch msg := msg.(type) {
		case *pgproto3.CommandComplete:
			tag = string(msg.CommandTag)
		case *pgproto3.ParameterStatus:
			c.drift = true // a deferred trigger changed a reported setting
		case *pgproto3.ErrorResponse:
			endErr = pgconn.ErrorResponseToPgError(msg)
		case *pgproto3.ReadyForQuery:
			if endErr == nil && tag != "COMMIT" {
				endErr = mcperr.New(mcperr.Conflict, "the transaction could not be committed and was rolled back")
			}
			c.release(pending, endErr != nil)
			return endErr
		}
	}
}

// stillInside refuses a statement that ended or replaced the call's
// transaction (COMMIT, ROLLBACK, END, COMMIT AND CHAIN, PREPARE
// TRANSACTION…). It ran alone in a transaction that held nothing else, so it
// changed nothing, but the caller must not believe it did something.
func (c *call) stillInside(tag string, txStatus byte) error {
	word := ""
	for _, t := range transactionTags {
		if tag == t || strings.HasPrefix(tag, t+" ") {
			word = t
		}
	}
	if word == "" && (c.o.Mode == ReadWrite || txStatus == 'T' || c.st.Prepared) {
		return nil
	}
	if word == "" {
		word = tag
	}
	how := "which is always rolled back"
	if c.o.Mode == ReadWrite {
		how = "which is committed when the statement succeeds"
	}
	return mcperr.New(mcperr.PermissionDeny, "transaction control (%s) is not allowed: every call runs in its own "+
		"%s transaction, %s", word, c.o.Mode, how)
}

// drain reads the replies of pending simple queries already sent, passing
// their rows to row when set; it reports whether all succeeded and left
// the session idle. One deadline bounds it (a context would be watched
// message by message).
func drain(pg *pgconn.PgConn, pending int, row func(values [][]byte)) bool {
	if pending == 0 {
		return pg.TxStatus() == 'I' && !pg.IsBusy() && !pg.IsClosed()
	}
	if err := pg.Conn().SetDeadline(time.Now().Add(cleanupTimeout)); err != nil {
		return false
	}
	ok := true
	for pending > 0 {
		msg, err := pg.ReceiveMessage(context.Background())
		if err != nil {
			return false
		}
		switch msg := msg.(type) {
		case *pgproto3.DataRow:
			if row != nil {
				row(msg.Values)
			}
		case *pgproto3.ErrorResponse, *pgproto3.CopyInResponse:
			ok = false
		case *pgproto3.ReadyForQuery:
			pending--
		}
	}
	return ok && pg.TxStatus() == 'I' && pg.Conn().SetDeadline(time.Time{}) == nil
}
