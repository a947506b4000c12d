package tidwallwal_test

import (
	"fmt"
	"os"
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

// and the next Open fails with "log corrupt" (tidwall/wal issue #21).
func TestUnpatchedLogCorrupt(t *testing.T) {
	// 1-60: go1.27.3's runtime first fails at seed 41 (go1.26.8's earlier).
	exampletest.LowestFailsWithIn(t, "tidwall.json", "1-60", "crashed: exit_code(1): open wal: log corrupt")
}

// The plan seedfall shrink saved for seed 136 (plans/seed136.shrunk.json): one crash
// during a write is enough.
func TestUnpatchedOneFault(t *testing.T) {
	// Per Go release (a run is deterministic per toolchain): go1.27.3's is seed 73's,
	// whose one crash is in the fsync after the write.
	plan := exampletest.PerGo(t, "the one-crash plan", map[string]string{"go1.26": "plans/seed136.shrunk.json", "go1.27": "plans/seed73.go1.27.shrunk.json"})
	seed, n := readPlan(t, plan)
	if n != 1 {
		t.Fatalf("%s has %d faults, want 1", plan, n)
	}
	code, out := sf(t, "replay", "-q", "-c", "tidwall.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "crashed: exit_code(1): open wal: log corrupt", "crash server during disk op #")
	if got := faultCount(t, out); got != 1 {
		t.Fatalf("%d faults before the failure, want 1:\n%s", got, out)
	}
}

// PR #22's approach (skip the partial entry in memory, keep its bytes in the file)
// still corrupts the log: a shorter later write leaves stale bytes behind it.
func TestPR22StillCorrupts(t *testing.T) {
	code, out := sf(t, "replay", "-c", "tidwall.pr22.json", "-seed", "146", "-faults", "plans/pr22-seed146.json", "-q")
	wantFail(t, code, out, "FAIL seed 146 ", "read wal entry 37: log corrupt")
	// The full fix truncates the partial entry, so the same plan passes.
	code, out = sf(t, "replay", "-c", "tidwall.fixed.json", "-seed", "146", "-faults", "plans/pr22-seed146.json", "-q")
	wantPass(t, code, out)
}

// Negative control: NoSync acknowledges writes before they are durable.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := sf(t, "run", "-c", "tidwall.nosync.json", "-seeds", "1-10")
	wantFail(t, code, out, "acknowledged write lost: ")
}

// The full fix (skip and truncate the partial entry, fsync the log directory when a
// segment is created) passes, also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep; skipped with -short")
	}
	for _, c := range []string{"tidwall.fixed.json", "tidwall.strict.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-20")
		wantPass(t, code, out)
	}
}

// fsync_eio aimed at the segment files (on the fixed library): after one failed fsync,
// Log.Write has already advanced lastIndex (wal.go:497, before the Sync at :500), so the
// server's retry of the same index is refused with "out of order" for good. Without
// crashes to restart the server, no PUT ever succeeds again: every seed is a liveness
// failure with one signature, and the replay shows the EIO, then "out of order".
func TestEIOStallsWrites(t *testing.T) {
	code, out := sf(t, "run", "-q", "-c", "tidwall.fixed.eio.nocrash.json", "-seeds", "1-5")
	wantFail(t, code, out,
		`FAIL seed 1 at t=30s client#1 had not finished at the horizon 30s, waiting with a timer pending; its last output: server answered "ERR out of order"; retrying`,
		"replay: seedfall replay -c tidwall.fixed.eio.nocrash.json -seed 1\n",
		"FAIL 5 of 5 seeds failed (1 distinct failure), 5 never finished (liveness); 0 passed (0 hit the time horizon)")
	code, out = sf(t, "replay", "-c", "tidwall.fixed.eio.nocrash.json", "-seed", "1")
	wantFail(t, code, out, `EIO (injected)`, `server answered "ERR out of order"; retrying`, "horizon reached", "FAIL seed 1 at t=30s ")
}

// The stall's shrunk plan (plans/eio-stall.seed3.shrunk.json) is the one EIO, and it
// still stalls the unfixed library; the EIO rollback patch (fix-truncate-dirsync-eio)
// makes the same plan, and a sweep with crashes, pass.
func TestEIORollbackFixesStall(t *testing.T) {
	const plan = "plans/eio-stall.seed3.shrunk.json"
	seed, n := readPlan(t, plan)
	if n != 1 {
		t.Fatalf("%s has %d faults, want 1", plan, n)
	}
	code, out := sf(t, "replay", "-q", "-c", "tidwall.fixed.eio.nocrash.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantFail(t, code, out, fmt.Sprintf("FAIL seed %d at t=30s ", seed), "had not finished at the horizon", "fsync_eio server at disk op #")
	code, out = sf(t, "replay", "-q", "-c", "tidwall.eiofix.nocrash.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantPass(t, code, out)
	code, out = sf(t, "run", "-q", "-c", "tidwall.eiofix.nocrash.json", "-seeds", "1-10")
	wantPass(t, code, out)
	if testing.Short() {
		return
	}
	code, out = sf(t, "run", "-q", "-c", "tidwall.eiofix.json", "-seeds", "1-20")
	wantPass(t, code, out)
}

// The server made fail-stop (-exit-on-write-error, "on_exit": "restart") gets past the
// stall, but the restart reopens the log over the page cache, which still holds the
// entry whose fsync failed: the log carries on after it, and a crash later turns it into
// a hole that the library returns as an empty entry (plans/failstop-eio.seed1.shrunk.json:
// the EIO and one crash).
func TestFailStopEIOEmptyEntry(t *testing.T) {
	const plan = "plans/failstop-eio.seed1.shrunk.json"
	seed, n := readPlan(t, plan)
	if n != 2 {
		t.Fatalf("%s has %d faults, want 2", plan, n)
	}
	code, out := sf(t, "replay", "-q", "-c", "tidwall.failstop.eio.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), `always violated: every entry the log returns is one the server wrote {"entry":"\"\"","index":1}`)
}
