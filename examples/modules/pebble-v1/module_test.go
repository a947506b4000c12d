// Package pebblev1_test runs examples/pebble's own tests on its pebble v1 configs (the
// subtests named seedfall.v1.*); modules/pebble runs the rest.
package pebblev1_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../pebble", "-run", "/v1") }
