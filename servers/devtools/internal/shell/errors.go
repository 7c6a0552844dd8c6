package shell

import "fmt"

// Kind classifies an [*Error] so the tool layer can map it onto the fleet's
// error codes without parsing messages.
type Kind uint8

const (
	// Invalid: the request breaks a rule (syntax, program, flag, env name,
	// argument shape). Error.Field names the offending argument.
	Invalid Kind = iota
	// Denied: a path (the working directory or an argument) lies outside
	// the roots, directly or through a symbolic link.
	Denied
	// NotFound: the working directory does not exist, or an allowed
	// program is not installed in the configured PATH.
	NotFound
	// Failed: the program could not be started.
	Failed
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case Denied:
		return "denied"
	case NotFound:
		return "not_found"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Error is a refused or failed request. Msg is written for the agent: it
// says which rule refused the request and never carries operating-system
// error text or paths outside the roots.
type Error struct {
	Kind  Kind
	Field string // "command", "argv", "cwd", "env", "timeout_ms"
	Msg   string
	cause error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap exposes the internal cause (for logs; never shown to the agent).
func (e *Error) Unwrap() error { return e.cause }

func invalid(field, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func denied(field, format string, args ...any) *Error {
	return &Error{Kind: Denied, Field: field, Msg: fmt.Sprintf(format, args...)}
}
