package nocompile

import (
	"testing"

	"github.com/seedfall/seedfall/simtest"
)

// TestX does not compile: seedfall test must print the compiler's error and exit 2.
func TestX(t *testing.T) {
	simtest.Run(t, simtest.Workload(func(t *simtest.T) { var n int = "not a number"; _ = n }))
}
