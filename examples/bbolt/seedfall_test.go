package bbolt_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run small sweeps of this example's configs. SEEDFALL_LONG=1 runs the sweeps the
// README quotes (300 seeds) instead of a few seeds.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// bbolt, unmodified (its flock and mmap through seedfall's wasip1 platform layer),
// keeps every acknowledged write under crashes, torn writes and lost unsynced writes,
// with the array and map freelists and with NoFreelistSync.
func TestPasses(t *testing.T) {
	for _, c := range []string{"seedfall.json", "seedfall.nofreelistsync.json", "seedfall.freelistmap.json"} {
		code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-8", "1-300"))
		exampletest.WantPass(t, code, out)
	}
}

// The same server with bbolt v1.5.0 (the module in v1.5/ requires it): it passes, its
// NoSync control fails, and finding 31 is still there.
func TestV15(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "v1.5/seedfall.json", "-seeds", exampletest.Seeds("1-8", "1-300"))
	exampletest.WantPass(t, code, out)
	code, out = exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "v1.5/seedfall.nosync.json", "-seeds", "1-5")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
	code, out = exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "v1.5/seedfall.strict.json", "-seeds", "1-20")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}

// Negative control: DB.NoSync commits without fdatasync; a crash loses acknowledged
// writes.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.nosync.json", "-seeds", "1-5")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}

// Finding 31: Open creates the database file and never syncs its directory, so under
// strict_dirs a power loss can take the whole file, and every write acknowledged into
// it, away. The patch syncs the directory after init; it passes the same sweep.
func TestStrictDirsLosesTheFile(t *testing.T) {
	seed := exampletest.LowestFailsWithIn(t, "seedfall.strict.json", "1-20", "acknowledged write lost: ")
	code, out := exampletest.Run(t, "replay", "-c", "seedfall.strict.json", "-seed", fmt.Sprint(seed))
	exampletest.WantFail(t, code, out, "server#2 disk #1 create /data/bolt.db")
	code, out = exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.strict.fixed.json", "-seeds", exampletest.Seeds("1-20", "1-300"))
	exampletest.WantPass(t, code, out)
}
