// Package badger_test runs examples/badger's own tests (a module of its own).
package badger_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../badger") }
