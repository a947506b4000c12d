package pudge_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run small sweeps of this example's configs. SEEDFALL_LONG=1 runs the sweeps the
// README quotes (200 seeds) instead of a few seeds.

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

// pudgePlan is a plan and the write it loses, per Go release (a run is deterministic per
// toolchain). On go1.27.3 the first in-place rewrite of seed 1 is k0's PUT 16 at
// 24.222743296s (disk #89, @0+29 over 37 bytes): its plans put the kill 2µs after it,
// and the crash in the index fsync that follows (disk #91).
type pudgePlan struct{ file, lost string }

// Finding 23, process death: Set rewrites a key's value in place when the new value
// is no longer than the old, then its index record. A kill between the two writes
// (1.5µs after the value write of PUT 17) leaves the old record's size over the new
// bytes: k1 reads back as the new value's 12 bytes followed by the old value's tail, a
// value nobody wrote, and the acknowledged v1 is gone. The patch passes the same plan.
func TestKillBetweenValueAndIndexWrite(t *testing.T) {
	p := exampletest.PerGo(t, "the kill plan", map[string]pudgePlan{
		"go1.26": {"seed-1.kill.faults.json", `acknowledged write lost: k1=v1-111111111111111111, server now answers "VAL v17-77777777111111111"`},
		"go1.27": {"seed-1.kill.go1.27.faults.json", `acknowledged write lost: k0=v0-0000000000000000000000000000000000, server now answers "VAL v16-666666666666666666666666600000000"`},
	})
	code, out, seed := replay(t, "seedfall.json", p.file, 1)
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), p.lost)
	code, out, _ = replay(t, "seedfall.fixed.json", p.file, 1)
	exampletest.WantPass(t, code, out)
}

// Finding 23, power loss: the same PUT, and a crash during the syncer's next fsync of
// the index (pudge syncs the index before the values). The index record with the new
// size is kept, the value write is lost: k1 reads back as the old value cut to the new
// length. The patch passes the same plan.
func TestCrashKeepsIndexRecordNotValue(t *testing.T) {
	p := exampletest.PerGo(t, "the crash plan", map[string]pudgePlan{
		"go1.26": {"seed-1.crash.faults.json", `acknowledged write lost: k1=v1-111111111111111111, server now answers "VAL v1-111111111"`},
		"go1.27": {"seed-1.crash.go1.27.faults.json", `acknowledged write lost: k0=v0-0000000000000000000000000000000000, server now answers "VAL v0-00000000000000000000000000"`},
	})
	code, out, seed := replay(t, "seedfall.json", p.file, 1)
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), p.lost, "crash server during disk op #")
	code, out, _ = replay(t, "seedfall.fixed.json", p.file, 1)
	exampletest.WantPass(t, code, out)
}

// Finding 24 (strict_dirs): pudge creates its two files and never fsyncs their
// directory, so one idle crash 24s in takes the value file's name and every
// acknowledged write with it. The patch that also fsyncs the directory passes.
func TestStrictDirsLosesFiles(t *testing.T) {
	code, out, seed := replay(t, "seedfall.strict.json", "seed-6.strict.faults.json", 1)
	lost := exampletest.PerGo(t, "the write the strict plan loses", map[string]string{
		"go1.26": `acknowledged write lost: k0=v0-, server now answers "NONE"`,
		"go1.27": `acknowledged write lost: k0=v0-000000000000000, server now answers "NONE"`,
	})
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), lost)
	code, out, _ = replay(t, "seedfall.strict.fixed.json", "seed-6.strict.faults.json", 1)
	exampletest.WantPass(t, code, out)
}

// The patches pass a sweep, the second under strict_dirs.
func TestFixedPasses(t *testing.T) {
	for _, c := range []string{"seedfall.fixed.json", "seedfall.strict.fixed.json"} {
		code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-4", "1-200"))
		exampletest.WantPass(t, code, out)
	}
}

// Negative control: SyncInterval 0 (pudge's default) never fsyncs, and the server
// acknowledges at once; the patched library still loses acknowledged writes.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.nosync.json", "-seeds", "1-4")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}
