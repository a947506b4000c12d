package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunLiveness: a sweep whose workload wedges (testdata/liveness.json: the server's
// restart never listens again, the client retries forever) reports every seed as a
// liveness failure, like any failure: its reason, the faults before it, the replay
// command, one signature, a FAIL summary that says why, and the failing exit code. The
// same world with "liveness": {"horizon": "count"} passes, counting the seeds apart.
func TestRunLiveness(t *testing.T) {
	cfg := filepath.Join(testdata, "liveness.json")
	code, stdout, stderr := runCLI(t, "run", "-c", cfg, "-seeds", "1-4", "-workers", "2", "-q")
	if code != exitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFail, stdout, stderr)
	}
	for _, want := range []string{
		"FAIL seed 1 at t=20s client#1 had not finished at the horizon 20s, waiting with a timer pending; its last output: dial: ",
		"  faults before the failure (",
		"crash server, restart at ",
		"  replay: seedfall replay -c " + cfg + " -seed 1\n",
		"  same failure (sig-",
		"FAIL 4 of 4 seeds failed (1 distinct failure), 4 never finished (liveness); 0 passed (0 hit the time horizon)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = runCLI(t, "replay", "-q", "-c", cfg, "-seed", "1")
	if code != exitFail || !strings.Contains(stdout, "FAIL seed 1 at t=20s client#1 had not finished at the horizon") {
		t.Errorf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "run", "-c", filepath.Join(testdata, "liveness-count.json"), "-seeds", "1-4", "-workers", "2", "-q")
	if code != exitPass || !strings.Contains(stdout, "ok 4 seeds passed (4 hit the time horizon)") {
		t.Errorf("under count: exit %d, want %d\n%s\n%s", code, exitPass, stdout, stderr)
	}
}
