// Package flock is a stand-in for github.com/gofrs/flock v0.8.1 with the same API,
// for builds where the real package does not compile: gofrs/flock's flock_unix.go
// calls syscall.Flock, which GOOS=wasip1 does not have, so rosedb cannot be built for
// seedfall as is. The example module's go.mod points the import path here:
//
//	replace github.com/gofrs/flock => ./flockshim
//
// On wasip1 a lock is held in-process only. That is enough inside seedfall: every
// node runs as its own process over its own simulated disk, so no other process can
// open the same database directory. Elsewhere (Linux, macOS, BSD) it takes a real
// flock(2) lock, so the example still runs natively.
package flock

import (
	"context"
	"os"
	"sync"
	"time"
)

// Flock is a file lock on path.
type Flock struct {
	path string
	m    sync.RWMutex
	fh   *os.File
	l    bool
	r    bool
}

// New returns a new, unlocked Flock for path.
func New(path string) *Flock { return &Flock{path: path} }

// NewFlock is New (deprecated upstream, kept for API compatibility).
func NewFlock(path string) *Flock { return New(path) }

// Close is Unlock.
func (f *Flock) Close() error { return f.Unlock() }

// Path returns the path of the lock file.
func (f *Flock) Path() string { return f.path }

// Locked reports whether an exclusive lock is held.
func (f *Flock) Locked() bool {
	f.m.RLock()
	defer f.m.RUnlock()
	return f.l
}

// RLocked reports whether a shared lock is held.
func (f *Flock) RLocked() bool {
	f.m.RLock()
	defer f.m.RUnlock()
	return f.r
}

func (f *Flock) String() string { return f.path }

// Lock takes an exclusive lock, waiting for it.
func (f *Flock) Lock() error { return f.lock(true, true) }

// RLock takes a shared lock, waiting for it.
func (f *Flock) RLock() error { return f.lock(false, true) }

// TryLock takes an exclusive lock if it is free and reports whether it did.
func (f *Flock) TryLock() (bool, error) {
	err := f.lock(true, false)
	if err == errWouldBlock {
		return false, nil
	}
	return err == nil, err
}

// TryRLock takes a shared lock if it is free and reports whether it did.
func (f *Flock) TryRLock() (bool, error) {
	err := f.lock(false, false)
	if err == errWouldBlock {
		return false, nil
	}
	return err == nil, err
}

// TryLockContext retries TryLock every retryDelay until it succeeds or ctx is done.
func (f *Flock) TryLockContext(ctx context.Context, retryDelay time.Duration) (bool, error) {
	return tryCtx(ctx, f.TryLock, retryDelay)
}

// TryRLockContext retries TryRLock every retryDelay until it succeeds or ctx is done.
func (f *Flock) TryRLockContext(ctx context.Context, retryDelay time.Duration) (bool, error) {
	return tryCtx(ctx, f.TryRLock, retryDelay)
}

func tryCtx(ctx context.Context, fn func() (bool, error), retryDelay time.Duration) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	for {
		if ok, err := fn(); ok || err != nil {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(retryDelay):
		}
	}
}

func (f *Flock) lock(exclusive, wait bool) error {
	f.m.Lock()
	defer f.m.Unlock()
	if (exclusive && f.l) || (!exclusive && f.r) {
		return nil
	}
	if f.fh == nil {
		fh, err := os.OpenFile(f.path, os.O_CREATE|os.O_RDONLY, 0o600)
		if err != nil {
			return err
		}
		f.fh = fh
	}
	if err := sysLock(f.fh, exclusive, wait); err != nil {
		if err != errWouldBlock {
			f.fh.Close()
			f.fh = nil
		}
		return err
	}
	if exclusive {
		f.l = true
	} else {
		f.r = true
	}
	return nil
}

// Unlock releases the lock and closes the lock file.
func (f *Flock) Unlock() error {
	f.m.Lock()
	defer f.m.Unlock()
	if (!f.l && !f.r) || f.fh == nil {
		return nil
	}
	if err := sysUnlock(f.fh); err != nil {
		return err
	}
	f.fh.Close()
	f.fh, f.l, f.r = nil, false, false
	return nil
}
