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

// TestGuestFailures covers guests that go wrong: each is a result, never a host error or
// a hang.
func TestGuestFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		config  string
		verdict engine.Verdict
		check   func(t *testing.T, r *engine.Result)
	}{
		{
			name:    "server panics",
			config:  basicConfig(`"horizon": "10s"`, basicNode("server", "panic"), basicNode("client", "idle", "5s")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if r.Failure.Kind != "node-exit" || r.Failure.Node != "server#1" {
					t.Errorf("failure %+v, want node-exit of server#1", r.Failure)
				}
				if !strings.Contains(r.Failure.Reason, "exit_code(2)") {
					t.Errorf("reason %q does not give the exit code", r.Failure.Reason)
				}
				if l, _ := traceLine(r, "server#1 | panic: boom: the server gave up"); l == "" {
					t.Errorf("no panic text in the trace:\n%s", traceText(r))
				}
				if l, _ := traceLine(r, "server#1 exited with code 2"); l == "" {
					t.Errorf("no exit line in the trace")
				}
			},
		},
		{
			name:    "server exits non-zero",
			config:  basicConfig(`"horizon": "10s"`, basicNode("server", "exit", "5"), basicNode("client", "idle", "1s")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if !strings.Contains(r.Failure.Reason, "server#1 crashed: exit_code(5)") {
					t.Errorf("reason %q", r.Failure.Reason)
				}
			},
		},
		{
			name:    "server exits zero",
			config:  basicConfig(`"horizon": "10s"`, basicNode("server", "exit", "0"), basicNode("client", "idle", "1s")),
			verdict: engine.VerdictPass,
		},
		{
			name:    "workload sleeps forever",
			config:  basicConfig(`"horizon": "5s", "liveness": {"horizon": "count"}`, basicNode("client", "sleep-forever")),
			verdict: engine.VerdictHorizon,
			check: func(t *testing.T, r *engine.Result) {
				if r.EndNS != int64(5*time.Second) || r.Failure != nil {
					t.Errorf("ended at %s with failure %v, want the 5s horizon and no failure", time.Duration(r.EndNS).String(), r.Failure)
				}
			},
		},
		{
			name:    "workload blocks forever",
			config:  basicConfig(`"horizon": "5s", "liveness": {"horizon": "count"}`, basicNode("client", "block-forever")),
			verdict: engine.VerdictHorizon,
			check: func(t *testing.T, r *engine.Result) {
				if l, _ := traceLine(r, "nothing left to run"); l == "" {
					t.Errorf("trace does not say why the run stopped:\n%s", traceText(r))
				}
			},
		},
		{
			name:    "workload exits non-zero",
			config:  basicConfig(`"horizon": "5s"`, basicNode("client", "exit", "3")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if r.Failure.Kind != "workload-exit" {
					t.Errorf("failure %+v", r.Failure)
				}
				if l, _ := traceLine(r, "client#1 exited with code 3"); l == "" {
					t.Errorf("no exit code in the trace")
				}
			},
		},
		{
			name:    "stdout flood",
			config:  basicConfig(`"horizon": "5s", "output_limit_kib": 64`, basicNode("client", "flood", "50000")),
			verdict: engine.VerdictPass,
			check: func(t *testing.T, r *engine.Result) {
				if l, _ := traceLine(r, "client#1 output limit of 64 KiB reached"); l == "" {
					t.Errorf("no output limit line in the trace")
				}
				if n := len(output(r, "client")); n < 500 || n > 700 {
					t.Errorf("%d output lines kept, want about 64 KiB of 110-byte lines", n)
				}
				if l, _ := traceLine(r, "flood done"); l != "" {
					t.Errorf("output past the limit reached the trace: %q", l)
				}
			},
		},
		{
			// One write of about 1.3 MiB: the limit cuts it, and the lines before the cut
			// reach the trace.
			name:    "stdout flood in one write",
			config:  basicConfig(`"horizon": "5s"`, basicNode("client", "flood", "12000", "one-write")),
			verdict: engine.VerdictPass,
			check: func(t *testing.T, r *engine.Result) {
				if l, _ := traceLine(r, "client#1 output limit of 1024 KiB reached"); l == "" {
					t.Errorf("no output limit line in the trace")
				}
				out := output(r, "client")
				if n := len(out); n < 9000 || n > 10000 {
					t.Errorf("%d output lines kept, want about 1 MiB of 110-byte lines", n)
				}
				if out[0] != "flood 0 "+strings.Repeat("x", 100) {
					t.Errorf("first line %q", out[0])
				}
			},
		},
		{
			name:    "unbounded allocation",
			config:  basicConfig(`"horizon": "60s", "memory_limit_mib": 64`, basicNode("client", "alloc")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if !strings.Contains(traceText(r), "out of memory") {
					t.Errorf("trace does not say out of memory:\n%s", strings.Join(r.Trace[max(0, len(r.Trace)-10):], "\n"))
				}
				if l, _ := traceLine(r, "client#1 exited with code 2"); l == "" {
					t.Errorf("no exit line")
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := prepared(t, "failures-"+tc.name+".json", tc.config)
			start := time.Now()
			r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
			if r.Verdict != tc.verdict {
				t.Fatalf("verdict %s (%v), want %s\n%s", r.Verdict, r.Failure, tc.verdict, strings.Join(r.Trace[max(0, len(r.Trace)-20):], "\n"))
			}
			if (r.Verdict == engine.VerdictFail) != (r.Failure != nil) {
				t.Errorf("verdict %s with failure %v", r.Verdict, r.Failure)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
			t.Logf("%s in %s", r.Verdict, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestWatchdogInProcess: a guest that spins without host calls is stopped by the
// wall-clock watchdog, and the run reports it. The spinning goroutine cannot be
// reclaimed, and the Go runtime cannot preempt it either, so the next garbage
// collection of the process would wait for it forever: the test runs itself in a child
// process with the collector off, which exits afterwards. (This is why the CLI sweeps in
// worker processes.)
func TestWatchdogInProcess(t *testing.T) {
	if os.Getenv("SEEDFALL_TEST_SPIN") != "1" {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWatchdogInProcess$", "-test.v", "-test.timeout=90s")
		cmd.Env = append(os.Environ(), "SEEDFALL_TEST_SPIN=1", "GOGC=off")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchdogInProcess") {
			t.Fatalf("child test: %v\n%s", err, out)
		}
		return
	}
	s := prepared(t, "spin-inproc.json", basicConfig(`"watchdog": "1s"`, basicNode("client", "spin", "1")))
	start := time.Now()
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictWatchdog {
		t.Fatalf("verdict %s (%v), want watchdog", r.Verdict, r.Failure)
	}
	t.Logf("the watchdog of 1s fired after %s", time.Since(start)) // logged: a loaded machine stretches it
	if r.Failure == nil || !strings.Contains(r.Failure.Reason, "client#1") {
		t.Errorf("failure %v does not name the spinning node", r.Failure)
	}
	if l, _ := traceLine(r, "client#1 | spinning"); l == "" {
		t.Errorf("the guest did not get to its loop:\n%s", traceText(r))
	}
	// A seed on which the guest does not spin passes on the same Sim.
	if r := s.Run(context.Background(), 2, engine.RunOptions{}); r.Verdict != engine.VerdictPass {
		t.Errorf("seed 2: verdict %s (%v), want pass", r.Verdict, r.Failure)
	}
}

// TestWatchdogSparesSlowProgress: the watchdog stops a guest that runs without host
// calls, not a run that is merely slow: a guest that makes host calls for longer than the
// budget without ever blocking (here 400,000 clock reads against a 100ms budget) is never
// taken for a spin, whatever the machine's speed. It passes, or on a very slow machine
// meets the cap of 10 budgets for the whole run, which says so.
func TestWatchdogSparesSlowProgress(t *testing.T) {
	s := prepared(t, "busy.json", basicConfig(`"watchdog": "100ms"`, basicNode("client", "busy", "400000")))
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	switch {
	case r.Verdict == engine.VerdictPass:
	case r.Verdict == engine.VerdictWatchdog && strings.Contains(r.Failure.Reason, "while still making progress"):
		t.Logf("the machine is slow: %s", r.Failure.Reason)
	default:
		t.Fatalf("verdict %s (%v), want pass: %d host calls in %s of wall time", r.Verdict, r.Failure, r.Stats.HostCalls, time.Duration(r.Stats.WallNS))
	}
}
