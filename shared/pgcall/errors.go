package pgcall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// narrow is the advice that ends a statement-timeout message: the same
// statement would time out again.
const narrow = "narrow the query (a WHERE clause, a LIMIT, an indexed column)"

// classify turns a failure of a call into an error for the agent. parent is
// the caller's context, ctx the call's own (with the backstop); o.Timeout is
// zero outside a call (Check). field is the argument holding the SQL, if
// any.
func (p *Pool) classify(parent, ctx context.Context, err error, o Options, field string) error {
	if err == nil {
		return nil
	}
	var me *mcperr.Error
	if errors.As(err, &me) {
		return me
	}
	var coded mcperr.Coded
	if errors.As(err, &coded) {
		return err
	}
	if errors.Is(err, errPrivilegedRole) {
		return mcperr.New(mcperr.PermissionDeny, "the database role may run programs or read and write files on the database "+
			"server (superuser, pg_execute_server_program, pg_read_server_files or pg_write_server_files); "+
			"connect with a dedicated role that has none of these (for reading: a read-only role)").WithCause(err)
	}
	if parent.Err() != nil {
		return parent.Err() // the client went away or its own deadline passed
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return p.connectError(err)
	}
	if ctx.Err() != nil || pgconn.Timeout(err) {
		if o.Timeout == 0 {
			return mcperr.New(mcperr.Timeout, "database unavailable: PostgreSQL at %s did not answer in time", p.target).WithCause(err)
		}
		return mcperr.New(mcperr.Timeout, "the statement did not finish within its %v timeout; %s", o.Timeout, narrow).
			WithCause(err).WithRetryable(false)
	}
	var pe *pgconn.PgError
	var u unsettled
	if errors.As(err, &u) && errors.As(err, &pe) {
		return mcperr.New(mcperr.Upstream, "a prepared statement was dropped or its result type changed while the call ran "+
			"(PostgreSQL: %s [SQLSTATE %s]); retrying may succeed", pe.Message, pe.Code).WithCause(err).WithRetryable(true)
	}
	if errors.As(err, &pe) {
		return pgError(pe, o, field)
	}
	return mcperr.New(mcperr.Upstream, "database unavailable: the connection to PostgreSQL at %s was lost (%s)",
		p.target, failure(err)).WithCause(err)
}

// connectError says why a connection could not be made: where, and the
// class of the failure; never the user name, password or URL.
func (p *Pool) connectError(err error) *mcperr.Error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return mcperr.New(mcperr.Authentication, "PostgreSQL at %s refused the credentials (SQLSTATE %s): "+
				"check the user name and password of the connection URL", p.target, pe.Code).WithCause(err)
		case pe.Code == "3D000":
			return mcperr.New(mcperr.Upstream, "database unavailable: PostgreSQL at %s has no such database (SQLSTATE 3D000)",
				p.target).WithCause(err).WithRetryable(false)
		case pe.Code == "53300":
			return mcperr.New(mcperr.Upstream, "database unavailable: PostgreSQL at %s has too many connections (SQLSTATE 53300)",
				p.target).WithCause(err)
		case pe.Code == "57P03":
			return mcperr.New(mcperr.Upstream, "database unavailable: PostgreSQL at %s is starting up or shutting down (SQLSTATE 57P03)",
				p.target).WithCause(err)
		}
		return mcperr.New(mcperr.Upstream, "database unavailable: PostgreSQL at %s refused the connection (SQLSTATE %s)",
			p.target, pe.Code).WithCause(err)
	}
	return mcperr.New(mcperr.Upstream, "database unavailable: cannot connect to PostgreSQL at %s: %s", p.target, failure(err)).
		WithCause(err)
}

// failure names the class of a network failure in words that carry no
// address or credential.
func failure(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is PostgreSQL running and listening there?)"
	case errors.As(err, &dns):
		return "the host name does not resolve"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return "the host is unreachable"
	case errors.Is(err, syscall.ENOENT):
		return "no server socket there"
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return "the connection is not permitted"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "the connection timed out"
	case strings.Contains(strings.ToLower(err.Error()), "tls"):
		return "TLS negotiation failed (check sslmode)"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed):
		return "the server closed the connection"
	}
	return "connection failed"
}

// pgError classifies a server error by SQLSTATE. The server's message is
// kept (it names the offending statement, column or value, never the
// connection); detail and hint follow when present.
func pgError(pe *pgconn.PgError, o Options, field string) *mcperr.Error {
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
		return mcperr.New(mcperr.Timeout, "the statement exceeded its %v timeout and was cancelled (%s); %s",
			o.Timeout, msg, narrow).WithCause(pe).WithRetryable(false)
	case pe.Code == "55P03": // lock_not_available
		return mcperr.New(mcperr.Timeout, "the statement timed out waiting for a lock another session holds (%s); retry later", msg).
			WithCause(pe)
	case pe.Code == "25P03": // idle_in_transaction_session_timeout
		return mcperr.New(mcperr.Timeout, "the call's transaction was idle too long (%s)", msg).WithCause(pe)
	case pe.Code == "25006" && o.Mode == ReadOnly: // read_only_sql_transaction
		return mcperr.New(mcperr.PermissionDeny, "refused, queries are read-only: %s", msg).WithCause(pe)
	case pe.Code == "25006":
		return mcperr.New(mcperr.PermissionDeny, "refused, the database is read-only: %s", msg).WithCause(pe)
	case pe.Code == "42601" && strings.Contains(pe.Message, "multiple commands"):
		return mcperr.Invalid(field, nil, "exactly one SQL statement", "only one SQL statement is allowed per call (%s)", msg).
			WithCause(pe)
	case pe.Code == "42501" || class == "28" || class == "25" || class == "2D" || class == "3B":
		// insufficient privilege, authorization, transaction state
		return mcperr.New(mcperr.PermissionDeny, "refused: %s", msg).WithCause(pe)
	case class == "40" || class == "53" || pe.Code == "55006" || pe.Code == "55P02":
		// serialization failure, deadlock, insufficient resources, object in use
		return mcperr.New(mcperr.Upstream, "the database is busy or the statement conflicted with another session; "+
			"retrying may succeed (%s)", msg).WithCause(pe).WithRetryable(true)
	case class == "08" || class == "57" || class == "58" || class == "XX" || class == "F0":
		return mcperr.New(mcperr.Upstream, "database unavailable: %s", msg).WithCause(pe)
	}
	return mcperr.Invalid(field, nil, "", "%s", msg).WithCause(pe)
}
