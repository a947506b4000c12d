// Package buntdb_test runs examples/buntdb's own tests (a module of its own).
package buntdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../buntdb") }
