// Package lotusdb_test runs examples/lotusdb's own tests (a module of its own).
package lotusdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../lotusdb") }
