package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for the seedfall binary: `run` starts its
// workers as os.Executable() with SEEDFALL_AS_CLI=1, which in a test is this binary.
//
// It does not touch go test's -timeout: go test kills a test binary at its timeout plus
// a minute whatever TestMain does. The package fits the default 10 minutes with room to
// spare on a loaded 2-core machine; the long variants run with SEEDFALL_LONG=1.
func TestMain(m *testing.M) {
	if os.Getenv("SEEDFALL_AS_CLI") == "1" {
		if log := os.Getenv("SEEDFALL_TEST_WORKER_LOG"); log != "" && len(os.Args) > 1 && os.Args[1] == "worker" {
			// For the tests that a command runs its seeds in worker processes.
			if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintf(f, "worker %d\n", os.Getpid())
				f.Close()
			}
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// workerLog makes the worker processes that the test's commands start log themselves to
// a file, and returns a func that counts them.
func workerLog(t *testing.T) func() int {
	path := filepath.Join(t.TempDir(), "workers.log")
	t.Setenv("SEEDFALL_TEST_WORKER_LOG", path)
	return func() int {
		data, _ := os.ReadFile(path)
		return strings.Count(string(data), "worker ")
	}
}
