package engine

import (
	"math"
	"math/bits"
	"os"

	"golang.org/x/sys/unix"
)

// growPipe grows the pipe f writes to so that a message of n bytes fits in
// it, to the power of two at or above n and at most maxPipe (never
// shrinking it), and returns the size of message it need not be asked
// about again: the pipe's new size, or math.MaxInt when f is not a pipe,
// cannot grow (pipe-max-size) or is as large as it may be. Linux's default
// of 64 KiB makes a server that writes a result of many rows (70 KB and
// more) wait for the client to read the first part; growing only when such
// a result comes keeps the pipes of servers that never write one — and the
// user's pipe budget — as they are.
func growPipe(f any, n int) int {
	file, ok := f.(*os.File)
	if !ok {
		return math.MaxInt
	}
	if fi, err := file.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return math.MaxInt
	}
	// Through SyscallConn, not Fd: Fd puts a descriptor the runtime polls
	// into blocking mode, for the whole process and whoever shares the pipe.
	rc, err := file.SyscallConn()
	if err != nil {
		return math.MaxInt
	}
	room := math.MaxInt
	_ = rc.Control(func(fd uintptr) {
		// Never smaller than it is: the client, or a system with large
		// pages, may have made it larger than a message needs.
		cur, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
		if err != nil {
			return
		}
		if size := max(min(1<<bits.Len(uint(n-1)), maxPipe), cur); size > cur {
			if cur, err = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size); err != nil {
				return
			}
		}
		if cur < maxPipe && cur >= n {
			room = cur
		}
	})
	return room
}
