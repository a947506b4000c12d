// Tests of the upgrade example under the simulator: each config gives its verdict on a
// few seeds, the trace names the build of every incarnation, a failing seed's recorded
// plan replays it exactly, and -check finds the runs identical.
package upgrade_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

func prepare(t *testing.T, file string) *engine.Sim {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the example for wasip1")
	}
	cfg, err := engine.LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var seeds = []uint64{1, 2, 3, 4}

var startLine = regexp.MustCompile(`server#(\d+) start \(build ([0-9a-f]{7})\)$`)

// builds returns the build each incarnation of the server started on, in order.
func builds(t *testing.T, trace []string) []string {
	t.Helper()
	var out []string
	for _, l := range trace {
		if m := startLine.FindStringSubmatch(l); m != nil {
			out = append(out, m[2])
		} else if strings.Contains(l, "server#") && strings.HasSuffix(l, " start") {
			t.Fatalf("start line without its build: %q", l)
		}
	}
	return out
}

func TestCompatiblePasses(t *testing.T) {
	s := prepare(t, "seedfall.compatible.json")
	restarted := false
	for _, seed := range seeds {
		r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true})
		if r.Verdict != engine.VerdictPass {
			t.Fatalf("seed %d: %s %+v, want pass", seed, r.Verdict, r.Failure)
		}
		b := builds(t, r.Trace)
		// Once: the first incarnation on the old build, every later one on the new.
		for i := 1; i < len(b); i++ {
			restarted = true
			if b[i] == b[0] || b[i] != b[1] {
				t.Fatalf("seed %d: builds %v, want the old build first and the new one after", seed, b)
			}
		}
	}
	if !restarted {
		t.Fatal("no seed restarted the server: the upgrade was never exercised")
	}
}

// failing runs the seeds and returns the failing ones, after checking each fails with
// want in its reason on an incarnation inc accepts.
func failing(t *testing.T, s *engine.Sim, want string, inc func(string) bool) []*engine.Result {
	t.Helper()
	var out []*engine.Result
	for _, seed := range seeds {
		r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true})
		if r.Verdict == engine.VerdictPass {
			continue
		}
		if r.Verdict != engine.VerdictFail || !strings.Contains(r.Failure.Reason, want) || !inc(r.Failure.Reason) {
			t.Fatalf("seed %d: %s %+v, want a failure of the expected incarnation: %q", seed, r.Verdict, r.Failure, want)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		t.Fatalf("none of seeds %v failed, want the incompatible build caught", seeds)
	}
	return out
}

func TestBreakingFailsAtFirstRestart(t *testing.T) {
	s := prepare(t, "seedfall.breaking.json")
	fails := failing(t, s, "record 1 at offset 0 is in format 1; this build reads format 2", isInc(2))
	checkReplay(t, s, fails[0])
	// Shrink keeps the upgrade the failure needs, and its plan replays exactly.
	res, err := s.Shrink(context.Background(), fails[0].Seed, engine.ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Replays || !slices.ContainsFunc(res.Plan.Faults, func(f engine.Fault) bool { return f.Build == engine.BuildNew }) {
		t.Fatalf("shrink: replays %v, plan %v: want a restart on the new build kept", res.Replays, res.Plan.Faults)
	}
}

func TestDowngradeFailsAndFixPasses(t *testing.T) {
	s := prepare(t, "seedfall.downgrade.json")
	// The failing incarnation is an old-build one after a new-build one: in "alternate"
	// mode server#3, or a later odd one when the new build logged no record before
	// then (seed 2: server#2 logs nothing, server#3 recovers the same 6 format-1
	// records, server#4 logs format 2 and server#5 fails).
	fails := failing(t, s, "is in format 2; this build reads format 1", func(reason string) bool {
		for n := 3; n < 100; n += 2 {
			if isInc(n)(reason) {
				return true
			}
		}
		return false
	})
	for _, r := range fails {
		b := builds(t, r.Trace)
		if len(b) < 3 || len(b)%2 == 0 || !isInc(len(b))(r.Failure.Reason) {
			t.Fatalf("seed %d: builds %v, failure %q: want it on the last incarnation, an odd one", r.Seed, b, r.Failure.Reason)
		}
		for i := range b {
			if (b[i] == b[0]) != (i%2 == 0) {
				t.Fatalf("seed %d: builds %v, want old, new, old, ... alternating", r.Seed, b)
			}
		}
	}
	r := fails[0]
	checkReplay(t, s, r)
	// The same seeds with v2 writing format 1 until told otherwise pass.
	fixed := prepare(t, "seedfall.downgrade.fixed.json")
	for _, f := range fails {
		if r := fixed.Run(context.Background(), f.Seed, engine.RunOptions{}); r.Verdict != engine.VerdictPass {
			t.Errorf("fixed, seed %d: %s %+v, want pass", f.Seed, r.Verdict, r.Failure)
		}
	}
}

// isInc accepts a failure reason of server incarnation n.
func isInc(n int) func(string) bool {
	return func(reason string) bool { return strings.HasPrefix(reason, fmt.Sprintf("server#%d ", n)) }
}

// checkReplay replays r's recorded faults (which record each restart's build) and
// runs its seed under -check.
func checkReplay(t *testing.T, s *engine.Sim, r *engine.Result) {
	t.Helper()
	if !slices.ContainsFunc(r.Faults, func(f engine.Fault) bool { return f.Build == engine.BuildNew }) {
		t.Fatalf("seed %d: faults %v record no restart on the new build", r.Seed, r.Faults)
	}
	again := s.Run(context.Background(), r.Seed, engine.RunOptions{Plan: &engine.FaultPlan{Seed: r.Seed, Faults: r.Faults}})
	if again.TraceHash != r.TraceHash {
		t.Errorf("seed %d: replay of the recorded plan has trace %s, the run had %s", r.Seed, again.TraceHash, r.TraceHash)
	}
	c := s.Run(context.Background(), r.Seed, engine.RunOptions{Check: true})
	if !c.Checked || c.Divergence != nil || c.TraceHash != r.TraceHash {
		t.Errorf("seed %d: -check: checked %v, divergence %+v, trace %s (run had %s)", r.Seed, c.Checked, c.Divergence, c.TraceHash, r.TraceHash)
	}
	// A plan that keeps the crashes but restarts on the old build never upgrades: the
	// failure needs the switch.
	var noUpgrade []engine.Fault
	for _, f := range r.Faults {
		if f.Build != "" {
			f.Build = engine.BuildOld
		}
		noUpgrade = append(noUpgrade, f)
	}
	if o := s.Run(context.Background(), r.Seed, engine.RunOptions{Plan: &engine.FaultPlan{Seed: r.Seed, Faults: noUpgrade}}); o.Verdict != engine.VerdictPass {
		t.Errorf("seed %d without its upgrades: %s %+v, want pass", r.Seed, o.Verdict, o.Failure)
	}
}
