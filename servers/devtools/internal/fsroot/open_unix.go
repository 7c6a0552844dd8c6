//go:build unix

package fsroot

import "syscall"

// openNoBlock keeps an open from hanging on a fifo (or a device) that was
// swapped in after the type check; the descriptor is checked right after.
// O_NOCTTY stops a terminal from becoming our controlling tty.
const openNoBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY
