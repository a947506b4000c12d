//go:build !wasip1 && !windows && !plan9

package flock

import (
	"errors"
	"os"
	"syscall"
)

var errWouldBlock = errors.New("flock: would block")

func sysLock(fh *os.File, exclusive, wait bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	err := syscall.Flock(int(fh.Fd()), how)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errWouldBlock
	}
	return err
}

func sysUnlock(fh *os.File) error { return syscall.Flock(int(fh.Fd()), syscall.LOCK_UN) }
