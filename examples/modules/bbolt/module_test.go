// Package bbolt_test runs examples/bbolt's own tests (a module of its own).
package bbolt_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../bbolt") }
