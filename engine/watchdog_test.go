package engine_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
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
// in a child process because a watchdog turns the process's collector off.
func TestWatchdogSparesStarvedGuest(t *testing.T) {
	if os.Getenv("SEEDFALL_TEST_STARVE") != "1" {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWatchdogSparesStarvedGuest$", "-test.v", "-test.timeout=4m")
		cmd.Env = append(os.Environ(), "SEEDFALL_TEST_STARVE=1")
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

	// The control: the same stretch, with the CPU clock running, is a spin.
	r = s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictWatchdog {
		t.Fatalf("control: verdict %s (%v), want watchdog", r.Verdict, r.Failure)
	}
	if l, _ := traceLine(r, "client#1 | computing"); l == "" {
		t.Errorf("control: the guest did not start its computation:\n%s", traceText(r))
	}
}

// TestChildCPU: the pool reads a worker's CPU time from /proc, and it grows as the
// process works (here the test process itself, which burns CPU between two readings).
func TestChildCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, ok := engine.ChildCPU(os.Getpid()); ok {
			t.Fatal("childCPU claims to read CPU time off Linux")
		}
		return
	}
	a, ok := engine.ChildCPU(os.Getpid())
	if !ok {
		t.Fatal("cannot read this process's CPU time from /proc")
	}
	x := uint64(1)
	grew := false
	for i := 0; i < 1<<14 && !grew; i++ { // seconds of CPU at most
		for range 1 << 20 {
			x = x*6364136223846793005 + 1
		}
		b, _ := engine.ChildCPU(os.Getpid())
		grew = b >= a+50*time.Millisecond
	}
	if !grew {
		t.Fatalf("the CPU time read from /proc did not grow while the process worked (from %s)", a)
	}
	if _, ok := engine.ChildCPU(1 << 30); ok {
		t.Error("a process that does not exist has a CPU time")
	}
	_ = x
}
