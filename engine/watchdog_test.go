package engine_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// TestWatchdogSparesStarvedGuest: the watchdog counts CPU time as well as wall-clock
// time, so a guest that a loaded machine starves is not taken for a spin. The guest
// computes for a long stretch (10^9 iterations, at least a third of a second on any
// machine) without a host call, against a 50ms watchdog. With the process's real CPU
// clock that stretch is a spin (the control); with a CPU clock that stands still, as
// for a process the machine does not run, it is not, and the run passes. The test runs
// in a child process with the collector off, as TestWatchdogInProcess does: a collection
// that starts while a guest computes without host calls cannot finish before it returns,
// and stops the watchdog's monitor with everything else.
func TestWatchdogSparesStarvedGuest(t *testing.T) {
	if os.Getenv("SEEDFALL_TEST_STARVE") != "1" {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWatchdogSparesStarvedGuest$", "-test.v", "-test.timeout=4m")
		cmd.Env = append(os.Environ(), "SEEDFALL_TEST_STARVE=1", "GOGC=off")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchdogSparesStarvedGuest") {
			t.Fatalf("child test: %v\n%s", err, out)
		}
		return
	}
	s := prepared(t, "compute.json", basicConfig(`"watchdog": "50ms"`, basicNode("client", "compute", "1000000000")))

	restore := engine.SetCPUClock(func() (time.Duration, bool) { return time.Second, true })
	start := time.Now()
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	restore()
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("starved: verdict %s (%v), want pass", r.Verdict, r.Failure)
	}
	if l, _ := traceLine(r, "client#1 | computed true"); l == "" {
		t.Fatalf("starved: the guest did not finish its computation:\n%s", traceText(r))
	}
	t.Logf("starved: passed after %s of wall-clock time against a 50ms watchdog", time.Since(start))

	// The control: a stretch like it, with the CPU clock running, is a spin. (It is ten
	// times longer, so that the watchdog has seconds of CPU time to see it in even when
	// a loaded machine delays its monitor; stopped at 50ms, it costs no more.)
	long := prepared(t, "compute-long.json", basicConfig(`"watchdog": "50ms"`, basicNode("client", "compute", "10000000000")))
	r = long.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictWatchdog {
		t.Fatalf("control: verdict %s (%v), want watchdog", r.Verdict, r.Failure)
	}
	if l, _ := traceLine(r, "client#1 | computing"); l == "" {
		t.Errorf("control: the guest did not start its computation:\n%s", traceText(r))
	}
}
