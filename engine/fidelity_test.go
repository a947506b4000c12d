package engine_test

// Tests of engine fidelity fixes: max_faults 0, clock skew over long timers, panic
// failure reasons and signatures, the linearizability budget, cause futures under a
// given plan.

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// TestMaxFaultsZeroMeansNone: an explicit "max_faults": 0 generates no faults at all,
// while leaving it out keeps the default cap (64) and a small cap is honoured.
func TestMaxFaultsZeroMeansNone(t *testing.T) {
	t.Parallel()
	nodes := []string{basicNode("server", "sleep-forever"), basicNode("client", "idle", "5s")}
	for _, tc := range []struct {
		name, knob string
		lo, hi     int
	}{
		{"absent", ``, 10, 64},
		{"zero", `, "max_faults": 0`, 0, 0},
		{"three", `, "max_faults": 3`, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := basicConfig(`"horizon": "10s", "faults": {"crash_per_sec": 4, "crash_mid_op": 0, "pause_per_sec": 2`+tc.knob+`}`, nodes...)
			s := prepared(t, "maxfaults-"+tc.name+".json", cfg)
			if tc.knob != "" {
				want := map[string]int{"zero": 0, "three": 3}[tc.name]
				if got := s.Config().Faults.MaxFaults; got == nil || *got != want {
					t.Fatalf("parsed max_faults %v, want %d", got, want)
				}
			}
			for seed := uint64(1); seed <= 3; seed++ {
				r := runSeed(t, s, seed, nil)
				if n := len(r.Faults); n < tc.lo || n > tc.hi {
					t.Errorf("seed %d: %d faults applied, want %d to %d:\n%s", seed, n, tc.lo, tc.hi, traceText(r))
				}
			}
		})
	}
	if _, err := engine.ParseConfig([]byte(`{"workload": {"pkg": "./c"}, "faults": {"max_faults": -1}}`)); err == nil {
		t.Error("max_faults -1 accepted")
	}
}

// TestClockSkewLongTimer: a node whose clock runs at +50 ppm (or -50 ppm) sleeps 3 h of
// its own time. Its clocks and timers run at rate 1 + ppm/1e6 (docs/faults.md), so the
// sleep ends after 3h/(1+ppm/1e6) of virtual time and the node's monotonic clock reads
// 3 h then. (Scaling the timeout as ns*1e6 overflowed int64 beyond 2.56 h, and the
// timer fired at once.)
func TestClockSkewLongTimer(t *testing.T) {
	t.Parallel()
	cfg := fmt.Sprintf(`{"nodes":[%s],"workload":%s,"horizon":"5h","watchdog":"10s"}`,
		ftNode("clock", "./clock", "-every", "3h", "-n", "1"), ftNode("client", "./wait", "-for", "4h"))
	s := ftSim(t, cfg)
	for _, ppm := range []int64{50, -50, 100000} {
		t.Run(fmt.Sprintf("%+dppm", ppm), func(t *testing.T) {
			r := ftRun(t, s, 1, ftPlan(engine.Fault{Kind: engine.FaultClockSkew, Node: "clock", SkewPPM: ppm}))
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			ticks := ftTicks(t, r)
			if len(ticks) != 1 {
				t.Fatalf("%d ticks, want 1:\n%s", len(ticks), ftDump(r))
			}
			own := 3 * time.Hour
			want := time.Duration(float64(own) / (1 + float64(ppm)/1e6))
			if d := ticks[0].at - want; d < 0 || d > time.Millisecond {
				t.Errorf("woke at virtual %s, want %s (3h at %+d ppm)", ticks[0].at, want, ppm)
			}
			if m := time.Duration(ticks[0].mono) * time.Millisecond; m < own || m > own+time.Millisecond {
				t.Errorf("own monotonic clock at wake %s, want 3h", m)
			}
		})
	}
}

// causeEIOConfig: the workload does six disk ops (#4 and #6 are fsyncs) and exits 3 if
// one fails; a server idles. fsync_eio and crashes are on.
func causeEIOConfig() string {
	return basicConfig(`"horizon": "1s", "faults": {"fsync_eio": 0.5, "crash_per_sec": 20, "crash_mid_op": 0}`,
		basicNode("server", "sleep-forever"), basicNode("client", "diskops", "/d"))
}

// TestCauseFuturesDrawFaultsUnderPlan: with a given plan (-faults), the futures cause
// re-randomizes draw every random fault after the moment, fsync EIO included, as they
// do without one. (Only the replayed past follows the plan.)
func TestCauseFuturesDrawFaultsUnderPlan(t *testing.T) {
	t.Parallel()
	s := prepared(t, "cause-eio.json", causeEIOConfig())
	empty := &engine.FaultPlan{Seed: 1, Faults: []engine.Fault{}}
	// Control: the plan alone rules the run, nothing is drawn.
	if r := runSeed(t, s, 1, empty); len(r.Faults) != 0 {
		t.Fatalf("the empty plan applied %d faults:\n%s", len(r.Faults), traceText(r))
	}
	eio, crash := 0, 0
	for k := uint64(1); k <= 8; k++ {
		r := s.Run(context.Background(), 1, engine.RunOptions{Plan: empty, ReseedAt: 1, FutureSeed: 1000 + k, Trace: true})
		for _, f := range r.Faults {
			switch f.Kind {
			case engine.FaultFsyncEIO:
				eio++
			case engine.FaultCrash:
				crash++
			}
		}
	}
	if eio == 0 || crash == 0 {
		t.Errorf("8 futures under a plan drew %d fsync EIOs and %d crashes; want some of each (fsync_eio 0.5, 20 crashes/s)", eio, crash)
	}
	// Cause itself: the plan fails fsync #4; from the first moment on, futures fail the
	// same way on their own draws too, so P(fail) is above 0 before the planned EIO.
	plan := &engine.FaultPlan{Seed: 1, Faults: []engine.Fault{{Kind: engine.FaultFsyncEIO, Node: "client", DiskOp: 4, Incarnation: 1}}}
	res, err := s.Cause(context.Background(), 1, engine.CauseOptions{Plan: plan, Moments: 2, Futures: 8, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Moments[0]; m.Fails == 0 {
		t.Errorf("first moment %+v: no future failed; futures under a plan draw no fsync EIO (moments %+v)", m, res.Moments)
	}
}

// linConfig is a workload recording a hard, non-linearizable register history of n
// writes, checked under the given linearizability settings.
func linConfig(n int, lin string) string {
	return basicConfig(`"horizon": "10s", "linearizability": `+lin, basicNode("client", "lin-hard", strconv.Itoa(n)))
}

// TestLinBudgetNeverShapesTheTrace: whether the linearizability checker decides a
// history or runs out of its budget (the wall-clock timeout, or the step budget) is not
// part of the run: the trace hash is the same either way, and -check does not call it
// nondeterminism. Running out is reported apart (LinUnknown), not as a pass or failure.
func TestLinBudgetNeverShapesTheTrace(t *testing.T) {
	t.Parallel()
	decided := prepared(t, "lin-decided.json", linConfig(12, `{"model": "register", "timeout": "1m"}`))
	tinyWall := prepared(t, "lin-tiny-wall.json", linConfig(12, `{"model": "register", "timeout": "1ns"}`))
	tinySteps := prepared(t, "lin-tiny-steps.json", linConfig(12, `{"model": "register", "steps": 10}`))
	big := runSeed(t, decided, 1, nil)
	if big.Verdict != engine.VerdictFail || big.Failure == nil || big.Failure.Kind != "linearizability" || big.LinUnknown {
		t.Fatalf("generous budget: %s (unknown %v), want a linearizability failure\n%s", big, big.LinUnknown, traceText(big))
	}
	for _, tc := range []struct {
		name string
		s    *engine.Sim
	}{{"wall 1ns", tinyWall}, {"10 steps", tinySteps}} {
		t.Run(tc.name, func(t *testing.T) {
			r := runSeed(t, tc.s, 1, nil)
			if !r.LinUnknown || r.Failure != nil || r.LinDetail == "" {
				t.Fatalf("tiny budget: %s unknown=%v, want an unknown check and no failure\n%s", r, r.LinUnknown, traceText(r))
			}
			if r.TraceHash != big.TraceHash {
				t.Errorf("trace hash %s with a tiny budget, %s with a generous one:\n%s\n---\n%s", r.TraceHash, big.TraceHash, traceText(r), traceText(big))
			}
			c := tc.s.Run(context.Background(), 1, engine.RunOptions{Check: true})
			if c.Divergence != nil || (c.Failure != nil && c.Failure.Kind == "nondeterminism") {
				t.Errorf("-check: %v %+v", c.Failure, c.Divergence)
			}
		})
	}
	// -check with a budget that sometimes runs out on one run and not the other: the
	// verdict of -check is never nondeterminism.
	c := decided.Run(context.Background(), 1, engine.RunOptions{Check: true})
	if c.Divergence != nil || c.Failure == nil || c.Failure.Kind != "linearizability" {
		t.Errorf("-check with a generous budget: %v %+v", c.Failure, c.Divergence)
	}
}

// panicRun runs the panics guest as the server, with the given mode, on seed.
func panicRun(t *testing.T, mode string, seed uint64, workload bool) *engine.Result {
	t.Helper()
	node := fmt.Sprintf(`{"name": "server", "pkg": "./guests/panics", "args": [%q]}`, mode)
	cfg := basicConfig(`"horizon": "10s"`, node, basicNode("client", "idle", "5s"))
	if workload {
		cfg = basicConfig(`"horizon": "10s"`, fmt.Sprintf(`{"name": "client", "pkg": "./guests/panics", "args": [%q]}`, mode))
	}
	s := prepared(t, fmt.Sprintf("panics-%s-%v.json", mode, workload), cfg)
	r := runSeed(t, s, seed, nil)
	if r.Verdict != engine.VerdictFail || r.Failure == nil {
		t.Fatalf("%s on seed %d: %s, want a failure\n%s", mode, seed, r, traceText(r))
	}
	return r
}

// TestPanicFailureReason: a Go panic's failure reason is its "panic: …" line and the
// first frame of the guest's own code, not the last line of the traceback; the same
// panic on many seeds (other values in the message) is one signature, and two
// different panics of one program are two.
func TestPanicFailureReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode     string
		workload bool
		want     *regexp.Regexp
	}{
		{"index", false, regexp.MustCompile(`^server#1 crashed: exit_code\(2\): panic: index \d+ out of range for item 0x[0-9a-f]+ \(in main\.indexPanic at guests/panics/main\.go:\d+\)$`)},
		{"sorted", false, regexp.MustCompile(`^server#1 crashed: exit_code\(2\): panic: assignment to entry in nil map \(in main\.sortedPanic\.func1 at guests/panics/main\.go:\d+\)$`)},
		{"repanic", false, regexp.MustCompile(`^server#1 crashed: exit_code\(2\): panic: first failure on seed \d+ \(in main\.repanic\.func1 at guests/panics/main\.go:\d+\)$`)},
		{"index", true, regexp.MustCompile(`^client#1: panic: index \d+ out of range for item 0x[0-9a-f]+ \(in main\.indexPanic at guests/panics/main\.go:\d+\)$`)},
		// A wasm trap: the first frame of the guest's own code, in Go's spelling, and
		// what the trap is natively; the wasm stack stays in the trace.
		{"oob", false, regexp.MustCompile(`^server#1 crashed: exit_code\(2\): wasm trap: out of bounds memory access \(in main\.readPast: a load or store past the guest's memory, through unsafe code; natively a segmentation fault \(SIGSEGV\)\)$`)},
		{"oobcopy", false, regexp.MustCompile(`^server#1 crashed: exit_code\(2\): wasm trap: out of bounds memory access \(in main\.copyPast: a load or store past the guest's memory, through unsafe code; natively a segmentation fault \(SIGSEGV\)\)$`)},
		{"oob", true, regexp.MustCompile(`^client#1: wasm trap: out of bounds memory access \(in main\.readPast: .*SIGSEGV\)\)$`)},
	} {
		t.Run(fmt.Sprintf("%s workload=%v", tc.mode, tc.workload), func(t *testing.T) {
			var sig string
			for seed := uint64(1); seed <= 3; seed++ {
				r := panicRun(t, tc.mode, seed, tc.workload)
				if !tc.want.MatchString(r.Failure.Reason) {
					t.Errorf("seed %d: reason %q, want it to match %s", seed, r.Failure.Reason, tc.want)
				}
				if seed == 1 {
					sig = r.Failure.Signature
				} else if r.Failure.Signature != sig {
					t.Errorf("seed %d: signature %s (%s), seed 1 had %s: one panic, two signatures", seed, r.Failure.Signature, engine.SignatureKey(r), sig)
				}
			}
		})
	}
	a, b := panicRun(t, "index", 1, false), panicRun(t, "sorted", 1, false)
	if a.Failure.Signature == b.Failure.Signature {
		t.Errorf("two different panics have one signature %s: %q and %q", a.Failure.Signature, engine.SignatureKey(a), engine.SignatureKey(b))
	}
	a, b = panicRun(t, "oob", 1, false), panicRun(t, "oobcopy", 1, false)
	if a.Failure.Signature == b.Failure.Signature {
		t.Errorf("traps in two functions have one signature %s: %q and %q", a.Failure.Signature, engine.SignatureKey(a), engine.SignatureKey(b))
	}
	if tr := traceText(a); !strings.Contains(tr, "wasm stack trace:") || !strings.Contains(tr, ".main.readPast(") {
		t.Errorf("the trace lost the trap's wasm stack:\n%s", tr)
	}
}
