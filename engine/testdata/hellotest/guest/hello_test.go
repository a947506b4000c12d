// Package guest is testdata/hello's guest as a Go test: a test binary that starts, runs
// one test that prints a line, and exits. Next to hello it is the cost of the testing
// package's start, which every incarnation of a simulation test's node pays.
package guest

import (
	"fmt"
	"testing"
)

func TestHello(t *testing.T) { fmt.Println("hello") }
