//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package build

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestConcurrentBuildsOfOneInputRunOnce: builds of the same inputs at once (go test
// runs packages that build one guest side by side: etcd-server's three runners) run go
// build once; the others wait for it and name its module. flock locks belong to the open
// file, so goroutines here exclude each other as processes do. Negative control: without
// the lock in Node, go build runs once per caller.
func TestConcurrentBuildsOfOneInputRunOnce(t *testing.T) {
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
	mod := t.TempDir()
	for name, s := range map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.21\n",
		"main.go": "package main\n\nfunc main() { println(\"one\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const callers = 3
	var mu sync.Mutex
	var waits []string
	spec := Spec{Dir: mod, ConfigPath: filepath.Join(mod, "seedfall.json"), Name: "app", Pkg: ".",
		Progress: func(s string) { mu.Lock(); waits = append(waits, s); mu.Unlock() }}
	ran0, skipped0 := Counts()
	paths := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = Node(context.Background(), spec)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
		if paths[i] != paths[0] {
			t.Fatalf("callers built different modules: %q", paths)
		}
	}
	ran, skipped := Counts()
	if ran-ran0 != 1 || skipped-skipped0 != callers-1 {
		t.Fatalf("%d callers: go build ran %d times and was skipped %d times, want 1 and %d (waits: %q)",
			callers, ran-ran0, skipped-skipped0, callers-1, waits)
	}
	for _, w := range waits {
		if w != "waiting for another seedfall process that builds app (.)" {
			t.Errorf("progress while waiting: %q", w)
		}
	}
}
