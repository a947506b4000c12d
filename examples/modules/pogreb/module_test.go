// Package pogreb_test runs examples/pogreb's own tests (a module of its own).
package pogreb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../pogreb") }
