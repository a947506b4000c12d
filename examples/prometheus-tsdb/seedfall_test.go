package prometheustsdb_test

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository and run Prometheus' TSDB
// (v0.316.0, unmodified: its head, WAL, m-mapped head chunks and 2-minute blocks) under
// crashes. SEEDFALL_LONG=1 runs the sweep the README quotes.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// Crashes (half inside a disk op) with torn writes: with finding 4 fixed, every
// restart's DB.Open recovers, and every series reads back as 1..n, also from compacted
// blocks.
func TestRecovers(t *testing.T) {
	seeds := exampletest.Seeds("1-3", "1-100")
	code, out := exampletest.Run(t, "run", "-q", "-c", "seedfall.fixed.json", "-seeds", seeds)
	exampletest.WantPass(t, code, out)
	var a, b int
	fmt.Sscanf(seeds, "%d-%d", &a, &b)
	n := b - a + 1
	if !regexp.MustCompile(fmt.Sprintf(`every series reads back as the samples 1\.\.n\s+%d\s+%d\s+ok`, n, n)).MatchString(out) {
		t.Fatalf("want the read-back check reached and true on all %d seeds:\n%s", n, out)
	}
	if !regexp.MustCompile(`recovery opened compacted blocks\s+\d+\s+[1-9]\d*\s+ok`).MatchString(out) {
		t.Fatalf("no restart opened a compacted block, so recovery from blocks went untested:\n%s", out)
	}
}

// Finding 4 through the TSDB: two crashes, the first tearing the WAL so that the restart
// repairs it, the second losing the repaired segment that nothing fsynced while the next
// segment survives. The series then have a hole. With prometheus-wlog's patches the same
// plan passes.
func TestRepairHole(t *testing.T) {
	plan := exampletest.PerGo(t, "the shrunk plan", map[string]string{"go1.26": "plans/seed-54.shrunk.json", "go1.27": "plans/seed-54.shrunk.json"})
	seed, n := exampletest.ReadPlan(t, plan)
	if n != 2 {
		t.Fatalf("%s has %d faults, want 2", plan, n)
	}
	code, out := exampletest.Run(t, "replay", "-c", "seedfall.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantFail(t, code, out, "always violated: every series reads back as the samples 1..n")
	if !regexp.MustCompile(`rename /data/tsdb/wal/(\d+) -> /data/tsdb/wal/(\d+)\.repair at`).MatchString(out) {
		t.Errorf("no WAL repair before the failure:\n%s", out)
	}
	code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.fixed.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantPass(t, code, out)
}

// The negative control: a patch that stops chunks.Writer syncing a block's chunk
// segment before the block is renamed into place and the WAL truncated behind it.
// A crash then leaves a block whose chunks never reached the disk, and the restart
// fails to open it or to read it.
func TestNoChunkSyncCaught(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-c", "seedfall.nochunksync.json", "-seeds", "1-6")
	exampletest.WantFail(t, code, out)
	if !regexp.MustCompile(`corrupted block|checksum mismatch|cannot populate chunk`).MatchString(out) {
		t.Errorf("the control fails, but not on the block it lost:\n%s", out)
	}
}
