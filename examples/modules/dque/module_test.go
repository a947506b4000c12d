// Package dque_test runs examples/dque's own tests (a module of its own).
package dque_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../dque") }
