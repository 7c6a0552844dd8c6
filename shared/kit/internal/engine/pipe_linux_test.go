package engine

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGrowPipe: a pipe to the client holds a large result in one write;
// a file that is not a pipe, and a writer that is not a file, are left alone.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	before, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	growPipe(w)
	got, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := pipeSize
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil && os.Geteuid() != 0 {
		if max, _ := strconv.Atoi(strings.TrimSpace(string(b))); max < pipeSize {
			want = before // refused: an unprivileged process may not exceed the maximum
		}
	}
	if got != want {
		t.Errorf("pipe size %d after growPipe, want %d (was %d)", got, want, before)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	growPipe(f)                  // a regular file: no fcntl, no panic
	growPipe(&strings.Builder{}) // not a file
}
