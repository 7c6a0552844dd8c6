package fsroot

import (
	"path/filepath"
	"slices"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Refusal is a directory Narrow or Reopen left out, and why. Reason is for
// the server's log: it may name host paths and operating-system causes.
type Refusal struct {
	Dir    string
	Reason string
}

// Narrow returns an FS whose roots are those of dirs that lie inside f's
// roots, in the order given: the view of a client that may only narrow what
// the operator configured. Each directory is opened through its enclosing
// root's handle, so neither ".." nor a symbolic link can carry it outside.
// Directories outside every root, missing, or not directories are left out
// and reported. With none left, the FS is nil. The result shares f's limits
// and write lock, keeps f's roots out of reach of Write and Delete, and
// must be closed by the caller (f stays open).
func (f *FS) Narrow(dirs []string) (*FS, []Refusal) {
	n := f.derive()
	var refused []Refusal
	for _, d := range dirs {
		if err := n.narrowOne(f, d); err != nil {
			refused = append(refused, Refusal{Dir: d, Reason: err.Error()})
		}
	}
	if len(n.roots) == 0 {
		return nil, refused
	}
	return n, refused
}

// Reopen returns an FS on dirs, which need not lie inside f's roots: the
// view of a client whose roots replace a default the operator did not
// choose. Directories that cannot be opened are left out and reported;
// with none left, the FS is nil. The result shares f's limits and write
// lock, keeps f's roots out of reach of Write and Delete, and must be
// closed by the caller.
func (f *FS) Reopen(dirs []string) (*FS, []Refusal) {
	n := f.derive()
	var refused []Refusal
	for _, d := range dirs {
		if err := n.add(d); err != nil {
			refused = append(refused, Refusal{Dir: d, Reason: err.Error()})
		}
	}
	if len(n.roots) == 0 {
		return nil, refused
	}
	return n, refused
}

func (f *FS) derive() *FS {
	n := &FS{lim: f.lim, writes: f.writes, protected: slices.Clone(f.protected)}
	for _, r := range f.roots {
		n.protected = append(n.protected, r.prefixes...)
	}
	return n
}

func (f *FS) narrowOne(parent *FS, dir string) error {
	const op = "narrow"
	if !filepath.IsAbs(dir) {
		return invalid(op, dir, "dirs", "root "+quote(dir)+" is not an absolute path")
	}
	t, err := parent.resolve(op, dir)
	if err != nil {
		return err
	}
	sub, err := t.root.r.OpenRoot(t.rel)
	if err != nil {
		return wrap(op, dir, err)
	}
	info, err := sub.Stat(".")
	if err != nil {
		_ = sub.Close()
		return wrap(op, dir, err)
	}
	if !info.IsDir() {
		_ = sub.Close()
		return &Error{Code: mcperr.Validation, Op: op, Path: dir, Field: "dirs", Msg: quote(dir) + " is not a directory"}
	}
	name := filepath.Clean(dir)
	prefixes := []string{name}
	for _, pre := range t.root.prefixes {
		prefixes = append(prefixes, filepath.Join(pre, t.rel))
	}
	// The resolved spelling only helps pick this root for absolute paths
	// that use it; the handle opened above is what confines.
	if real, err := filepath.EvalSymlinks(name); err == nil {
		prefixes = append(prefixes, real)
	}
	f.addRoot(name, sub, info, prefixes...)
	return nil
}
