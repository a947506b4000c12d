// Package raft_test runs examples/raft's own tests (a module of its own).
package raft_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../raft") }
