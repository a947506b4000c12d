// Package nats_test runs examples/nats's own tests (a module of its own).
package nats_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../nats") }
