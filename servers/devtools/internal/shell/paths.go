package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Confinement of path arguments. A program opens its arguments itself, so
// unlike the file tools there is no os.Root to lean on: every argument that
// names a file is checked twice before the program starts.
//
//  1. Lexically: joined with the working directory and cleaned, it must lie
//     inside a root (as configured or symlink-resolved).
//  2. Physically: resolved through symbolic links (the longest existing
//     prefix of the path, then the rest appended), it must lie inside a
//     symlink-resolved root. This catches a link inside a root that points
//     out, and "link/../x", which the kernel resolves from the link's
//     target, not lexically.
//
// The check cannot stop a concurrent writer from swapping a directory for a
// symbolic link between the check and the program's open (the file tools
// create no symbolic links, so an agent has no direct way to do so).

type roots struct {
	// given are the configured roots, absolute and cleaned; real are the
	// same directories with symbolic links resolved, index for index.
	given, real []string
}

func openRoots(dirs []string) (roots, error) {
	var r roots
	if len(dirs) == 0 {
		return r, errors.New("shell: at least one root directory is required")
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return r, fmt.Errorf("shell: root %q: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return r, fmt.Errorf("shell: root %q: %w", d, err)
		}
		st, err := os.Stat(real)
		if err != nil {
			return r, fmt.Errorf("shell: root %q: %w", d, err)
		}
		if !st.IsDir() {
			return r, fmt.Errorf("shell: root %q is not a directory", d)
		}
		r.given = append(r.given, abs)
		r.real = append(r.real, real)
	}
	return r, nil
}

// within reports whether the clean absolute path p is dir or below it. The
// separator test keeps "/srv/app-evil" out of root "/srv/app".
func within(dir, p string) bool {
	if dir == string(filepath.Separator) {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

func anyWithin(dirs []string, p string) bool {
	for _, d := range dirs {
		if within(d, p) {
			return true
		}
	}
	return false
}

func (r roots) list() string { return strings.Join(r.given, ", ") }

// outermostReal returns the widest symlink-resolved root holding p.
func (r roots) outermostReal(p string) string {
	best := ""
	for _, d := range r.real {
		if within(d, p) && (best == "" || len(d) < len(best)) {
			best = d
		}
	}
	return best
}

// resolve returns p with every symbolic link resolved. A path that does
// not exist resolves its longest existing prefix and appends the rest, so
// a missing file under a linked directory is still judged by where the
// directory really is.
func resolve(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return "", err
	}
	dir, base := filepath.Split(strings.TrimRight(p, string(filepath.Separator)))
	if dir == "" || dir == p || base == "" {
		return "", err
	}
	parent, err := resolve(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, base), nil
}

// checkPath confines one path argument; what names it in messages, like
// `argument "../x"` or `grep -f value "../x"`.
func (r roots) checkPath(cwd, arg, what string) error {
	raw := arg
	if !filepath.IsAbs(raw) {
		raw = cwd + string(filepath.Separator) + arg
	}
	clean := filepath.Clean(raw)
	if !anyWithin(r.given, clean) && !anyWithin(r.real, clean) {
		return denied("command", "%s is outside the allowed roots (%s)", what, r.list())
	}
	real, err := resolve(raw)
	if err != nil {
		return denied("command", "%s cannot be resolved (%s)", what, errText(err))
	}
	if !anyWithin(r.real, real) {
		return denied("command", "%s leads outside the allowed roots (%s) through a symbolic link", what, r.list())
	}
	return nil
}

// cwd resolves the requested working directory: empty means the first
// root, a relative one is taken from the first root. The result is the
// symlink-resolved directory the program runs in.
func (r roots) cwd(dir string) (string, error) {
	if dir == "" {
		return r.real[0], nil
	}
	if strings.ContainsRune(dir, 0) {
		return "", invalid("cwd", "cwd contains a NUL byte")
	}
	raw := dir
	if !filepath.IsAbs(raw) {
		raw = r.given[0] + string(filepath.Separator) + dir
	}
	clean := filepath.Clean(raw)
	if !anyWithin(r.given, clean) && !anyWithin(r.real, clean) {
		return "", denied("cwd", "cwd %q is outside the allowed roots (%s)", dir, r.list())
	}
	real, err := filepath.EvalSymlinks(raw)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", &Error{Code: mcperr.NotFound, Field: "cwd", Msg: fmt.Sprintf("cwd %q does not exist", dir), cause: err}
		}
		return "", &Error{Code: mcperr.PermissionDeny, Field: "cwd", Msg: fmt.Sprintf("cwd %q cannot be resolved (%s)", dir, errText(err)), cause: err}
	}
	if !anyWithin(r.real, real) {
		return "", denied("cwd", "cwd %q leads outside the allowed roots (%s) through a symbolic link", dir, r.list())
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", &Error{Code: mcperr.NotFound, Field: "cwd", Msg: fmt.Sprintf("cwd %q does not exist", dir), cause: err}
	}
	if !st.IsDir() {
		return "", invalid("cwd", "cwd %q is not a directory", dir)
	}
	return real, nil
}

// errText says in a few words of our own why a path could not be
// resolved; the OS error around the errno would name the host path.
func errText(err error) string {
	switch {
	case errors.Is(err, syscall.ELOOP):
		return "too many levels of symbolic links"
	case errors.Is(err, syscall.ENAMETOOLONG):
		return "the path is too long"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied by the operating system"
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "a directory on the way does not exist"
	}
	return "an I/O error occurred"
}
