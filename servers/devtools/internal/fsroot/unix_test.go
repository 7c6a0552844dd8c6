//go:build unix

package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

func TestWrapClassification(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code mcperr.Code
		msg  string
	}{
		{&fs.PathError{Op: "x", Path: "/host/p", Err: errEscapes}, mcperr.PermissionDeny, "leaves the root"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: errors.New("path escapes from parent")}, mcperr.PermissionDeny, "leaves the root"},
		{fs.ErrPermission, mcperr.PermissionDeny, `the operating system denied access to "p"`},
		{fs.ErrExist, mcperr.Conflict, "already exists"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.ENAMETOOLONG}, mcperr.Validation, "too long"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.ENOSPC}, mcperr.Internal, `cannot op "p": the disk is full`},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.EROFS}, mcperr.Internal, "read-only"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.EDQUOT}, mcperr.Internal, "quota"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.EMFILE}, mcperr.Internal, "too many open files"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.ETXTBSY}, mcperr.Internal, "busy"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.EIO}, mcperr.Internal, "an I/O error occurred"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.ELOOP}, mcperr.Validation, "too many levels of symbolic links"},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.EISDIR}, mcperr.Validation, `"p" is a directory`},
		{&fs.PathError{Op: "x", Path: "/host/p", Err: syscall.ENOTEMPTY}, mcperr.Conflict, `directory "p" is not empty`},
		{context.DeadlineExceeded, mcperr.Timeout, "time limit"},
		{errors.New("/host/p: weird"), mcperr.Internal, "an I/O error occurred"},
	} {
		e := wrap("op", "p", tc.err)
		if e.Code != tc.code || !strings.Contains(e.Msg, tc.msg) || strings.Contains(e.Error(), "/host") {
			t.Errorf("wrap(%v) = %v %q", tc.err, e.Code, e.Msg)
		}
		if me := e.MCPError(); me.Code != tc.code || me.Message != e.Msg || strings.Contains(string(me.JSON()), "/host") {
			t.Errorf("client form of wrap(%v) = %s", tc.err, me.JSON())
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
			if fe := wantCode(t, err, mcperr.Validation); !strings.Contains(fe.Msg, "fifo") {
				t.Errorf("msg = %q", fe.Msg)
			}
			_, err = fx.fs.Read(p, ReadOptions{Tail: 3})
			wantCode(t, err, mcperr.Validation)
			_, err = fx.fs.Write(p, []byte("x"), WriteOptions{Overwrite: true})
			wantCode(t, err, mcperr.Validation)
			_, err = fx.fs.Write(p, []byte("x"), WriteOptions{Append: true})
			wantCode(t, err, mcperr.Validation)
		}
		for _, p := range []string{"devnull"} {
			_, err := fx.fs.Read(p, ReadOptions{})
			wantCode(t, err, mcperr.PermissionDeny)
			_, err = fx.fs.Write(p, []byte("x"), WriteOptions{Overwrite: true})
			wantCode(t, err, mcperr.PermissionDeny)
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

// TestReadDirectMatchesRoot reads files directly in a root both on a bare
// descriptor (openDirect) and through os.Root: every window, encoding and
// refusal must come out the same, and only plain regular files may take
// the direct path.
func TestReadDirectMatchesRoot(t *testing.T) {
	fx := newFixture(t, Limits{MaxReadBytes: 1 << 20})
	fx.write(t, "ten.txt", lines(10))
	fx.write(t, "big.txt", strings.Repeat("x", 70<<10)+"\n"+lines(20)) // over wholeUpTo: streamed
	fx.write(t, "empty.txt", "")
	fx.write(t, "bin.dat", "\x00\xff\xfe")
	fx.write(t, "sub/in.txt", lines(3))
	fx.symlink(t, "ten.txt", "link.txt")
	fx.symlink(t, "/etc/hostname", "out.txt")
	if err := syscall.Mkfifo(fx.in("fifo"), 0o644); err != nil {
		t.Fatal("mkfifo:", err)
	}
	r := fx.fs.roots[0]
	if r.dir == nil || r.dirFD < 0 {
		t.Fatal("the root's directory was not opened")
	}
	for name, want := range map[string]bool{"ten.txt": true, "empty.txt": true, "link.txt": false, "out.txt": false,
		"fifo": false, "sub": false, "sub/in.txt": false, "missing.txt": false, ".": false} {
		h, _, ok := openDirect(r, name)
		if ok != want {
			t.Errorf("openDirect(%q) ok = %v, want %v", name, ok, want)
		}
		if ok {
			_ = h.Close()
		}
	}
	opts := []ReadOptions{{}, {Offset: 2, Limit: 3}, {Head: 2}, {Tail: 3}, {Bytes: true, ByteOffset: 5},
		{Encoding: EncodingBase64}, {Encoding: EncodingHex, Bytes: true, ByteOffset: 1}, {MaxBytes: 7}, {Offset: 99}}
	for _, name := range []string{"ten.txt", "big.txt", "empty.txt", "bin.dat", "sub/in.txt", "link.txt", "out.txt", "fifo", "sub", "missing.txt"} {
		for _, opt := range opts {
			direct, derr := fx.fs.Read(name, opt)
			dir := r.dir
			r.dir = nil
			viaRoot, rerr := fx.fs.Read(name, opt)
			r.dir = dir
			if fmt.Sprint(derr) != fmt.Sprint(rerr) {
				t.Errorf("%s %+v: errors differ: direct %v, os.Root %v", name, opt, derr, rerr)
				continue
			}
			if derr != nil {
				continue
			}
			d, v := *direct, *viaRoot
			if fmt.Sprint(d.Lines) != fmt.Sprint(v.Lines) || !d.ModTime.Equal(v.ModTime) {
				t.Errorf("%s %+v: lines or time differ: direct %+v %v, os.Root %+v %v", name, opt, d.Lines, d.ModTime, v.Lines, v.ModTime)
			}
			d.Lines, v.Lines, d.ModTime, v.ModTime = nil, nil, time.Time{}, time.Time{}
			if d != v {
				t.Errorf("%s %+v:\ndirect  %+v\nos.Root %+v", name, opt, d, v)
			}
		}
		direct, derr := fx.fs.ReadFile(name)
		dir := r.dir
		r.dir = nil
		viaRoot, rerr := fx.fs.ReadFile(name)
		r.dir = dir
		if fmt.Sprint(derr) != fmt.Sprint(rerr) || fmt.Sprint(direct) != fmt.Sprint(viaRoot) {
			t.Errorf("ReadFile(%s): direct %+v %v, os.Root %+v %v", name, direct, derr, viaRoot, rerr)
		}
	}
}

// TestReadDirectAfterClose: once the FS is closed, a read of a file directly
// in a root is refused, not served through a descriptor number that may
// have been reused since.
func TestReadDirectAfterClose(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "f.txt", "x\n")
	if _, err := fx.fs.Read("f.txt", ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	// Readers racing the close get the file or an error, nothing else.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				r, err := fx.fs.Read("f.txt", ReadOptions{})
				if err != nil {
					return
				}
				if r.Content != "x\n" {
					t.Errorf("read %q", r.Content)
					return
				}
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	if err := fx.fs.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, _, ok := openDirect(fx.fs.roots[0], "f.txt"); ok {
		t.Error("openDirect served a read through a closed directory")
	}
	if _, err := fx.fs.Read("f.txt", ReadOptions{}); err == nil {
		t.Error("a closed FS read a file")
	}
}
