//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cachedir

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestLockWaitsForHolder: a second Lock of the same file waits, says so once, and
// returns when the first is released (flock locks belong to the open file, so two in
// one process exclude each other as two processes do).
func TestLockWaitsForHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "k.lock")
	unlockA, err := Lock(context.Background(), path, func() { t.Error("the first Lock waited") })
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan bool, 2)
	got := make(chan error, 1)
	var unlockB func()
	go func() {
		var err error
		unlockB, err = Lock(context.Background(), path, func() { waiting <- true })
		got <- err
	}()
	select {
	case <-waiting:
	case err := <-got:
		t.Fatalf("the second Lock returned (%v) without waiting while the first held the lock", err)
	}
	select {
	case err := <-got:
		t.Fatalf("the second Lock returned (%v) while the first held the lock", err)
	default:
	}
	unlockA()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if len(waiting) != 0 {
		t.Error("waiting was called more than once")
	}
	unlockB()
	// Released: a third takes it at once.
	unlockC, err := Lock(context.Background(), path, func() { t.Error("a Lock waited for a released lock") })
	if err != nil {
		t.Fatal(err)
	}
	unlockC()
}

// TestLockWaitEndsWithContext: a wait ends with the context, and the lock the abandoned
// wait would have taken is released, not leaked.
func TestLockWaitEndsWithContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.lock")
	unlockA, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := Lock(ctx, path, cancel) // gives up as soon as it would wait
		got <- err
	}()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a cancelled wait returned %v, want context.Canceled", err)
	}
	unlockA()
	unlockD, err := Lock(context.Background(), path, nil) // blocks forever if the abandoned wait kept it
	if err != nil {
		t.Fatal(err)
	}
	unlockD()
}
