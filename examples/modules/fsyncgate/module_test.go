// Package fsyncgate_test runs examples/fsyncgate's own tests (a module of its own).
package fsyncgate_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../fsyncgate") }
