package fsroot

import (
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// WriteOptions controls Write.
type WriteOptions struct {
	// CreateDirs creates missing parent directories (mode 0755).
	CreateDirs bool
	// Overwrite allows replacing an existing file.
	Overwrite bool
	// Append adds data after an existing file's content (creating the file
	// if it is missing). It excludes Overwrite.
	Append bool
	// Mode sets the permission bits. Zero keeps an existing file's bits and
	// gives new files 0644.
	Mode fs.FileMode
}

const defaultFileMode fs.FileMode = 0o644

// maxLinkHops bounds symlink resolution in Write, as the kernel does.
const maxLinkHops = 40

// beforeRename, when set by tests, runs after the temp file is complete and
// before it replaces the target, to simulate a failure at the last moment.
var beforeRename func() error

// Write replaces (or creates, or appends to) a regular file atomically: the
// new content goes to a temp file in the same directory, is synced, then
// renamed over the target, so readers see the old or the new file, never a
// mix, and a failure leaves the old content and no temp file behind. Append
// is done the same way, by copying the old content first.
//
// If the path is a symlink whose target stays in the root, the target file
// is written and the link is kept: replacing the link would silently fork
// the file the agent meant to edit. The result's Path is the file actually
// written. Links leaving the root are refused.
//
// Overwrite=false is checked before the rename; a file created by someone
// else in between is replaced.
func (f *FS) Write(p string, data []byte, opt WriteOptions) (*FileInfo, error) {
	const op = "write"
	f.writes.Lock()
	defer f.writes.Unlock()
	if opt.Append && opt.Overwrite {
		return nil, invalid(op, p, "append", "append and overwrite exclude each other")
	}
	if opt.Mode&^fs.ModePerm != 0 {
		return nil, invalid(op, p, "mode", "mode may only hold permission bits (0000-0777), not "+opt.Mode.String())
	}
	if int64(len(data)) > f.lim.MaxWriteBytes {
		return nil, invalid(op, p, "content",
			"content is "+sizeText(int64(len(data)))+", over the write cap of "+sizeText(f.lim.MaxWriteBytes))
	}
	t, err := f.resolveChange(op, p)
	if err != nil {
		return nil, err
	}
	r := t.root.r
	dest, err := resolveLinks(r, t.rel)
	if err != nil {
		return nil, wrap(op, p, err)
	}
	if dest != t.rel {
		rt := target{root: t.root, rel: dest, given: p}
		if err := f.guardRoots(op, rt); err != nil {
			return nil, err
		}
	}

	mode := opt.Mode
	fi, err := r.Lstat(dest)
	switch {
	case err == nil:
		if err := regularOnly(op, p, fi); err != nil {
			return nil, err
		}
		if !opt.Overwrite && !opt.Append {
			return nil, &Error{Code: mcperr.Conflict, Op: op, Path: p,
				Msg: quote(p) + " already exists; set overwrite to replace it or append to add to it"}
		}
		if mode == 0 {
			mode = fi.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		opt.Append = false
		if mode == 0 {
			mode = defaultFileMode
		}
		if err := ensureParent(r, dest, opt.CreateDirs); err != nil {
			return nil, wrapParent(op, p, err)
		}
	default:
		return nil, wrap(op, p, err)
	}

	if err := replace(t.root, dest, p, data, mode, opt.Append); err != nil {
		return nil, wrap(op, p, err)
	}
	fi, err = r.Lstat(dest)
	if err != nil {
		return nil, wrap(op, p, err)
	}
	return fileInfo(t.root, dest, fi), nil
}

// ensureParent makes sure rel's directory exists. A parent that exists but
// is not a directory never gets here: the Lstat of rel fails with ENOTDIR.
func ensureParent(r *os.Root, rel string, create bool) error {
	dir := filepath.Dir(rel)
	if dir == "." {
		return nil
	}
	if create {
		return r.MkdirAll(dir, 0o755)
	}
	_, err := r.Stat(dir)
	return err
}

func wrapParent(op, p string, err error) error {
	e := wrap(op, p, err)
	if e.Code == mcperr.NotFound {
		e.Msg = "the parent directory of " + quote(p) + " does not exist; set create_dirs to create it"
	}
	return e
}

// replace writes the new content to a temp file next to rel and renames it
// into place. Every step goes through r, so the temp file cannot land
// outside the root either.
func replace(rt *root, rel, given string, data []byte, mode fs.FileMode, appendOld bool) (err error) {
	r := rt.r
	dir, base := filepath.Split(rel)
	tmp := filepath.Join(dir, tempName(base))
	tf, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tf.Close()
			_ = r.Remove(tmp)
		}
	}()
	if appendOld {
		old, _, err := openRegular("write", target{root: rt, rel: rel, given: given}, os.O_RDONLY)
		if err != nil {
			return err
		}
		_, err = io.Copy(tf, old)
		old.Close()
		if err != nil {
			return err
		}
	}
	if _, err := tf.Write(data); err != nil {
		return err
	}
	// Chmod on the descriptor sets exact bits (no umask) and cannot be
	// redirected by a path swap.
	if err := tf.Chmod(mode); err != nil {
		return err
	}
	if err := tf.Sync(); err != nil {
		return err
	}
	if err := tf.Close(); err != nil {
		return err
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err := r.Rename(tmp, rel); err != nil {
		return err
	}
	// Make the rename itself durable; not every filesystem supports syncing
	// a directory, and the data is already safe, so errors are ignored.
	if d, err := r.Open(dir + "."); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// tempName is hidden, unique and short enough to stay under NAME_MAX even
// for long base names.
func tempName(base string) string {
	if len(base) > 100 {
		base = base[:100]
	}
	var b [8]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return "." + base + ".tmp-" + hex.EncodeToString(b[:])
}

// resolveLinks returns rel with every symlink on the way, including the last
// component, replaced by what it points to, so the caller can put a temp
// file beside the real file and rename over it. The result is clean and
// relative to r; its tail may not exist yet. Each link is read through r and
// ".." is applied only to already-resolved directories, which matches how
// os.Root itself resolves links; a link that would leave r is an error.
func resolveLinks(r *os.Root, rel string) (string, error) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	done := "."
	hops := 0
	for len(parts) > 0 {
		p := parts[0]
		parts = parts[1:]
		switch p {
		case "", ".":
			continue
		case "..":
			if done == "." {
				return "", escapeError(rel)
			}
			done = path.Dir(done)
			continue
		}
		cand := path.Join(done, p)
		fi, err := r.Lstat(filepath.FromSlash(cand))
		if errors.Is(err, fs.ErrNotExist) {
			rest := path.Join(append([]string{cand}, parts...)...)
			if !filepath.IsLocal(filepath.FromSlash(rest)) {
				return "", escapeError(rel)
			}
			return filepath.FromSlash(rest), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = cand
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", &fs.PathError{Op: "resolve", Path: rel, Err: syscall.ELOOP}
		}
		link, err := r.Readlink(filepath.FromSlash(cand))
		if err != nil {
			return "", err
		}
		link = filepath.ToSlash(link)
		if strings.HasPrefix(link, "/") || filepath.IsAbs(link) {
			// os.Root refuses absolute links even when they point inside.
			return "", escapeError(rel)
		}
		parts = append(strings.Split(link, "/"), parts...)
	}
	return filepath.FromSlash(done), nil
}

func escapeError(rel string) error {
	return &fs.PathError{Op: "resolve", Path: rel, Err: errEscapes}
}
