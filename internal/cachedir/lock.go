package cachedir

import (
	"context"
	"os"
	"path/filepath"
)

// Lock takes an exclusive advisory lock on the file at path (made if missing), so that
// processes about to make the same cache entry at once (go test running several packages
// that build the same guest side by side, a CI job's shards on one machine) make it
// once: the second waits, then finds the first's entry. waiting, if not nil, is called
// once before the call blocks. The lock is an economy, never a guarantee: where the
// platform has no file locks, or the file cannot be made, Lock returns at once, and
// every cache entry is still written whole (temporary file, then rename). unlock
// releases the lock; ctx ends the wait.
func Lock(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return func() {}, nil
	}
	switch tryLock(f) {
	case locked:
		return func() { f.Close() }, nil
	case unsupported:
		f.Close()
		return func() {}, nil
	}
	if waiting != nil {
		waiting()
	}
	done := make(chan bool, 1)
	go func() { done <- waitLock(f) }()
	select {
	case ok := <-done:
		if !ok {
			f.Close()
			return func() {}, nil
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		// The waiting goroutine still holds f: it closes it (and so releases a lock it
		// gets) when its wait ends.
		go func() { <-done; f.Close() }()
		return nil, ctx.Err()
	}
}

type tryResult int

const (
	locked tryResult = iota
	busy
	unsupported
)
