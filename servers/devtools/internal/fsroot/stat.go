package fsroot

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Entry types as results report them.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

// FileInfo describes one file. Like Lstat, a symlink is described as itself.
type FileInfo struct {
	Path    string // slash-separated, relative to Root; "." for the root
	Root    string
	Name    string
	Type    string // TypeFile, TypeDir, TypeSymlink or TypeOther
	Size    int64
	Mode    string // as fs.FileMode.String, e.g. "-rw-r--r--"
	ModTime time.Time
	// Target is a symlink's text, set only when the link resolves inside
	// its root; dangling or escaping links leave it empty.
	Target string
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return TypeFile
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	}
	return TypeOther
}

func fileInfo(r *root, rel string, fi fs.FileInfo) *FileInfo {
	p := filepath.ToSlash(rel)
	return &FileInfo{
		Path:    p,
		Root:    r.name,
		Name:    path.Base(p),
		Type:    entryType(fi.Mode()),
		Size:    fi.Size(),
		Mode:    fi.Mode().String(),
		ModTime: fi.ModTime(),
	}
}

// Stat describes path without following a final symlink. The root itself
// ("", ".", or its absolute path) may be described.
func (f *FS) Stat(p string) (*FileInfo, error) {
	const op = "stat"
	t, err := f.resolve(op, p)
	if err != nil {
		return nil, err
	}
	fi, err := t.root.r.Lstat(t.rel)
	if err != nil {
		return nil, wrap(op, p, err)
	}
	info := fileInfo(t.root, t.rel, fi)
	if t.isRoot() {
		info.Name = filepath.Base(t.root.name)
	}
	if info.Type == TypeSymlink {
		// Stat through the root fails for links that dangle or escape, so
		// the link text is only shown when it leads somewhere allowed.
		if link, err := t.root.r.Readlink(t.rel); err == nil {
			if _, err := t.root.r.Stat(t.rel); err == nil {
				info.Target = filepath.ToSlash(link)
			}
		}
	}
	return info, nil
}

// DeleteResult says what Delete removed.
type DeleteResult struct {
	Path string // slash-separated, relative to Root
	Root string
	Type string // of the deleted path itself
	// Removed counts the entries removed, the path itself included.
	Removed int
}

// Delete removes a file, a symlink (never what it points to), an empty
// directory, or, with recursive, a directory tree. A root, or any path that
// is or contains a configured root, is refused.
func (f *FS) Delete(p string, recursive bool) (*DeleteResult, error) {
	const op = "delete"
	f.writes.Lock()
	defer f.writes.Unlock()
	t, err := f.resolveChange(op, p)
	if err != nil {
		return nil, err
	}
	r := t.root.r
	fi, err := r.Lstat(t.rel)
	if err != nil {
		return nil, wrap(op, p, err)
	}
	res := &DeleteResult{Path: t.slash(), Root: t.root.name, Type: entryType(fi.Mode()), Removed: 1}
	if !fi.IsDir() || !recursive {
		if err := r.Remove(t.rel); err != nil {
			if fi.IsDir() && (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)) {
				return nil, &Error{Code: mcperr.Conflict, Op: op, Path: p, Err: err,
					Msg: "directory " + quote(p) + " is not empty; set recursive to delete it with its contents"}
			}
			return nil, wrap(op, p, err)
		}
		return res, nil
	}
	// Count first: RemoveAll does not report what it removed. The walk does
	// not follow symlinks, and neither does RemoveAll.
	w := &walker{maxDepth: -1, hidden: true, visit: func(Entry) bool { res.Removed++; return false }}
	if err := w.walkPath(t); err != nil {
		return nil, wrap(op, p, err)
	}
	if err := r.RemoveAll(t.rel); err != nil {
		return nil, wrap(op, p, err)
	}
	return res, nil
}

// hidden reports whether a name is a dotfile.
func hidden(name string) bool { return strings.HasPrefix(name, ".") }
