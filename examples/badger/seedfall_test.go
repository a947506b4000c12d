package badger_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository and run badger v4.9.6
// (unmodified: its mmapped memtable WALs, value log and tables through the platform
// layer's ports of ristretto's z and badger's y) under crashes. SEEDFALL_LONG=1 runs
// the sweeps the README quotes.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// With finding 33 fixed, badger keeps every acknowledged write under crashes (half
// inside a disk op) and torn writes, and with ristretto's directory sync also under
// strict_dirs.
func TestPasses(t *testing.T) {
	for _, c := range []string{"seedfall.fixed.json", "seedfall.strict.fixed.json"} {
		code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-4", "1-100"))
		exampletest.WantPass(t, code, out)
	}
}

// Finding 33: a process killed between the create and the ftruncate of a new memtable
// WAL leaves it empty, and every later Open fails with z.NewFile ("Create a new file").
// The plan is the crash-state search's: a crash at the first Open's truncate of
// 00001.mem, with everything before it kept. The random sweep finds it at seed 1 too,
// for the value log, and the patch passes both plans.
func TestEmptyFileRefused(t *testing.T) {
	code, out := exampletest.Run(t, "replay", "-c", "seedfall.json", "-seed", "1", "-faults", "plans/kill-before-truncate.json")
	exampletest.WantFail(t, code, out,
		"crash server#1 during disk op #17 truncate /data/badger/00001.mem 2097152",
		"open badger: while opening memtables err: while opening fid: 1 err: Create a new file")
	exampletest.LowestFailsWithIn(t, "seedfall.json", "1-3", "err: Create a new file")
	plan := exampletest.PerGo(t, "the shrunk plan", map[string]string{"go1.26": "plans/seed-1.shrunk.json", "go1.27": "plans/seed-1.shrunk.json"})
	code, out = exampletest.Run(t, "replay", "-c", "seedfall.json", "-seed", "1", "-faults", plan)
	exampletest.WantFail(t, code, out, `During db.vlog.open err: Open existing file: "/data/badger/000004.vlog" err: Create a new file`)
	for _, p := range []string{"plans/kill-before-truncate.json", plan} {
		s, _ := exampletest.ReadPlan(t, p)
		code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.fixed.json", "-seed", fmt.Sprint(s), "-faults", p)
		exampletest.WantPass(t, code, out)
	}
}

// Finding 34 (strict_dirs): ristretto's OpenMmapFile syncs the directory of a new file
// only when it stays empty, so no new table, memtable WAL or value-log file is ever in
// a synced directory. One idle crash loses a value-log file whose values the replayed
// memtable still points into, and the recreated file under the same number reads them
// back empty; two lose the first table the MANIFEST lists.
func TestStrictDirsLosesNewFiles(t *testing.T) {
	code, out := exampletest.Run(t, "replay", "-c", "seedfall.strict.json", "-seed", "4", "-faults", "plans/strict-seed-4.shrunk.json")
	exampletest.WantFail(t, code, out, `acknowledged write lost: k0=v32-`, `server now answers "VAL "`, "create /data/badger/000001.vlog")
	code, out = exampletest.Run(t, "replay", "-c", "seedfall.strict.json", "-seed", "1", "-faults", "plans/strict-seed-1.shrunk.json")
	exampletest.WantFail(t, code, out, "open badger: file does not exist for table 1")
	for _, c := range []struct{ seed, plan string }{{"4", "plans/strict-seed-4.shrunk.json"}, {"1", "plans/strict-seed-1.shrunk.json"}} {
		code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.strict.fixed.json", "-seed", c.seed, "-faults", c.plan)
		exampletest.WantPass(t, code, out)
	}
}

// Negative control: SyncWrites false acknowledges before the value log and the
// memtable WAL are synced; crashes lose acknowledged writes.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.nosync.json", "-seeds", "1-3")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}
