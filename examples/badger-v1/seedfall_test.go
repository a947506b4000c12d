package badgerv1_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run the simulation test of simtest/ (badger v1.6.2, SyncWrites) under it.
// SEEDFALL_LONG=1 runs the sweeps the README quotes (100 seeds) instead of ten.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

const (
	unpatched = "^TestAcknowledgedWritesSurvive$"
	fixed     = "^TestAcknowledgedWritesSurviveFixed$"
)

// A short sweep of badger as released fails: an acknowledged write lost after a
// restart's replay filled a memtable (finding 40).
func TestUnpatchedSweepFails(t *testing.T) {
	code, out := exampletest.Run(t, "test", "./simtest", "-run", unpatched, "-seeds", exampletest.Seeds("1-10", "1-100"), "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "workload#1: acknowledged write lost: ",
		"replay: seedfall test ./simtest -run '"+unpatched+"' -seed ")
}

// The shrunk plan (three crashes, none inside a write: the loss needs no torn or lost
// write) fails badger as released and passes the fixed twin. The plan is go1.26.8's
// (a run is deterministic per toolchain).
func TestShrunkPlan(t *testing.T) {
	const plan = "plans/seed-7.shrunk.json"
	seed, n := exampletest.ReadPlan(t, plan)
	if n != 3 {
		t.Fatalf("%s has %d faults, want 3", plan, n)
	}
	s := fmt.Sprint(seed)
	code, out := exampletest.Run(t, "test", "./simtest", "-run", unpatched, "-seed", s, "-faults", plan, "-q")
	exampletest.WantFail(t, code, out, "FAIL seed "+s+" ",
		`workload#1: acknowledged write lost: k13=v141-11111111111111111, server now answers "VAL v125-`)
	if strings.Contains(out, "during disk op") {
		t.Fatalf("the plan's crashes should all be between disk ops:\n%s", out)
	}
	code, out = exampletest.Run(t, "test", "./simtest", "-run", fixed, "-seed", s, "-faults", plan, "-q")
	exampletest.WantPass(t, code, out)
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
// passes: badger is correct when nothing crashes.
func TestSimtestPassesNatively(t *testing.T) {
	out, err := exec.Command("go", "test", "-count=1", "./simtest").CombinedOutput()
	if err != nil {
		t.Fatalf("go test ./simtest: %v\n%s", err, out)
	}
}
