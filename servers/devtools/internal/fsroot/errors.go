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
)

// Kind classifies an [*Error] so the tool layer can map it onto its own
// error codes without parsing messages.
type Kind uint8

const (
	// IO is any failure not covered below (disk full, I/O error, closed FS).
	IO Kind = iota
	// NotFound: the path, or a directory on the way to it, does not exist.
	NotFound
	// Invalid: a bad argument; Error.Field names it.
	Invalid
	// Denied: the path is outside every root, escapes through ".." or a
	// symlink, names a root where that is not allowed, or the OS refused.
	Denied
	// TooLarge: a size cap was hit; the message states the cap.
	TooLarge
	// NotRegular: the path is a device, fifo, socket or similar.
	NotRegular
	// NotDir: a directory was required.
	NotDir
	// Exists: the target exists and overwriting was not requested.
	Exists
	// NotEmpty: a directory has entries and recursion was not requested.
	NotEmpty
	// IsDir: a file was required but the path is a directory.
	IsDir
)

var kindNames = [...]string{
	IO:         "io",
	NotFound:   "not_found",
	Invalid:    "invalid",
	Denied:     "denied",
	TooLarge:   "too_large",
	NotRegular: "not_regular",
	NotDir:     "not_dir",
	Exists:     "exists",
	NotEmpty:   "not_empty",
	IsDir:      "is_dir",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Error is the only error type the FS methods return. Msg is written for the
// agent: it names Path as the caller gave it and never embeds OS error text.
// Err keeps the underlying cause for server-side logs and errors.Is.
type Error struct {
	Kind  Kind
	Op    string
	Path  string
	Field string // for Invalid: the argument at fault ("path", "offset", ...)
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Op + ": " + e.Msg
	}
	return e.Op + " " + strconv.Quote(e.Path) + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets callers test kinds with the io/fs sentinels even when the error was
// decided here rather than returned by the OS.
func (e *Error) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e.Kind == NotFound
	case fs.ErrExist:
		return e.Kind == Exists
	case fs.ErrPermission:
		return e.Kind == Denied
	case fs.ErrInvalid:
		return e.Kind == Invalid
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
		e.Kind, e.Msg = Denied, "path leaves the root directory (through .. or a symbolic link)"
	case errors.Is(err, fs.ErrNotExist):
		e.Kind, e.Msg = NotFound, "no such file or directory"
	case errors.Is(err, syscall.ENOTDIR):
		e.Kind, e.Msg = NotDir, "a component of the path is not a directory"
	case errors.Is(err, syscall.EISDIR):
		e.Kind, e.Msg = IsDir, "is a directory"
	case errors.Is(err, syscall.ENOTEMPTY):
		e.Kind, e.Msg = NotEmpty, "directory is not empty"
	case errors.Is(err, fs.ErrExist):
		e.Kind, e.Msg = Exists, "already exists"
	case errors.Is(err, fs.ErrPermission):
		e.Kind, e.Msg = Denied, "permission denied by the operating system"
	case errors.Is(err, syscall.ELOOP):
		e.Kind, e.Field, e.Msg = Invalid, "path", "too many levels of symbolic links"
	case errors.Is(err, syscall.ENAMETOOLONG):
		e.Kind, e.Field, e.Msg = Invalid, "path", "path or file name too long"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Msg = IO, "stopped: "+err.Error()
	case errors.Is(err, fs.ErrClosed):
		e.Kind, e.Msg = IO, "filesystem is closed"
	default:
		e.Kind, e.Msg = IO, "I/O error"
		var errno syscall.Errno
		if errors.As(err, &errno) {
			// An errno's text is generic ("no space left on device"), unlike
			// the PathError around it, which would name the path.
			e.Msg += ": " + errno.Error()
		}
	}
	return e
}

func invalid(op, p, field, msg string) *Error {
	return &Error{Kind: Invalid, Op: op, Path: p, Field: field, Msg: msg}
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
