// Package etcdraft_test runs examples/etcdraft's own tests (a module of its own).
package etcdraft_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../etcdraft") }
