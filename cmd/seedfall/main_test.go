package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for the seedfall binary: `run` starts its
// workers as os.Executable() with SEEDFALL_AS_CLI=1, which in a test is this binary.
func TestMain(m *testing.M) {
	if os.Getenv("SEEDFALL_AS_CLI") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
