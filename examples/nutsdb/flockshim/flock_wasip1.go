//go:build wasip1

package flock

import (
	"errors"
	"os"
	"sync"
)

var errWouldBlock = errors.New("flock: would block")

// held holds the paths locked by this process. WASI preview 1 has no file locks,
// and in seedfall no other process shares the node's disk.
var (
	heldMu sync.Mutex
	held   = map[string]bool{}
)

func sysLock(fh *os.File, exclusive, wait bool) error {
	heldMu.Lock()
	defer heldMu.Unlock()
	if held[fh.Name()] {
		return errWouldBlock
	}
	held[fh.Name()] = true
	return nil
}

func sysUnlock(fh *os.File) error {
	heldMu.Lock()
	defer heldMu.Unlock()
	delete(held, fh.Name())
	return nil
}
