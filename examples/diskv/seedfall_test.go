package diskv_test

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

// Finding 25 (strict_dirs): WriteStream with sync true fsyncs the temporary file, renames
// it over the key's file and never fsyncs the directory, so one idle crash undoes
// renames of acknowledged writes: k5 reads back its previous value. The patch (fsync
// the key's directory after the rename when sync is true) passes the same plan.
func TestStrictDirsLosesRenames(t *testing.T) {
	const plan = "seed-1.faults.json"
	seed, n := exampletest.ReadPlan(t, plan)
	if n != 1 {
		t.Fatalf("%s has %d faults, want 1", plan, n)
	}
	code, out := exampletest.Run(t, "replay", "-q", "-c", "seedfall.strict.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	// The same crash, recorded with go1.26.8, undoes another acknowledged rename under
	// go1.27's runtime: the same finding, another key reads back its previous value.
	lost := exampletest.PerGo(t, "the write seed 1's plan loses", map[string]string{
		"go1.26": `acknowledged write lost: k5=v21-1111111111, server now answers "VAL v5-555555555555555"`,
		"go1.27": `acknowledged write lost: k10=v26-66666666666666666666666, server now answers "VAL v10-00000000000000000000000000000000000000"`,
	})
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), lost)
	code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.strict.fixed.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantPass(t, code, out)
}

// Without strict_dirs (a rename is durable at once, in order) the unpatched library
// passes, and the patch passes under strict_dirs.
func TestPasses(t *testing.T) {
	for _, c := range []string{"seedfall.json", "seedfall.strict.fixed.json"} {
		code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-6", "1-300"))
		exampletest.WantPass(t, code, out)
	}
}

// Negative control: Write (no fsync) acknowledges before the data is durable.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.nosync.json", "-seeds", "1-4")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}
