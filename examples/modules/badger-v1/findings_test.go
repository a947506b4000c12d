package badgerv1_test

import (
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestFindingReplays runs the replay lines docs/findings.md gives for examples/badger-v1.
func TestFindingReplays(t *testing.T) { exampletest.FindingReplays(t, "badger-v1") }

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
