package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
)

// Error is the only error type the FS methods return. It carries its
// client-facing form (it is an [mcperr.Coded]), so a tool returns it as it
// is. Msg is written for the agent: a whole sentence that names the path as
// the caller gave it (never when the path was refused for leaving the
// roots), states the cap that was hit, and never embeds operating-system
// error text, which could name other host paths. Err keeps the underlying
// cause for server-side logs and errors.Is.
type Error struct {
	// Code is how a client sees the failure: NOT_FOUND, PERMISSION_DENIED
	// (outside the roots, an escape, a root where none is allowed, or the
	// OS refusing), CONFLICT (exists, not empty), VALIDATION_ERROR (Field
	// names the argument), TIMEOUT_ERROR or CANCELLED (the walk was
	// stopped), INTERNAL_ERROR (I/O failures).
	Code mcperr.Code
	// Op is the operation: "read", "write", "list", ...
	Op string
	// Path is the path argument as the caller gave it.
	Path string
	// Field is the argument at fault ("path", "offset", "pattern", ...);
	// set for VALIDATION_ERROR only.
	Field string
	Msg   string
	Err   error
}

// Error is Msg, which already says what failed on which path.
func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// MCPError is the form a client sees: Msg under Code, with the field (and,
// for a bad path, the path) of a validation error.
func (e *Error) MCPError() *mcperr.Error {
	if e.Code == mcperr.Validation {
		field := e.Field
		if field == "" {
			field = "path"
		}
		var value any
		if field == "path" && e.Path != "" {
			value = e.Path
		}
		return mcperr.Invalid(field, value, "", "%s", e.Msg).WithCause(e)
	}
	code := e.Code
	if code == "" {
		code = mcperr.Internal
	}
	return mcperr.New(code, "%s", e.Msg).WithCause(e)
}

// Is lets callers test errors with the io/fs sentinels even when the error
// was decided here rather than returned by the OS.
func (e *Error) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e.Code == mcperr.NotFound
	case fs.ErrExist:
		return e.Code == mcperr.Conflict
	case fs.ErrPermission:
		return e.Code == mcperr.PermissionDeny
	case fs.ErrInvalid:
		return e.Code == mcperr.Validation
	}
	return false
}

// escapeErr holds os.Root's unexported "path escapes from parent" sentinel,
// captured from a real Root so classification does not depend on its text.
var (
	escapeOnce sync.Once
	escapeErr  error
)

func probeEscape(r *os.Root) {
	escapeOnce.Do(func() {
		_, err := r.Lstat("..")
		var pe *fs.PathError
		if errors.As(err, &pe) {
			escapeErr = pe.Err
		}
	})
}

// errEscapes marks escapes found by this package's own link resolution.
var errEscapes = errors.New("path escapes from parent")

func isEscape(err error) bool {
	if errors.Is(err, errEscapes) {
		return true
	}
	if escapeErr != nil && errors.Is(err, escapeErr) {
		return true
	}
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent"
}

// msgEscapes is the refusal for a path that leaves its root. Like every
// refusal for leaving the roots, it does not repeat the path: what was
// asked for outside is not echoed back.
const msgEscapes = "path leaves the root directory (through .. or a symbolic link)"

// wrap turns an error from os.Root into an *Error for path p (as given).
func wrap(op, p string, err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		if fe.Op == "" {
			fe.Op = op
		}
		if fe.Path == "" {
			fe.Path = p
		}
		return fe
	}
	e := &Error{Op: op, Path: p, Err: err}
	switch {
	case isEscape(err):
		e.Code, e.Msg = mcperr.PermissionDeny, msgEscapes
	case errors.Is(err, fs.ErrNotExist):
		e.Code, e.Msg = mcperr.NotFound, quote(p)+" does not exist"
	case errors.Is(err, syscall.ENOTDIR):
		e.Code, e.Field, e.Msg = mcperr.Validation, "path", "a component of "+quote(p)+" is not a directory"
	case errors.Is(err, syscall.EISDIR):
		e.Code, e.Field, e.Msg = mcperr.Validation, "path", quote(p)+" is a directory, not a file"
	case errors.Is(err, syscall.ENOTEMPTY):
		e.Code, e.Msg = mcperr.Conflict, "directory "+quote(p)+" is not empty"
	case errors.Is(err, fs.ErrExist):
		e.Code, e.Msg = mcperr.Conflict, quote(p)+" already exists"
	case errors.Is(err, fs.ErrPermission):
		e.Code, e.Msg = mcperr.PermissionDeny, "the operating system denied access to "+quote(p)
	case errors.Is(err, syscall.ELOOP):
		e.Code, e.Field, e.Msg = mcperr.Validation, "path", quote(p)+" goes through too many levels of symbolic links"
	case errors.Is(err, syscall.ENAMETOOLONG):
		e.Code, e.Field, e.Msg = mcperr.Validation, "path", quote(p)+" is too long for the file system (the path or one of its names)"
	case errors.Is(err, context.DeadlineExceeded):
		e.Code, e.Msg = mcperr.Timeout, op+" of "+quote(p)+" stopped: the call's time limit was reached"
	case errors.Is(err, context.Canceled):
		e.Code, e.Msg = mcperr.Cancelled, op+" of "+quote(p)+" stopped: the request was cancelled"
	case errors.Is(err, fs.ErrClosed):
		e.Code, e.Msg = mcperr.Internal, "cannot "+op+" "+quote(p)+": the server's file system access is closed"
	default:
		e.Code, e.Msg = mcperr.Internal, "cannot "+op+" "+quote(p)+": "+ioReason(err)
	}
	return e
}

// ioReason says in a few words of our own why an I/O operation failed; the
// OS error around the errno would name the host path.
func ioReason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.Is(err, syscall.EDQUOT):
		return "the disk quota is exhausted"
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "the server has too many open files"
	case errors.Is(err, syscall.EBUSY), errors.Is(err, syscall.ETXTBSY):
		return "the file is busy"
	}
	return "an I/O error occurred"
}

func invalid(op, p, field, msg string) *Error {
	return &Error{Code: mcperr.Validation, Op: op, Path: p, Field: field, Msg: msg}
}

// maxQuoted bounds how much of a path a message repeats.
const maxQuoted = 256

// quote names a path argument in a message as the caller gave it; the
// empty path, which means the first root, reads as such.
func quote(p string) string {
	if p == "" {
		return "the root directory"
	}
	if len(p) > maxQuoted {
		return strconv.Quote(textcut.Prefix(p, maxQuoted)) + "…"
	}
	return strconv.Quote(p)
}

// sizeText states a byte count exactly and readably, e.g. "10485760 bytes (10 MiB)".
func sizeText(n int64) string {
	return fmt.Sprintf("%d bytes (%s)", n, human(n))
}

func human(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64)
	if len(v) > 2 && v[len(v)-2:] == ".0" {
		v = v[:len(v)-2]
	}
	return v + " " + string("KMGTP"[exp]) + "iB"
}
