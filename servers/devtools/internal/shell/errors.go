package shell

import (
	"fmt"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Error is a refused or failed request. It carries its client-facing form
// (it is an [mcperr.Coded]), so the tool returns it as it is. Msg is written
// for the agent: it says which rule refused the request and never carries
// operating-system error text or paths outside the roots.
type Error struct {
	// Code is how a client sees the failure: VALIDATION_ERROR when the
	// request breaks a rule (syntax, program, flag, env name, argument
	// shape), PERMISSION_DENIED when a path (the working directory or an
	// argument) lies outside the roots, NOT_FOUND when the working
	// directory does not exist or an allowed program is not installed,
	// INTERNAL_ERROR when the program could not be started.
	Code  mcperr.Code
	Field string // "command", "argv", "cwd", "env", "timeout_ms"
	Msg   string
	cause error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap exposes the internal cause (for logs; never shown to the agent).
func (e *Error) Unwrap() error { return e.cause }

// MCPError is the form a client sees: Msg under Code, with the argument at
// fault for a validation error.
func (e *Error) MCPError() *mcperr.Error {
	if e.Code == mcperr.Validation {
		return mcperr.Invalid(e.Field, nil, "", "%s", e.Msg).WithCause(e)
	}
	code := e.Code
	if code == "" {
		code = mcperr.Internal
	}
	return mcperr.New(code, "%s", e.Msg).WithCause(e)
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: mcperr.Validation, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func denied(field, format string, args ...any) *Error {
	return &Error{Code: mcperr.PermissionDeny, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// failed is a program that could not be run for a reason of the server's,
// not the request's.
func failed(msg string, cause error) *Error {
	return &Error{Code: mcperr.Internal, Field: "command", Msg: msg, cause: cause}
}
