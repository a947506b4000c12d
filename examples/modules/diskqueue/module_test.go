// Package diskqueue_test runs examples/diskqueue's own tests (a module of its own).
package diskqueue_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../diskqueue") }
