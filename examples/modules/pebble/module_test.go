// Package pebble_test runs examples/pebble's own tests (a module of its own).
package pebble_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../pebble") }
