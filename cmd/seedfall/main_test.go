package main

import (
	"flag"
	"os"
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
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	flag.Parse()
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == (10*time.Minute).String() {
		f.Value.Set((25 * time.Minute).String())
	}
	os.Exit(m.Run())
}
