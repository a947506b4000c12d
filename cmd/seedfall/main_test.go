package main

import (
	"os"
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
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
