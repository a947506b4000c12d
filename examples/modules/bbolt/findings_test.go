package bbolt_test

import (
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestFindingReplays runs the replay lines docs/findings.md gives for examples/bbolt.
func TestFindingReplays(t *testing.T) { exampletest.FindingReplays(t, "bbolt") }

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
