package raftwal_test

import (
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestFindingReplays runs the replay lines docs/findings.md gives for examples/raft-wal.
func TestFindingReplays(t *testing.T) { exampletest.FindingReplays(t, "raft-wal") }

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
