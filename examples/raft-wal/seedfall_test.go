package raftwal_test

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository and run three hashicorp/raft
// v1.7.2 servers on hashicorp/raft-wal v0.4.2, unmodified, with examples/raft's client as
// the workload. SEEDFALL_LONG=1 runs the sweeps the README quotes.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// Crashes (half of them inside a disk op, torn writes) and partitions: no false alarm.
func TestLinearizable(t *testing.T) {
	exampletest.SweepPasses(t, "seedfall.json", exampletest.Seeds("1-3", "1-100"), true)
}

// Crashes at 2/s with a second's restart delay, durability only (the README's 300).
func TestDurable(t *testing.T) {
	exampletest.SweepPasses(t, "seedfall.durable.json", exampletest.Seeds("1-2", "1-300"), false)
}

// strict_dirs, with examples/raft's snapshot-directory patch (its finding, not this
// store's): raft-wal syncs the directory of every segment it creates and of wal-meta.db.
func TestStrictDirs(t *testing.T) {
	exampletest.SweepPasses(t, "seedfall.strict.json", exampletest.Seeds("1-3", "1-100"), true)
}

// The negative control: segment files whose Sync does nothing. Entries are acknowledged
// before they are durable, and a crash loses them: raft restarts on a log whose last
// entries are gone (or the check finds writes gone).
func TestNoSyncCaught(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-c", "seedfall.nosync.json", "-seeds", "1-3")
	exampletest.WantFail(t, code, out, "FAIL 3 of 3 seeds failed")
	if !regexp.MustCompile(`raft: failed to get last log at index \d+: log not found|acknowledged write lost`).MatchString(out) {
		t.Errorf("nosync fails, but not with lost writes:\n%s", out)
	}
}

// hashicorp/raft-wal#31, fixed in v0.4.1: a tail truncation (raft clearing a follower's
// conflicting suffix) marked the tail segment sealed without writing its index block,
// and the next start panics with "sealed segment has no index block". With v0.4.1's fix
// taken out again (patches/revert-forceseal.patch), a random sweep finds it; with the
// fix, the same seed passes.
func TestForceSealRevertedCaught(t *testing.T) {
	seed := exampletest.PerGo(t, "the lowest failing seed of seedfall.forceseal-reverted.json 1-300", map[string]int{"go1.26": 30, "go1.27": 35})
	code, out := exampletest.Run(t, "run", "-c", "seedfall.forceseal-reverted.json", "-seeds", fmt.Sprint(seed))
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "crashed: exit_code(2): panic: sealed segment has no index block (in github.com/hashicorp/raft.NewRaft")
	// The trace: a follower clears its log's conflicting suffix, and its next start
	// cannot read the segment the truncation sealed.
	code, out = exampletest.Run(t, "replay", "-c", "seedfall.forceseal-reverted.json", "-seed", fmt.Sprint(seed))
	exampletest.WantFail(t, code, out, "raft: clearing log suffix", `error="sealed segment has no index block"`)
	code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.json", "-seed", fmt.Sprint(seed))
	exampletest.WantPass(t, code, out)
}
