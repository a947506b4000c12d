// Package e2e_test runs the seedfall command as users and the Action run it: a binary
// built from this repository, real builds of guests, worker processes, git, the GitHub
// Actions environment faked with files and a fake REST API. These tests are the long
// end-to-end ones (the CI walk-throughs, directed faults and -emit-test); they live apart
// from package main's tests so that go test runs the two packages side by side and
// neither comes near its timeout.
package e2e_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The command's exit codes (cmd/seedfall/cli.go).
const (
	exitPass  = 0
	exitFail  = 1
	exitUsage = 2
)

var (
	kvlogBuggy = filepath.Join("..", "..", "..", "examples", "kvlog", "seedfall.json")
	kvlogFixed = filepath.Join("..", "..", "..", "examples", "kvlog", "seedfall.fixed.json")
)

// seedfallBin is the binary TestMain builds.
var seedfallBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "seedfall-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	seedfallBin = filepath.Join(dir, "seedfall")
	build := exec.Command("go", "build", "-o", seedfallBin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build seedfall: %v\n%s", err, out)
		return 2
	}
	return m.Run()
}

// runCLI runs the built seedfall with args in the current directory and returns its exit
// code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(seedfallBin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("seedfall %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("seedfall %s: exit %d in %s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond))
	return code, stdout.String(), stderr.String()
}
