// Package rosedb_test runs examples/rosedb's own tests (a module of its own).
package rosedb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../rosedb") }
