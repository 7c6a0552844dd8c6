package engine

import (
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPipeGrowsForLargeMessages: a pipe to the client keeps its size until
// a message does not fit, then grows to the power of two that holds it, at
// most maxPipe; a file that is not a pipe, and a writer that is not a file,
// are not asked again.
func TestPipeGrowsForLargeMessages(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	go func() { _, _ = io.Copy(io.Discard, r); r.Close() }()
	size := func() int {
		t.Helper()
		rc, err := w.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := rc.Control(func(fd uintptr) { n, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }); err != nil || n == 0 {
			t.Fatal(err)
		}
		return n
	}
	nonblock := func(f *os.File) bool {
		t.Helper()
		rc, err := f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var flags int
		if err := rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
			t.Fatal(err)
		}
		return flags&unix.O_NONBLOCK != 0
	}
	wasNonblock := nonblock(w)
	lw := &lineWriter{w: w, room: defaultPipe}
	for _, c := range []struct{ msg, want int }{
		{1000, defaultPipe},
		{defaultPipe - 1, defaultPipe},
		{100 << 10, 128 << 10},
		{90 << 10, 128 << 10},
		{300 << 10, 512 << 10},
		{3 << 20, maxPipe},
	} {
		if err := lw.writeLine([]byte(strings.Repeat("x", c.msg))); err != nil {
			t.Fatal(err)
		}
		if got := size(); got != c.want {
			t.Errorf("after a message of %d bytes: pipe of %d, want %d", c.msg, got, c.want)
		}
	}
	if nonblock(w) != wasNonblock {
		t.Errorf("growing the pipe changed its mode: non-blocking %v, was %v", nonblock(w), wasNonblock)
	}
	if lw.room != math.MaxInt {
		t.Errorf("at its largest the pipe is still to be grown (room %d)", lw.room)
	}
	// A pipe larger than a message needs is left as it is.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	if _, err := unix.FcntlInt(w2.Fd(), unix.F_SETPIPE_SZ, maxPipe); err != nil {
		t.Fatal(err)
	}
	if got := growPipe(w2, 100<<10); got != math.MaxInt {
		t.Errorf("a pipe of %d for a message of 100 KiB: room %d", maxPipe, got)
	}
	if n, _ := unix.FcntlInt(w2.Fd(), unix.F_GETPIPE_SZ, 0); n != maxPipe {
		t.Errorf("a pipe of %d shrunk to %d", maxPipe, n)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := growPipe(f, 1<<20); got != math.MaxInt {
		t.Errorf("a regular file: %d", got)
	}
	if got := growPipe(&strings.Builder{}, 1<<20); got != math.MaxInt {
		t.Errorf("not a file: %d", got)
	}
}
