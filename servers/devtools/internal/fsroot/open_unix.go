//go:build unix

package fsroot

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openNoBlock keeps an open from hanging on a fifo (or a device) that was
// swapped in after the type check; the descriptor is checked right after.
// O_NOCTTY stops a terminal from becoming our controlling tty.
const openNoBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY

// rootDir opens the root's own directory through its handle, for
// openDirect.
func rootDir(r *os.Root) (dir *os.File, fd int) {
	d, err := r.Open(".")
	if err != nil {
		return nil, -1
	}
	return d, int(d.Fd())
}

// openDirect opens name, a file directly inside the root r, with the same
// checks as openRegular but on the bare descriptor: stat without following,
// open without following, fstat, each relative to the root's directory,
// which confines a single path component with no resolution at all. An
// os.File would cost an allocation with a finalizer and a failed attempt to
// register the file with the poller (a system call per read) for a
// descriptor that lives for one call. The directory stays open meanwhile
// (Close waits for r.dirMu), so its descriptor number cannot have been
// reused. ok is false when the name is not a plain regular file (a
// symbolic link, a directory, a device, a path of several components, a
// missing file), the root is closed, or anything fails: the caller then
// takes the os.Root path, which follows links that stay inside and gives
// the errors.
func openDirect(r *root, name string) (h handle, fi fs.FileInfo, ok bool) {
	if strings.IndexByte(name, filepath.Separator) >= 0 || name == "." || name == ".." {
		return nil, nil, false
	}
	r.dirMu.RLock()
	defer r.dirMu.RUnlock()
	if r.dir == nil {
		return nil, nil, false
	}
	return openAt(r.dirFD, name)
}

// openAt is openDirect on the directory descriptor dfd.
func openAt(dfd int, name string) (handle, fs.FileInfo, bool) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, false
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|openNoBlock, 0)
		return err
	})
	if err != nil {
		return nil, nil, false
	}
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = unix.Close(fd)
		return nil, nil, false
	}
	return &rawFile{fd: fd}, &rawInfo{name: name, size: st.Size, mode: fs.FileMode(st.Mode & 0o777),
		mod: time.Unix(st.Mtim.Unix())}, true
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// rawFile is a regular file open for reading on a bare descriptor.
type rawFile struct{ fd int }

func (f *rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	err := ignoringEINTR(func() (err error) { n, err = unix.Read(f.fd, p); return err })
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (f *rawFile) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		var n int
		err := ignoringEINTR(func() (err error) { n, err = unix.Pread(f.fd, p[done:], off+int64(done)); return err })
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}

func (f *rawFile) Close() error { return unix.Close(f.fd) }

// rawInfo is what openDirect's fstat found.
type rawInfo struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
}

func (i *rawInfo) Name() string       { return i.name }
func (i *rawInfo) Size() int64        { return i.size }
func (i *rawInfo) Mode() fs.FileMode  { return i.mode }
func (i *rawInfo) ModTime() time.Time { return i.mod }
func (i *rawInfo) IsDir() bool        { return false }
func (i *rawInfo) Sys() any           { return nil }
