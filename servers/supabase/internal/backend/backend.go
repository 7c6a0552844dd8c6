// Package backend is the small interface the Supabase tools run on — the
// PostgREST API, PostgreSQL directly, or the embedded database — with what
// every backend shares: results, database errors with their SQLSTATE and
// their mapping onto the fleet's error codes, and the operator's policy of
// exposed schemas and allowed tables and functions.
package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Result is what a read, a write or a call gives back.
type Result struct {
	// Rows are the row objects, columns in table order, each as the
	// backend encoded it: tools page them without decoding them.
	Rows []json.RawMessage
	// RowCount is the number of rows in Rows.
	RowCount int
	// Truncated: there were more rows than the limit.
	Truncated bool
	// Count is the exact number of matching rows, when asked for.
	Count *int64
	// Value is a scalar function's result (Scalar true).
	Value  json.RawMessage
	Scalar bool
}

// TableSummary is one line of a table listing.
type TableSummary struct {
	Schema      string
	Name        string
	Kind        string // "table" or "view"
	RowEstimate int64  // -1 when unknown
	Columns     int
}

// Backend runs the model against one kind of database. Every method checks
// what it is given (a write without filters is refused by every backend).
type Backend interface {
	// Kind is "postgrest", "postgres" or "embedded".
	Kind() string
	Select(ctx context.Context, q *query.Select) (*Result, error)
	Insert(ctx context.Context, q *query.Insert) (*Result, error)
	Update(ctx context.Context, q *query.Update) (*Result, error)
	Delete(ctx context.Context, q *query.Delete) (*Result, error)
	Call(ctx context.Context, q *query.Call) (*Result, error)
	Tables(ctx context.Context, schema string) ([]TableSummary, error)
	Describe(ctx context.Context, schema, table string) (*query.Table, error)
	Close()
}

// DBError is a database error with its SQLSTATE (or PostgREST code) and
// the four fields PostgREST reports.
type DBError struct {
	State   string
	Message string
	Details string
	Hint    string
	Code    mcperr.Code
	Field   string
}

func (e *DBError) Error() string { return e.State + ": " + e.Message }

// MCPError gives the client's view: the database's message, detail and
// hint, and the state.
func (e *DBError) MCPError() *mcperr.Error {
	msg := e.Message
	if e.Details != "" {
		msg += "; detail: " + e.Details
	}
	if e.Hint != "" {
		msg += "; hint: " + e.Hint
	}
	if e.State != "" {
		msg += " [" + e.State + "]"
	}
	me := mcperr.New(e.Code, "%s", msg)
	me.Field = e.Field
	if e.Code == mcperr.Upstream {
		me = me.WithRetryable(true)
	}
	return me
}

// CodeFor maps a SQLSTATE or PostgREST error code onto the fleet's codes.
func CodeFor(state string) mcperr.Code {
	switch state {
	case "23505": // unique_violation
		return mcperr.Conflict
	case "42P01", "PGRST205", "PGRST202", "PGRST200": // no such table, function, relation
		return mcperr.NotFound
	case "42501", "25006", "PGRST106": // privilege, read-only transaction, schema not exposed
		return mcperr.PermissionDeny
	case "57014": // statement timeout
		return mcperr.Timeout
	case "40001", "40P01": // serialization failure, deadlock: retryable
		return mcperr.Upstream
	case "PGRST301", "PGRST302", "PGRST303", "28000", "28P01": // JWT and login failures
		return mcperr.Authentication
	}
	switch {
	case strings.HasPrefix(state, "22"), strings.HasPrefix(state, "23"), strings.HasPrefix(state, "42"),
		strings.HasPrefix(state, "21"), strings.HasPrefix(state, "P0"), strings.HasPrefix(state, "PGRST1"):
		// data, constraint and syntax errors, raised exceptions, request errors
		return mcperr.Validation
	}
	return mcperr.Upstream
}

// NewDBError builds a DBError with the code its state maps to.
func NewDBError(state, message, details, hint string) *DBError {
	return &DBError{State: state, Message: message, Details: details, Hint: hint, Code: CodeFor(state)}
}

// StateMaxAffected is PostgREST's code for a write refused by its
// max-affected preference; every backend uses it for the same refusal.
const StateMaxAffected = "PGRST124"

// TooMany is the refusal of a write that would change more than max rows.
func TooMany(n int64, max int) *DBError {
	e := NewDBError(StateMaxAffected,
		fmt.Sprintf("refused: the filters match %d rows, more than the %d one call may change; nothing was changed", n, max),
		"", "narrow the filters (or raise --max-affected-rows)")
	e.Field = "filters"
	return e
}

// RowsJSON joins JSON objects into an array.
func RowsJSON(objs []json.RawMessage) json.RawMessage {
	n := 2
	for _, o := range objs {
		n += len(o) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, o := range objs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, o...)
	}
	return append(b, ']')
}

// TrimRows splits a JSON array of rows (as PostgreSQL's json_agg or
// PostgREST write it) and keeps limit of them (limit <= 0: all), reporting
// whether rows were cut. The kit's scanner splits them and checks them
// well-formed; they are not decoded.
func TrimRows(rows json.RawMessage, limit int) ([]json.RawMessage, int, bool, error) {
	elems, _, err := kit.FitArray(rows, math.MaxInt)
	if err != nil {
		return nil, 0, false, fmt.Errorf("rows are not a JSON array: %w", err)
	}
	more := limit > 0 && len(elems) > limit
	if more {
		elems = elems[:limit]
	}
	return elems, len(elems), more, nil
}

// RowsResult is the Result holding the rows of the JSON array raw, at most
// limit of them (limit <= 0: all), as TrimRows splits them.
func RowsResult(raw json.RawMessage, limit int) (*Result, error) {
	rows, n, more, err := TrimRows(raw, limit)
	if err != nil {
		return nil, err
	}
	return &Result{Rows: rows, RowCount: n, Truncated: more}, nil
}
