package buntdb_test

import (
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestFindingReplays runs the replay lines docs/findings.md gives for examples/buntdb.
func TestFindingReplays(t *testing.T) { exampletest.FindingReplays(t, "buntdb") }

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
