//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/internal/build"
	"github.com/seedfall/seedfall/internal/cachedir"
)

// TestPrepareWaitsForAnotherCompile: while another process holds the compile lock of a
// module (it is compiling it into wazero's file cache), Prepare says it waits and does
// not compile the module itself until the lock is released; then it prepares a world
// that runs. Negative control: without the lock in Prepare it returns while the lock is
// held.
func TestPrepareWaitsForAnotherCompile(t *testing.T) {
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
	cfg, err := LoadConfig("testdata/hello/seedfall.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(context.Background(), cfg, PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wasm := append([]string(nil), s.wasmPaths...)
	s.Close()
	data, err := os.ReadFile(wasm[0])
	if err != nil {
		t.Fatal(err)
	}
	// "Another process": flock locks belong to the open file, so this one excludes
	// Prepare's as another process's would.
	unlock, err := cachedir.Lock(context.Background(), filepath.Join(build.CacheDir(), "locks", "compile-"+wasmHash(data)+".lock"), nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan string, 10)
	type result struct {
		s   *Sim
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Prepare(context.Background(), cfg, PrepareOptions{Progress: func(m string) { waiting <- m }})
		done <- result{s, err}
	}()
	for {
		var m string
		select {
		case m = <-waiting:
		case r := <-done:
			unlock()
			t.Fatalf("Prepare returned (%v) while another process held the module's compile lock", r.err)
		}
		if strings.HasPrefix(m, "waiting for another seedfall process that compiles ") {
			break
		}
	}
	select {
	case r := <-done:
		t.Fatalf("Prepare returned (%v) while the compile lock was held", r.err)
	default:
	}
	unlock()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.s.Close()
	res := r.s.Run(context.Background(), 1, RunOptions{})
	if res.Verdict != VerdictPass {
		t.Fatalf("the world prepared after the wait: %s: %+v", res.Verdict, res.Failure)
	}
}
