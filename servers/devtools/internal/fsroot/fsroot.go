// Package fsroot is the confined filesystem behind the devtools file tools
// (file_read, file_write, file_list, file_delete, file_info, file_search).
//
// An AI agent chooses the paths, so confinement cannot depend on string
// checks alone: every filesystem access goes through an [os.Root] opened on
// one of the configured directories. os.Root resolves each path component
// relative to a directory handle and refuses ".." and symbolic links that
// would leave the root, even if the tree changes while an operation runs.
// The one exception is a read of a regular file directly in a root: it is
// opened relative to the root's own directory handle without following
// links (a single name resolves nothing); anything else falls back to
// os.Root. The lexical checks done here come first only to give clear
// errors and to pick which root an absolute path belongs to; they are never
// what keeps a path inside.
//
// Paths are either relative, and then resolved against the first root, or
// absolute, and then they must lie inside one of the roots (the most
// specific one when roots nest). A path is cleaned lexically first, as by
// filepath.Clean, so "link/.." is the directory holding link, wherever link
// points; a path that cleans to a root may be listed, searched and
// described, but never written or deleted. Results name
// files by slash-separated paths relative to their root (see [ReadResult],
// [FileInfo]) plus the root itself, which is configuration the agent is
// shown anyway. Errors are [*Error] values that carry their client-facing
// code (they implement mcperr.Coded); their messages name the path as the
// caller gave it and never carry operating-system error text, which could
// reveal other host paths.
package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Limits bounds what a single call may cost. A zero field takes its value
// from [DefaultLimits].
type Limits struct {
	// MaxReadBytes caps the bytes Read returns (before encoding).
	MaxReadBytes int64
	// MaxWriteBytes caps the bytes Write accepts in one call.
	MaxWriteBytes int64
	// MaxListEntries caps the entries one List returns.
	MaxListEntries int
	// MaxDepth caps how deep List and Search descend (1 = direct children).
	MaxDepth int
	// MaxSearchResults caps the matches one Search returns.
	MaxSearchResults int
}

// DefaultLimits returns the limits used for any field left zero.
func DefaultLimits() Limits {
	return Limits{
		MaxReadBytes:     10 << 20,
		MaxWriteBytes:    10 << 20,
		MaxListEntries:   10000,
		MaxDepth:         10,
		MaxSearchResults: 1000,
	}
}

func (l Limits) withDefaults() (Limits, error) {
	d := DefaultLimits()
	if l.MaxReadBytes < 0 || l.MaxWriteBytes < 0 || l.MaxListEntries < 0 || l.MaxDepth < 0 || l.MaxSearchResults < 0 {
		return l, &Error{Code: mcperr.Validation, Op: "open", Field: "limits", Msg: "limits must not be negative"}
	}
	if l.MaxReadBytes == 0 {
		l.MaxReadBytes = d.MaxReadBytes
	}
	if l.MaxWriteBytes == 0 {
		l.MaxWriteBytes = d.MaxWriteBytes
	}
	if l.MaxListEntries == 0 {
		l.MaxListEntries = d.MaxListEntries
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxSearchResults == 0 {
		l.MaxSearchResults = d.MaxSearchResults
	}
	return l, nil
}

// FS is a set of root directories. It is safe for concurrent use.
type FS struct {
	roots []*root
	lim   Limits

	// writes is held exclusively by Write and Delete, and shared by
	// HoldWrites: a reader that must see the tree unchanged for a while
	// (the shell's git runs) keeps the file tools from changing it. An FS
	// made by Narrow or Reopen shares its parent's, so one hold covers every
	// view of the same files.
	writes *sync.RWMutex
	// protected are root spellings of the FS this one was derived from:
	// they stay out of reach of Write and Delete, like its own roots.
	protected []string

	closeOnce sync.Once
	closeErr  error
}

type root struct {
	// name is the absolute, cleaned directory as Roots reports it.
	name string
	// prefixes are the spellings an absolute path may use to address this
	// root: name, any duplicate configured spelling, and the symlink-free
	// form (agents often see resolved paths in tool output).
	prefixes []string
	r        *os.Root
	info     os.FileInfo
	// dir is the root's directory opened through r, and dirFD its
	// descriptor, for files read directly in it (openDirect); nil where
	// that is not available or once closed. dirMu is held shared while
	// dirFD is used and exclusively to close dir.
	dirMu sync.RWMutex
	dir   *os.File
	dirFD int
}

// Open opens each directory as a root. Directories are made absolute and
// cleaned; ones that name an already-listed directory (even through a
// symlink) are merged into it. The first remaining directory is the one
// relative paths resolve against. Zero fields in lim take their defaults.
//
// Errors from Open concern operator configuration, not agent input, so they
// include the host path and the operating-system cause.
func Open(dirs []string, lim Limits) (*FS, error) {
	lim, err := lim.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, &Error{Code: mcperr.Validation, Op: "open", Field: "dirs", Msg: "at least one root directory is required"}
	}
	f := &FS{lim: lim, writes: &sync.RWMutex{}}
	for _, d := range dirs {
		if err := f.add(d); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return f, nil
}

func (f *FS) add(dir string) error {
	if dir == "" || strings.IndexByte(dir, 0) >= 0 {
		return &Error{Code: mcperr.Validation, Op: "open", Field: "dirs", Path: dir,
			Msg: "root directory " + strconv.Quote(dir) + " must be a non-empty path without NUL bytes"}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return &Error{Code: mcperr.Validation, Op: "open", Field: "dirs", Path: dir,
			Msg: "cannot make root directory " + strconv.Quote(dir) + " absolute: " + err.Error(), Err: err}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return openErr(dir, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return openErr(dir, err)
	}
	// Stat through the handle, not the name, so the identity recorded is the
	// directory actually opened.
	info, err := r.Stat(".")
	if err != nil {
		_ = r.Close()
		return openErr(dir, err)
	}
	probeEscape(r)
	f.addRoot(abs, r, info, abs, resolved)
	return nil
}

// addRoot adds an opened directory under name, or merges it (and its
// prefixes) into a root that is the same directory.
func (f *FS) addRoot(name string, r *os.Root, info os.FileInfo, prefixes ...string) {
	for _, old := range f.roots {
		if os.SameFile(old.info, info) {
			_ = r.Close()
			for _, p := range prefixes {
				old.addPrefix(p)
			}
			return
		}
	}
	nr := &root{name: name, r: r, info: info}
	nr.dir, nr.dirFD = rootDir(r)
	for _, p := range prefixes {
		nr.addPrefix(p)
	}
	f.roots = append(f.roots, nr)
}

// openErr reports a root that cannot be opened. It is for the operator, so
// it names the directory and the operating system's reason.
func openErr(dir string, err error) error {
	code := mcperr.Internal
	switch {
	case errors.Is(err, os.ErrNotExist):
		code = mcperr.NotFound
	case errors.Is(err, os.ErrPermission):
		code = mcperr.PermissionDeny
	}
	reason := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err // the PathError would name the directory a second time
	}
	return &Error{Code: code, Op: "open", Field: "dirs", Path: dir,
		Msg: fmt.Sprintf("cannot open root directory %q: %v", dir, reason), Err: err}
}

func (r *root) addPrefix(p string) {
	for _, q := range r.prefixes {
		if q == p {
			return
		}
	}
	r.prefixes = append(r.prefixes, p)
}

// Close closes every root. Later calls return the first call's result.
func (f *FS) Close() error {
	f.closeOnce.Do(func() {
		var errs []error
		for _, r := range f.roots {
			r.dirMu.Lock()
			if r.dir != nil {
				errs = append(errs, r.dir.Close())
				r.dir = nil
			}
			r.dirMu.Unlock()
			errs = append(errs, r.r.Close())
		}
		f.closeErr = errors.Join(errs...)
	})
	return f.closeErr
}

// Roots returns the root directories, first (the one relative paths use)
// first.
func (f *FS) Roots() []string {
	out := make([]string, len(f.roots))
	for i, r := range f.roots {
		out[i] = r.name
	}
	return out
}

// HoldWrites blocks Write and Delete until the returned function is
// called; several holders may hold at once. The shell holds it while a git
// command is checked and run, so that the repository configuration it
// checked is the one git reads: otherwise a file_write racing the command
// could plant a filter or diff driver between the check and the run.
func (f *FS) HoldWrites() (release func()) {
	f.writes.RLock()
	return f.writes.RUnlock
}

// Limits returns the effective limits.
func (f *FS) Limits() Limits { return f.lim }

// target is a resolved path argument: a root and a clean path inside it.
type target struct {
	root  *root
	rel   string // filepath.Clean form, "." for the root itself
	given string
}

// slash is rel as results report it.
func (t target) slash() string { return filepath.ToSlash(t.rel) }

func (t target) isRoot() bool { return t.rel == "." }

// resolve maps a path argument onto a root. It only decides which root and
// rejects what is lexically outside; os.Root does the enforcement.
func (f *FS) resolve(op, p string) (target, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return target{}, invalid(op, p, "path", "path "+quote(p)+" contains a NUL byte")
	}
	if p == "" {
		return target{root: f.roots[0], rel: ".", given: p}, nil
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		var best *root
		bestRel, bestLen := "", -1
		for _, r := range f.roots {
			for _, pre := range r.prefixes {
				if rel, ok := within(pre, c); ok && len(pre) > bestLen {
					best, bestRel, bestLen = r, rel, len(pre)
				}
			}
		}
		if best == nil {
			return target{}, &Error{Code: mcperr.PermissionDeny, Op: op, Path: p,
				Msg: "path is outside the allowed roots " + strings.Join(f.Roots(), ", ")}
		}
		return target{root: best, rel: bestRel, given: p}, nil
	}
	c := filepath.Clean(p)
	if c != "." && !filepath.IsLocal(c) {
		return target{}, &Error{Code: mcperr.PermissionDeny, Op: op, Path: p, Msg: "path escapes the root directory through .."}
	}
	return target{root: f.roots[0], rel: c, given: p}, nil
}

// within reports whether the clean absolute path p is dir or lies beneath it
// and returns p relative to dir. The separator boundary matters: /data/proj
// must not contain /data/proj-evil.
func within(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return p[len(prefix):], true
}

// resolveChange is resolve for an operation that changes what p names:
// guardRoots must pass too.
func (f *FS) resolveChange(op, p string) (target, error) {
	t, err := f.resolve(op, p)
	if err != nil {
		return target{}, err
	}
	return t, f.guardRoots(op, t)
}

// guardRoots refuses a destructive operation on a path that is, or contains,
// a configured root, which may otherwise be reachable as an ordinary
// subdirectory of another root.
func (f *FS) guardRoots(op string, t target) error {
	if t.isRoot() {
		return &Error{Code: mcperr.PermissionDeny, Op: op, Path: t.given, Msg: "refusing to " + op + " a root directory"}
	}
	for _, pre := range t.root.prefixes {
		abs := filepath.Join(pre, t.rel)
		for _, r := range f.roots {
			for _, rp := range r.prefixes {
				if _, ok := within(abs, rp); ok {
					return &Error{Code: mcperr.PermissionDeny, Op: op, Path: t.given,
						Msg: "refusing to " + op + " a path that is or contains the root " + r.name}
				}
			}
		}
		for _, rp := range f.protected {
			if _, ok := within(abs, rp); ok {
				return &Error{Code: mcperr.PermissionDeny, Op: op, Path: t.given,
					Msg: "refusing to " + op + " a path that is or contains a configured root directory"}
			}
		}
	}
	return nil
}
