// Package nutsdb_test runs examples/nutsdb's own tests (a module of its own).
package nutsdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../nutsdb") }
