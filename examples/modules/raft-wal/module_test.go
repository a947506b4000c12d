// Package raftwal_test runs examples/raft-wal's own tests (a module of its own).
package raftwal_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../raft-wal") }
