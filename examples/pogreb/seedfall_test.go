package pogreb_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run small sweeps of this example's configs. SEEDFALL_LONG=1 runs the sweeps the
// README quotes (300 seeds) instead of a few seeds.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// Recovery truncates a torn segment tail but leaves the segment's in-memory size at
// the old length, so later appends start past a gap of zeros and the next recovery
// truncates every one of them away. The shrunk plan of seed 101 (an idle crash, a
// crash inside a segment write, another idle crash) fails unpatched and passes with
// the patch.
func TestUnpatchedRecoveryLosesWrites(t *testing.T) {
	// The shrunk plan per Go release (a run is deterministic per toolchain): go1.27.3's is
	// seedfall shrink of seed 34, the first of 1-150 that fails on it.
	plan := exampletest.PerGo(t, "the shrunk plan", map[string]string{"go1.26": "seed-101.faults.json", "go1.27": "seed-34.go1.27.faults.json"})
	seed, n := exampletest.ReadPlan(t, plan)
	if n != 3 {
		t.Fatalf("%s has %d faults, want 3", plan, n)
	}
	code, out := exampletest.Run(t, "replay", "-q", "-c", "seedfall.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "acknowledged write lost: ", "crash server during disk op #")
	code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.fixed.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantPass(t, code, out)
}

// pogreb's default file system, fs.OSMMap, reads through mmap (seedfall's wasip1
// platform layer): finding 10 is there too, at the same seeds as with fs.OS, and the
// patch passes.
func TestMmapFileSystem(t *testing.T) {
	seed := exampletest.LowestFailsWithIn(t, "seedfall.mmap.json", "1-60", "acknowledged write lost: ")
	want := exampletest.PerGo(t, "the first failing seed with fs.OSMMap", map[string]uint64{"go1.26": 47, "go1.27": 8})
	if seed != want {
		t.Errorf("seedfall.mmap.json: lowest failing seed %d, want %d (as seedfall.json's)", seed, want)
	}
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.mmap.fixed.json", "-seeds", exampletest.Seeds("1-6", "1-300"))
	exampletest.WantPass(t, code, out)
}

// The patch passes a sweep, also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	for _, c := range []string{"seedfall.fixed.json", "seedfall.strict.json"} {
		code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-6", "1-300"))
		exampletest.WantPass(t, code, out)
	}
}

// Negative control: BackgroundSyncInterval 0 never syncs.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.nosync.json", "-seeds", "1-10")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}

// The simulation test of simtest/ (package simtest, a third of the JSON harness's
// lines) finds finding 10, and its twin with the fix passes, traces identical.
func TestSimulationTest(t *testing.T) {
	code, out := exampletest.Run(t, "test", "./simtest", "-run", "Survive$", "-seeds", "1-150", "-stop-on-fail", "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ", "crash db during disk op #", "replay: seedfall test ./simtest -run '^TestAcknowledgedWritesSurvive$' -seed ")
	code, out = exampletest.Run(t, "test", "./simtest", "-run", "Fixed$", "-seeds", exampletest.Seeds("1-10", "1-300"), "-check", "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
	if !strings.Contains(out, "traces identical") {
		t.Fatalf("-check did not compare:\n%s", out)
	}
}
