// Package pudge_test runs examples/pudge's own tests (a module of its own).
package pudge_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../pudge") }
