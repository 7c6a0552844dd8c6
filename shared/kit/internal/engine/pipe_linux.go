package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is what a pipe to or from the client is grown to: a result of
// many rows (70 KB and more) fits in one write, where Linux's default of
// 64 KiB makes the server wait for the client to read the first part.
const pipeSize = 1 << 20

// growPipe grows f's pipe buffer when f is a pipe; anything else, or a
// system that refuses (pipe-max-size), leaves it as it is.
func growPipe(f any) {
	file, ok := f.(*os.File)
	if !ok {
		return
	}
	if fi, err := file.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	_, _ = unix.FcntlInt(file.Fd(), unix.F_SETPIPE_SZ, pipeSize)
}
