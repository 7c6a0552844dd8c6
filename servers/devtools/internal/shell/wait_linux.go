package shell

import (
	"syscall"
	"unsafe"
)

// waitNoReap blocks until process pid has exited, leaving it unreaped (a
// zombie) for a later Wait, as the os package itself does before
// signalling. It reports false if waitid is unavailable.
func waitNoReap(pid int) bool {
	const (
		pPID    = 1          // P_PID
		wNoWait = 0x01000000 // WNOWAIT
	)
	var siginfo [128]byte // siginfo_t, unused
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&siginfo[0])), syscall.WEXITED|wNoWait, 0, 0)
		switch errno {
		case 0:
			return true
		case syscall.EINTR:
			continue
		}
		return false
	}
}
