//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cachedir

import (
	"errors"
	"os"
	"syscall"
)

func tryLock(f *os.File) tryResult {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return locked
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return busy
		default: // a file system without locks
			return unsupported
		}
	}
}

// waitLock blocks until f is locked; false if it cannot be.
func waitLock(f *os.File) bool {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err == nil {
			return true
		}
		if !errors.Is(err, syscall.EINTR) {
			return false
		}
	}
}
