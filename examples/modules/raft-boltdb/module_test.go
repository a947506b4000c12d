// Package raftboltdb_test runs examples/raft-boltdb's own tests (a module of its own).
package raftboltdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../raft-boltdb") }
