package lotusdb_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run the simulation test of simtest/ (lotusdb v2.1.0, Options.Sync true) under it.
// SEEDFALL_LONG=1 runs the sweeps the README quotes (100 seeds) instead of a few seeds.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

const (
	unpatched = "^TestAcknowledgedWritesSurvive$"
	fixed     = "^TestAcknowledgedWritesSurviveFixed$"
)

// A short sweep of lotusdb as released fails: an acknowledged Put lost (Options.Sync
// never fsyncs the memtable WAL) or Open panicking on the index (opened NoSync).
func TestUnpatchedSweepFails(t *testing.T) {
	code, out := exampletest.Run(t, "test", "./simtest", "-run", unpatched, "-seeds", "1-10", "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "replay: seedfall test ./simtest -run '"+unpatched+"' -seed ")
	lost := strings.Contains(out, "workload#1: acknowledged write lost: ")
	panicked := strings.Contains(out, "panic: invalid freelist page: ")
	if !lost && !panicked {
		t.Fatalf("seeds 1-10 fail, but neither with an acknowledged write lost nor with the freelist panic:\n%s", out)
	}
	t.Logf("seeds 1-10: acknowledged write lost %v, freelist panic %v", lost, panicked)
}

// Each finding's shrunk plan (one crash) fails lotusdb as released with its own
// signature and passes the fixed twin (the three patches). The plans are go1.26.8's
// (a run is deterministic per toolchain).
func TestShrunkPlans(t *testing.T) {
	for _, c := range []struct {
		plan string
		want []string
	}{
		// Options.Sync: the Puts acknowledged before the crash were never fsynced.
		{"plans/options-sync-seed10.shrunk.json", []string{
			"workload#1: acknowledged write lost: ", `server now answers "NONE"`,
			"crash db during disk op #76 (write /data/lotus/000000001.SEG.1 "}},
		// The index: an idle crash keeps the meta page of the commit Open made, not
		// the pages it points to.
		{"plans/index-nosync-seed8.shrunk.json", []string{
			"db#2 crashed: exit_code(2): panic: invalid freelist page: 0, page type is unknown<00>",
			"go.etcd.io/bbolt@v1.3.8/freelist.go:267", "crash db, restart at "}},
	} {
		t.Run(c.plan, func(t *testing.T) {
			seed, n := exampletest.ReadPlan(t, c.plan)
			if n != 1 {
				t.Fatalf("%s has %d faults, want 1", c.plan, n)
			}
			s := fmt.Sprint(seed)
			code, out := exampletest.Run(t, "test", "./simtest", "-run", unpatched, "-seed", s, "-faults", c.plan, "-q")
			exampletest.WantFail(t, code, out, append([]string{"FAIL seed " + s + " "}, c.want...)...)
			code, out = exampletest.Run(t, "test", "./simtest", "-run", fixed, "-seed", s, "-faults", c.plan, "-q")
			exampletest.WantPass(t, code, out)
		})
	}
}

// The fixed twin passes a sweep, each seed run twice with identical traces.
func TestFixedPasses(t *testing.T) {
	code, out := exampletest.Run(t, "test", "./simtest", "-run", fixed, "-seeds", exampletest.Seeds("1-10", "1-100"), "-check", "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
	if !strings.Contains(out, "traces identical") {
		t.Fatalf("-check did not compare:\n%s", out)
	}
}

// Under plain `go test` the simulation test runs once, natively, without faults, and
// passes: lotusdb is correct when nothing crashes.
func TestSimtestPassesNatively(t *testing.T) {
	out, err := exec.Command("go", "test", "-count=1", "./simtest").CombinedOutput()
	if err != nil {
		t.Fatalf("go test ./simtest: %v\n%s", err, out)
	}
}

// The directed-fault tests (the test's own t.Crash and t.Restart after twenty puts, no
// random fault): lotusdb as released fails with one of the two signatures its random
// twin finds (the panic of finding 38, or a key gone: finding 37); with the index fix
// alone a key is gone (finding 37); with both fixes every seed passes, each run twice
// with identical traces.
func TestDirectedCrash(t *testing.T) {
	seeds := exampletest.Seeds("1-10", "1-100")
	code, out := exampletest.Run(t, "test", "./simtest", "-run", "^TestCrashAfterAcknowledgedPuts$", "-seeds", seeds, "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "crash db, by the test", "restart db, by the test")
	if !strings.Contains(out, "panic: invalid freelist page: 0, page type is unknown<00>") &&
		!strings.Contains(out, "workload#1: acknowledged write lost: ") {
		t.Fatalf("v2.1.0 fails, but with neither finding's signature:\n%s", out)
	}
	code, out = exampletest.Run(t, "test", "./simtest", "-run", "^TestCrashAfterAcknowledgedPutsIndexFixed$", "-seeds", seeds, "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "workload#1: acknowledged write lost: put k0=v0 was acknowledged before the crash")
	if strings.Contains(out, "panic:") {
		t.Fatalf("with the index fix, Open still panics:\n%s", out)
	}
	code, out = exampletest.Run(t, "test", "./simtest", "-run", "^TestCrashAfterAcknowledgedPutsFixed$", "-seeds", seeds, "-check", "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
}

// TestEmittedRegressionTest: simtest/acknowledged_writes_survive_seed8_test.go is what
// `seedfall shrink -emit-test` wrote from finding 38's plan (plans/index-nosync-seed8):
// the plan's idle crash as a simtest.Fault of simtest.Schedule. On its seed it fails as
// the plan does (Open panics on the index); the fixed twin under the same crash passes.
func TestEmittedRegressionTest(t *testing.T) {
	code, out := exampletest.Run(t, "test", "./simtest", "-run", "^TestAcknowledgedWritesSurviveSeed8$", "-seed", "8", "-q")
	exampletest.WantFail(t, code, out, "panic: invalid freelist page: 0, page type is unknown<00>", "crash db, restart at ")
	code, out = exampletest.Run(t, "test", "./simtest", "-run", "^TestAcknowledgedWritesSurviveFixedSeed8$", "-seeds", exampletest.Seeds("1-4", "1-20"), "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
}
