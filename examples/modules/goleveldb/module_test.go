// Package goleveldb_test runs examples/goleveldb's own tests (a module of its own).
package goleveldb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../goleveldb") }
