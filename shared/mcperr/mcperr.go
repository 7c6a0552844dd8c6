// Package mcperr is the fleet's one error taxonomy. A tool handler returns an
// *Error (or any error, which becomes INTERNAL_ERROR); the kit turns it into a
// tool result with isError and a structured body that a model can act on:
//
//	{"code":"VALIDATION_ERROR","message":"…","data":{"field":"path","value":"..","expected":"…","retryable":false}}
//
// Protocol faults (bad JSON, unknown method) stay JSON-RPC errors; they are
// produced by the transport, not here.
package mcperr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Code names a class of failure. The set is closed: clients branch on it.
type Code string

const (
	Validation     Code = "VALIDATION_ERROR"
	NotFound       Code = "NOT_FOUND"
	PermissionDeny Code = "PERMISSION_DENIED"
	Authentication Code = "AUTHENTICATION_ERROR"
	RateLimit      Code = "RATE_LIMIT_ERROR"
	Timeout        Code = "TIMEOUT_ERROR"
	Upstream       Code = "UPSTREAM_ERROR"
	Transport      Code = "TRANSPORT_ERROR"
	Conflict       Code = "CONFLICT"
	Internal       Code = "INTERNAL_ERROR"
	Cancelled      Code = "CANCELLED"
)

// Codes lists every code, in the order docs and metrics show them.
var Codes = []Code{Validation, NotFound, PermissionDeny, Authentication, RateLimit,
	Timeout, Upstream, Transport, Conflict, Internal, Cancelled}

// retryableByDefault says whether a caller may repeat the same call and hope
// for a different outcome, when the error itself does not say.
func (c Code) retryableByDefault() bool {
	switch c {
	case RateLimit, Timeout, Upstream, Transport:
		return true
	}
	return false
}

// Error is a tool failure a client may see. Message and Data must never hold
// secrets or raw upstream bodies: they are shown to the model verbatim.
type Error struct {
	Code    Code
	Message string
	// Field, Value and Expected locate a bad argument.
	Field    string
	Value    any
	Expected string
	// RetryAfter, when set, is how long the caller should wait.
	RetryAfter time.Duration
	retryable  *bool
	// cause is kept for logs and errors.Is; it is never sent to the client.
	cause error
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (field %q)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap exposes the internal cause to errors.Is/As on the server side.
func (e *Error) Unwrap() error { return e.cause }

// Retryable reports whether repeating the call may succeed.
func (e *Error) Retryable() bool {
	if e.retryable != nil {
		return *e.retryable
	}
	return e.Code.retryableByDefault()
}

// WithRetryable overrides the code's default retry advice.
func (e *Error) WithRetryable(r bool) *Error { e.retryable = &r; return e }

// WithCause records the internal cause (logged, never shown).
func (e *Error) WithCause(err error) *Error { e.cause = err; return e }

// New makes an error of the given code.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid reports a bad argument: which field, what was given, what was expected.
func Invalid(field string, value any, expected, format string, args ...any) *Error {
	return &Error{Code: Validation, Message: fmt.Sprintf(format, args...), Field: field, Value: value, Expected: expected}
}

// Coded is implemented by a package's own error types that know how a
// client should see them, so that no tool layer needs a mapping table: a
// confinement error says NOT_FOUND or PERMISSION_DENIED itself.
type Coded interface {
	error
	MCPError() *Error
}

// Wrap classifies an arbitrary error. An *Error or a Coded error inside the
// chain gives its own form; context errors become TIMEOUT/CANCELLED; anything
// else is INTERNAL with a generic message, because its text may carry paths,
// hosts or secrets.
func Wrap(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var c Coded
	if errors.As(err, &c) {
		if e := c.MCPError(); e != nil {
			if e.cause == nil {
				e.cause = err
			}
			return e
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: Timeout, Message: "the operation timed out", cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: Cancelled, Message: "the request was cancelled", cause: err}
	}
	return &Error{Code: Internal, Message: "internal error", cause: err}
}

// Body is the wire shape of a tool error.
type Body struct {
	Code    Code     `json:"code"`
	Message string   `json:"message"`
	Data    BodyData `json:"data"`
}

// BodyData carries the structured details of a Body.
type BodyData struct {
	Field             string `json:"field,omitempty"`
	Value             any    `json:"value,omitempty"`
	Expected          string `json:"expected,omitempty"`
	Retryable         bool   `json:"retryable"`
	RetryAfterSeconds *int   `json:"retry_after_seconds,omitempty"`
}

// Body renders the client-visible form of e.
func (e *Error) Body() Body {
	b := Body{Code: e.Code, Message: e.Message, Data: BodyData{
		Field: e.Field, Value: e.Value, Expected: e.Expected, Retryable: e.Retryable(),
	}}
	if e.RetryAfter > 0 {
		s := int((e.RetryAfter + time.Second - 1) / time.Second)
		b.Data.RetryAfterSeconds = &s
	}
	return b
}

// JSON renders Body as compact JSON.
func (e *Error) JSON() []byte {
	raw, err := json.Marshal(e.Body())
	if err != nil {
		// Value is the only field that can fail to marshal; drop it.
		b := e.Body()
		b.Data.Value = fmt.Sprint(b.Data.Value)
		raw, _ = json.Marshal(b)
	}
	return raw
}
