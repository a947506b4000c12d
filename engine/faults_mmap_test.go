package engine_test

import (
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// The wasip1 platform layer's mmap under crashes (testdata/faults/mapped; the native
// comparison is TestWASIMapped, the msync and flock cases are the scenarios
// mmap_msync_survives_crash.txt and flock_released_by_crash.txt).

func ftMappedConfig(args ...string) string {
	return ftConfig(ftNode("client", "./wait", "-for", "600ms"), "", ftNode("store", "./mapped", args...))
}

// mmapOutcomes runs seeds 1..n of the store guest with the given fault at 300ms and
// counts what the next life read.
func mmapOutcomes(t *testing.T, s *engine.Sim, n int, f engine.Fault) map[string]int {
	t.Helper()
	got := map[string]int{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := ftRun(t, s, seed, ftPlan(f))
		if r.Verdict != engine.VerdictPass {
			t.Fatalf("seed %d: %s\n%s", seed, r, ftDump(r))
		}
		l := ftMust(t, r, "store#2", `^\| after crash: `)
		got[l.raw]++
		if _, ok := ftFind(t, r, "store#2", `the rest of the page changed`); ok {
			t.Fatalf("seed %d: a store of 4 bytes changed the rest of its page:\n%s", seed, ftDump(r))
		}
	}
	return got
}

// TestMmapCrashBeforeMsync: a store through a writable shared map, never synced, is a
// dirty page in the page cache. A power loss may keep it (the kernel wrote it back
// before) or lose it, and seedfall draws both; a process death (kill) keeps it, as the
// page cache survives; an fsync of the file writes it back and makes it durable.
func TestMmapCrashBeforeMsync(t *testing.T) {
	t.Parallel()
	const seeds = 16
	crash := ftCrash("store", 300*time.Millisecond, 100*time.Millisecond)
	kill := crash
	kill.Kind = engine.FaultKill

	s := ftSim(t, ftMappedConfig("-mode", "store"))
	r := ftRun(t, s, 1, ftPlan(crash))
	ftMust(t, r, "store#1", `^mmap /m@0\+4096: 1 dirty pages left in the page cache at exit \(unsynced writes\)$`)
	got := mmapOutcomes(t, s, seeds, crash)
	if len(got) != 2 || got["| after crash: NEW!"] == 0 || got["| after crash: old!"] == 0 {
		t.Errorf("power loss before msync over %d seeds: %v; want both the store kept and lost", seeds, got)
	}
	if got := mmapOutcomes(t, s, seeds, kill); got["| after crash: NEW!"] != seeds {
		t.Errorf("kill before msync over %d seeds: %v; want the store kept on every seed (the page cache survives)", seeds, got)
	}

	fs := ftSim(t, ftMappedConfig("-mode", "store", "-fsync"))
	if got := mmapOutcomes(t, fs, seeds, crash); got["| after crash: NEW!"] != seeds {
		t.Errorf("power loss after fsync over %d seeds: %v; want the store kept on every seed", seeds, got)
	}
}
