// Package examples_test runs the tests of the example modules (each real third-party
// system is its own module, so `go test ./...` at the root does not reach them).
package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestExampleModules runs `go test -short ./...` in every example that is its own
// module: each shows its system's bug is found, its fix passes, and its negative control
// is caught.
func TestExampleModules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example modules' own test suites")
	}
	mods, err := filepath.Glob("*/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Fatal("no example modules found")
	}
	for _, m := range mods {
		dir := filepath.Dir(m)
		t.Run(dir, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "go", "test", "-short", "-count=1", "./...")
			cmd.Dir = dir
			cmd.Env = os.Environ()
			start := time.Now()
			out, err := cmd.CombinedOutput()
			t.Logf("%s: go test -short ./... in %s", dir, time.Since(start).Round(time.Second))
			if err != nil {
				t.Fatalf("%s: %v\n%s", dir, err, out)
			}
		})
	}
}
