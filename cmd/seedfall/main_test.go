package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for the seedfall binary: `run` starts its
// workers as os.Executable() with SEEDFALL_AS_CLI=1, which in a test is this binary.
//
// This package's tests sweep real guests through worker processes, end to end, and take
// 5 to 8 minutes on a 2-core machine; on a machine twice as slow that would meet go
// test's default timeout of 10 minutes. Under the default (and only then), the limit is
// raised to 25 minutes, so that a slow machine is not a failure; a timeout given on the
// command line is kept.
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
	flag.Parse()
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == (10*time.Minute).String() {
		f.Value.Set((25 * time.Minute).String())
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
