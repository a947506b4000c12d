package buntdb_test

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary
// directory and run small sweeps of this example's configs. Each one takes seconds
// to a minute; -short skips the passing sweeps.

// The helpers are shared by the example modules (examples/exampletest).
var (
	sf              = exampletest.Run
	wantFail        = exampletest.WantFail
	wantPass        = exampletest.WantPass
	lowestFailsWith = exampletest.LowestFailsWith
	readPlan        = exampletest.ReadPlan
	faultCount      = exampletest.FaultCount
)

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// buntdb's auto-shrink renames a rewritten file over the database without fsyncing it or
// its directory, and a crash after it loses acknowledged writes.
func TestShrinkLosesWrites(t *testing.T) {
	lowestFailsWith(t, "seedfall.shrink.json", "acknowledged write lost: ")
}

// The plan seedfall shrink saved for seed 1 (plans/seed1.shrunk.json): at most two
// idle crashes, no crash in the middle of a write.
func TestShrinkFewFaults(t *testing.T) {
	const plan = "plans/seed1.shrunk.json"
	seed, n := readPlan(t, plan)
	if n < 1 || n > 2 {
		t.Fatalf("%s has %d faults, want 1 or 2", plan, n)
	}
	code, out := sf(t, "replay", "-q", "-c", "seedfall.shrink.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "acknowledged write lost: ", "server now answers \"NONE\"")
	if got := faultCount(t, out); got > 2 {
		t.Fatalf("%d faults before the failure, want at most 2:\n%s", got, out)
	}
	// The same schedule against the patched library passes.
	code, out = sf(t, "replay", "-q", "-c", "seedfall.shrink.patched.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantPass(t, code, out)
}

// Negative control: SyncPolicy Never acknowledges before fsync.
func TestNegativeControlNever(t *testing.T) {
	code, out := sf(t, "run", "-c", "seedfall.nosync.json", "-seeds", "1-3")
	wantFail(t, code, out, "acknowledged write lost: ")
}

// No false alarms: auto-shrink disabled, and the patched shrink (f.Sync before the
// rename, directory fsync after it), also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep; skipped with -short")
	}
	for _, c := range []string{"seedfall.noshrink.json", "seedfall.shrink.patched.json", "seedfall.shrink.strict.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-10")
		wantPass(t, code, out)
	}
}

// Across releases: buntdb v1.3.2 reads what v1.2.9 wrote (upgrade), and v1.2.9 what
// v1.3.2 wrote (rollback, alternating at every restart); the trace names both builds.
func TestAcrossReleasesPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep; skipped with -short")
	}
	for _, c := range []string{"seedfall.upgrade.json", "seedfall.rollback.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-5")
		wantPass(t, code, out)
	}
	_, out := sf(t, "replay", "-c", "seedfall.rollback.json", "-seed", "1")
	builds := regexp.MustCompile(`server#\d+ start \(build ([0-9a-f]{7})\)`).FindAllStringSubmatch(out, -1)
	if len(builds) < 3 || builds[0][1] == builds[1][1] || builds[0][1] != builds[2][1] {
		t.Fatalf("rollback seed 1: start lines %q, want old, new, old builds\n%s", builds, out)
	}
}
