// Package pebble_test runs examples/pebble's own tests (a module of its own) on pebble
// v2; modules/pebble-v1 runs the same tests' v1 configs beside it (the two releases are
// two builds of their own, too much for one package's budget from a cold cache).
package pebble_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../pebble", "-skip", "/v1") }
