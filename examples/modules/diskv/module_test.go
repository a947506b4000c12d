// Package diskv_test runs examples/diskv's own tests (a module of its own).
package diskv_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../diskv") }
