//go:build unix

package fsroot

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWrapClassification(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind Kind
		msg  string
	}{
		{&fs.PathError{Op: "x", Path: "/host/p", Err: errEscapes}, Denied, "leaves the root"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: errors.New("path escapes from parent")}, Denied, "leaves the root"},
		{fs.ErrPermission, Denied, "permission denied"},
		{fs.ErrExist, Exists, "already exists"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.ENAMETOOLONG}, Invalid, "too long"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.ENOSPC}, IO, "I/O error: no space left on device"},
		{errors.New("/host/p: weird"), IO, "I/O error"},
	} {
		e := wrap("op", "p", tc.err)
		if e.Kind != tc.kind || !strings.Contains(e.Msg, tc.msg) || strings.Contains(e.Error(), "/host") {
			t.Errorf("wrap(%v) = %v %q", tc.err, e.Kind, e.Msg)
		}
	}
}

// TestSpecialFiles checks that fifos and devices are refused without ever
// blocking on them.
func TestSpecialFiles(t *testing.T) {
	fx := newFixture(t, Limits{})
	if err := syscall.Mkfifo(fx.in("fifo"), 0o644); err != nil {
		t.Fatal("mkfifo:", err)
	}
	fx.symlink(t, "fifo", "fifo-link")
	fx.symlink(t, "/dev/null", "devnull")

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{"fifo", "fifo-link"} {
			_, err := fx.fs.Read(p, ReadOptions{})
			if fe := wantKind(t, err, NotRegular); !strings.Contains(fe.Msg, "fifo") {
				t.Errorf("msg = %q", fe.Msg)
			}
			_, err = fx.fs.Read(p, ReadOptions{Tail: 3})
			wantKind(t, err, NotRegular)
			_, err = fx.fs.Write(p, []byte("x"), WriteOptions{Overwrite: true})
			wantKind(t, err, NotRegular)
			_, err = fx.fs.Write(p, []byte("x"), WriteOptions{Append: true})
			wantKind(t, err, NotRegular)
		}
		for _, p := range []string{"devnull"} {
			_, err := fx.fs.Read(p, ReadOptions{})
			wantKind(t, err, Denied)
			_, err = fx.fs.Write(p, []byte("x"), WriteOptions{Overwrite: true})
			wantKind(t, err, Denied)
		}
		info, err := fx.fs.Stat("fifo")
		if err != nil || info.Type != TypeOther {
			t.Errorf("Stat(fifo) = %+v, %v", info, err)
		}
		// Deleting the fifo removes it like any file.
		res, err := fx.fs.Delete("fifo", false)
		if err != nil || res.Type != TypeOther {
			t.Errorf("Delete(fifo) = %+v, %v", res, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("blocked on a fifo")
	}
}

func TestTypeName(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		fs.ModeSymlink:                    "symbolic link",
		fs.ModeNamedPipe:                  "named pipe (fifo)",
		fs.ModeSocket:                     "socket",
		fs.ModeDevice | fs.ModeCharDevice: "character device",
		fs.ModeDevice:                     "device",
		fs.ModeIrregular:                  "special file",
	} {
		if got := typeName(m); got != want {
			t.Errorf("typeName(%v) = %q, want %q", m, got, want)
		}
	}
}
