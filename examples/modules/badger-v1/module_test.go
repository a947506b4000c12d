// Package badgerv1_test runs examples/badger-v1's own tests (a module of its own).
package badgerv1_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../badger-v1") }
