package nutsdb_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run small sweeps of this example's configs. SEEDFALL_LONG=1 runs the sweeps the
// README quotes (500 seeds) instead of a few seeds.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

func replay(t *testing.T, cfg, plan string, faults int) (int, string, uint64) {
	t.Helper()
	seed, n := exampletest.ReadPlan(t, plan)
	if n != faults {
		t.Fatalf("%s has %d faults, want %d", plan, n, faults)
	}
	code, out := exampletest.Run(t, "replay", "-q", "-c", cfg, "-seed", fmt.Sprint(seed), "-faults", plan)
	return code, out, seed
}

// The bucket's record in bucket.Meta is written but never fsynced, so one idle crash
// after the first commits loses the bucket, and with it every acknowledged write in it.
func TestUnpatchedBucketLost(t *testing.T) {
	code, out, seed := replay(t, "seedfall.json", "seed-1.faults.json", 1)
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "acknowledged write lost: ", `server now answers "NONE"`)
	code, out, _ = replay(t, "seedfall.bucketfix.json", "seed-1.faults.json", 1)
	exampletest.WantPass(t, code, out)
}

// With the bucket fixed, a crash that tears the last entry of the active data file
// makes the next Open fail with "crc error"; the torn-tail patch makes it pass.
func TestUnpatchedTornTailRefusesOpen(t *testing.T) {
	// The shrunk plan per Go release (a run is deterministic per toolchain): go1.27's is
	// seedfall shrink of seed 38, the first of 1-40 that fails this way on go1.27.3.
	type plan struct {
		file   string
		faults int
	}
	p := exampletest.PerGo(t, "the torn-tail plan", map[string]plan{
		"go1.26": {"seed-5.faults.json", 2},
		"go1.27": {"seed-38.go1.27.faults.json", 5},
	})
	code, out, seed := replay(t, "seedfall.bucketfix.json", p.file, p.faults)
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "open nutsdb: db.buildIndexes error: crc error", "crash server during disk op #")
	code, out, _ = replay(t, "seedfall.fixed.json", p.file, p.faults)
	exampletest.WantPass(t, code, out)
}

// Both patches pass a sweep, also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	for _, c := range []string{"seedfall.fixed.json", "seedfall.strict.json"} {
		code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-6", "1-500"))
		exampletest.WantPass(t, code, out)
	}
}

// Negative control: SyncEnable false acknowledges commits before they are durable.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.nosync.json", "-seeds", "1-10")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}
