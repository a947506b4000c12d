package dque_test

import (
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestFindingReplays runs the replay lines docs/findings.md gives for examples/dque.
func TestFindingReplays(t *testing.T) { exampletest.FindingReplays(t, "dque") }

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
