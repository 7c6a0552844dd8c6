package fsroot

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// FileData is a whole regular file, as the file resources serve it.
type FileData struct {
	Path    string // slash-separated, relative to Root
	Root    string
	Data    []byte
	ModTime time.Time
}

// ReadFile returns a regular file's whole content, under the same
// confinement and read cap as Read: a file over the cap is refused.
func (f *FS) ReadFile(p string) (*FileData, error) {
	const op = "read"
	t, file, fi, err := f.openRead(op, p)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	capBytes := f.lim.MaxReadBytes
	if fi.Size() > capBytes {
		return nil, tooLargeFile(p, fi.Size(), capBytes)
	}
	// The file may grow after Stat; read one byte past the cap to notice.
	data, err := io.ReadAll(io.LimitReader(file, capBytes+1))
	if err != nil {
		return nil, wrap(op, p, err)
	}
	if int64(len(data)) > capBytes {
		return nil, tooLargeFile(p, int64(len(data)), capBytes)
	}
	return &FileData{Path: t.slash(), Root: t.root.name, Data: data, ModTime: fi.ModTime()}, nil
}

func tooLargeFile(p string, size, capBytes int64) *Error {
	return invalid("read", p, "uri", quote(p)+" is "+sizeText(size)+", over the read cap of "+sizeText(capBytes)+
		"; read a window of it with the file_read tool")
}

// WatchPaths returns where to watch for changes of the file p names: the
// symlink-free absolute path of p itself and, when p is a symbolic link
// that resolves inside its root, of the file it leads to (or would lead to,
// once created). Each path's
// directory has been opened through the root's handle and compared with the
// directory the path names, so a symbolic link cannot lead a watch outside
// the roots. The file need not exist; its directory must.
//
// A caller that then watches the directories should call WatchPaths again
// once its watches are set and drop them if the answer changed: the tree may
// change in between.
func (f *FS) WatchPaths(p string) ([]string, error) {
	const op = "watch"
	t, err := f.resolve(op, p)
	if err != nil {
		return nil, err
	}
	if t.isRoot() {
		return nil, invalid(op, p, "uri", quote(p)+" is a root directory, not a file")
	}
	own, err := realSpot(op, t)
	if err != nil {
		return nil, err
	}
	out := []string{own}
	if fi, err := t.root.r.Lstat(t.rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A link that leaves the root or loops gets no second watch: it
		// cannot be read either. A dangling one inside is watched where
		// its target would appear.
		if dest, err := resolveLinks(t.root.r, t.rel); err == nil && dest != t.rel {
			if spot, err := realSpot(op, target{root: t.root, rel: dest, given: p}); err == nil && spot != own {
				out = append(out, spot)
			}
		}
	}
	return out, nil
}

// realSpot returns the symlink-free absolute path of t: its directory
// resolved by name, and confirmed to be the directory the root's handle
// reaches for the same relative path.
func realSpot(op string, t target) (string, error) {
	dirRel := filepath.Dir(t.rel)
	d, err := t.root.r.Open(dirRel)
	if err != nil {
		return "", wrap(op, t.given, err)
	}
	held, err := d.Stat()
	_ = d.Close()
	if err != nil {
		return "", wrap(op, t.given, err)
	}
	if !held.IsDir() {
		return "", wrap(op, t.given, syscall.ENOTDIR)
	}
	realRoot, err := filepath.EvalSymlinks(t.root.name)
	if err != nil {
		return "", wrap(op, t.given, err)
	}
	realDir, err := filepath.EvalSymlinks(filepath.Join(t.root.name, dirRel))
	if err != nil {
		return "", wrap(op, t.given, err)
	}
	if _, ok := within(realRoot, realDir); !ok {
		return "", wrap(op, t.given, errEscapes)
	}
	named, err := os.Stat(realDir)
	if err != nil {
		return "", wrap(op, t.given, err)
	}
	if !os.SameFile(held, named) {
		return "", &Error{Code: mcperr.Conflict, Op: op, Path: t.given, Err: errors.New("directory changed during resolution"),
			Msg: "the directory of " + quote(t.given) + " changed while it was being resolved; try again"}
	}
	return filepath.Join(realDir, filepath.Base(t.rel)), nil
}
