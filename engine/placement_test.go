package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// placementConfig is the threeop guest (testdata/faults/threeop: three disk ops per
// request, a bug that needs a crash inside the third) under mid-op crashes only, with
// torn writes.
func placementConfig(placement string, fixed bool) string {
	args := []string{}
	if fixed {
		args = append(args, "-fixed")
	}
	p := ""
	if placement != "" {
		p = fmt.Sprintf(`,"crash_placement":%q`, placement)
	}
	return ftConfig(ftNode("client", "./wait", "-for", "6s"),
		fmt.Sprintf(`"faults":{"crash_per_sec":2,"crash_mid_op":1,"torn_writes":true%s}`, p),
		ftNode("server", "./threeop", args...))
}

// sweepPlacement runs seeds 1..n and returns the failing seeds; any failure other than
// the guest's torn-record bug fails the test.
func sweepPlacement(t *testing.T, cfg string, n int) []uint64 {
	t.Helper()
	s := ftSim(t, cfg)
	var seeds, failed []uint64
	for i := uint64(1); i <= uint64(n); i++ {
		seeds = append(seeds, i)
	}
	for _, r := range s.Sweep(context.Background(), seeds, engine.SweepOptions{Workers: 2}) {
		switch r.Verdict {
		case engine.VerdictPass:
		case engine.VerdictFail:
			if !strings.Contains(r.Failure.Reason, "exit_code(1)") {
				t.Fatalf("seed %d fails otherwise: %s", r.Seed, r.Failure.Reason)
			}
			failed = append(failed, r.Seed)
		default:
			t.Fatalf("seed %d: %s: %+v", r.Seed, r.Verdict, r.Failure)
		}
	}
	return failed
}

// TestCrashPlacementReachesThirdOp is issue 47's negative control. With the old
// placement every mid-op crash lands in the first op after an idle spell, the first of
// a request, and the bug at the third op is never reached; "spread" finds it within 50
// seeds. The guest with the bug fixed passes the same seeds, so the failures are the
// bug's.
func TestCrashPlacementReachesThirdOp(t *testing.T) {
	const n = 50
	before := sweepPlacement(t, placementConfig(engine.PlacementNextOp, false), n)
	spread := sweepPlacement(t, placementConfig(engine.PlacementSpread, false), n)
	fixed := sweepPlacement(t, placementConfig(engine.PlacementSpread, true), n)
	t.Logf("seeds 1-%d failing: next_op %v; spread %v; spread, bug fixed %v", n, before, spread, fixed)
	if len(before) != 0 {
		t.Errorf("next_op placement failed seeds %v: the guest's bug should need a crash inside a request's third op", before)
	}
	if len(spread) == 0 {
		t.Fatalf("spread placement found the third-op bug in none of seeds 1-%d", n)
	}
	if len(fixed) != 0 {
		t.Errorf("the fixed guest fails seeds %v under spread placement", fixed)
	}
}

// TestCrashPlacementPlan: "spread" adds skip_ops to the mid-op crashes of a plan and
// changes nothing else in it (the draw has a stream of its own), the draws cover the
// range and favour the first ops, and a bad value is refused with the field's name.
func TestCrashPlacementPlan(t *testing.T) {
	next := ftSim(t, placementConfig(engine.PlacementNextOp, false))
	spread := ftSim(t, placementConfig("", false)) // the default
	hist := map[int64]int{}
	mid := 0
	for seed := uint64(1); seed <= 200; seed++ {
		a, b := engineapi.GeneratePlan(next, seed, 0), engineapi.GeneratePlan(spread, seed, 0)
		if len(a.Faults) != len(b.Faults) {
			t.Fatalf("seed %d: %d faults next_op, %d spread", seed, len(a.Faults), len(b.Faults))
		}
		for i := range a.Faults {
			fa, fb := a.Faults[i], b.Faults[i]
			if fa.SkipOps != 0 {
				t.Fatalf("seed %d: next_op drew skip_ops %d", seed, fa.SkipOps)
			}
			if fb.SkipOps < 0 || fb.SkipOps >= 64 || (fb.SkipOps > 0 && !fb.MidOp) {
				t.Fatalf("seed %d: fault %+v", seed, fb)
			}
			if fb.MidOp {
				mid++
				hist[fb.SkipOps]++
			}
			fb.SkipOps = 0
			if !reflect.DeepEqual(fa, fb) {
				t.Fatalf("seed %d fault %d differs beyond skip_ops:\n%+v\n%+v", seed, i, fa, fb)
			}
		}
	}
	// Half at the next op; the other half log-uniform over [1, 64): P(0) = 1/2,
	// P(1) = 1/12, P(k >= 32) = 1/12.
	deep := 0
	for k, c := range hist {
		if k >= 32 {
			deep += c
		}
	}
	t.Logf("%d mid-op crashes: skip 0 %d, 1 %d, 2 %d, 32-63 %d", mid, hist[0], hist[1], hist[2], deep)
	if mid < 500 || hist[0] < mid*2/5 || hist[0] > mid*3/5 || hist[1] < mid/20 || hist[1] > mid/8 || deep < mid/20 || deep > mid/8 {
		t.Fatalf("skip_ops draws off their distribution: %v of %d", hist, mid)
	}
	_, err := engine.ParseConfig([]byte(placementConfig("first", false)))
	if err == nil || !strings.Contains(err.Error(), `field faults.crash_placement: "first" is not a placement ("next_op" or "spread")`) {
		t.Fatalf("bad placement: %v", err)
	}
}

// TestProvenanceRecordsPlacement: results record the placement their mid-op crashes were
// drawn with ("spread" by default, "next_op" when the config keeps the old draw), and
// nothing when the config draws no mid-op crash, so that the Action does not take a seed
// that passes under another placement as a fix.
func TestProvenanceRecordsPlacement(t *testing.T) {
	for _, tc := range []struct {
		name, faults, want string
	}{
		{"default", `"faults":{"crash_per_sec":1}`, engine.PlacementSpread},
		{"next_op", `"faults":{"crash_per_sec":1,"crash_placement":"next_op"}`, engine.PlacementNextOp},
		{"idle crashes only", `"faults":{"crash_per_sec":1,"crash_mid_op":0}`, ""},
		{"no crashes", `"faults":{"partition_per_sec":1}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ftSim(t, ftConfig(ftNode("client", "./wait", "-for", "1s"), tc.faults, ftNode("server", "./threeop")))
			if got := s.Provenance("x.json").CrashPlacement; got != tc.want {
				t.Errorf("crash placement %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSavedPlansReplayUnderEitherPlacement is issue 47's "old plans keep replaying": a
// fired crash is pinned to its op in every saved plan, so a plan replays to the same
// trace whatever the config's crash placement. Both ways: kvlog's seed-2 plan, saved
// when "next_op" was the only placement, and the plan of a seed whose spread crash let
// ops pass (its trace line says so, and so does the replay's, under "next_op" too).
func TestSavedPlansReplayUnderEitherPlacement(t *testing.T) {
	ctx := context.Background()
	spread := kvlogSim(t, "seedfall.json")
	cfg, err := engine.LoadConfig(filepath.Join("..", "examples", "kvlog", "seedfall.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults.CrashPlacement = engine.PlacementNextOp
	next, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()

	raw, err := os.ReadFile(filepath.Join("..", "examples", "kvlog", "seed-2.faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	var old engine.FaultPlan
	if err := json.Unmarshal(raw, &old); err != nil {
		t.Fatal(err)
	}
	a := spread.Run(ctx, old.Seed, engine.RunOptions{Plan: &old})
	b := next.Run(ctx, old.Seed, engine.RunOptions{Plan: &old})
	if a.TraceHash != b.TraceHash || a.Verdict != b.Verdict {
		t.Errorf("seed-2.faults.json: %s %s under spread, %s %s under next_op", a.Verdict, a.TraceHash, b.Verdict, b.TraceHash)
	}

	for seed := uint64(1); seed <= 40; seed++ {
		r := spread.Run(ctx, seed, engine.RunOptions{Trace: true})
		skipped := slices.ContainsFunc(r.Faults, func(f engine.Fault) bool { return f.DiskOp > 0 && f.SkipOps > 0 })
		if !skipped {
			continue
		}
		plan := &engine.FaultPlan{Seed: seed, Faults: r.Faults}
		again := next.Run(ctx, seed, engine.RunOptions{Plan: plan, Trace: true})
		if again.TraceHash != r.TraceHash {
			t.Fatalf("seed %d: its spread run's plan replays under next_op to another trace (%s, then %s)", seed, r.TraceHash, again.TraceHash)
		}
		if !slices.ContainsFunc(again.Trace, func(l string) bool { return strings.Contains(l, " ops before]") }) {
			t.Errorf("seed %d: the replay's trace does not say where the spread crash was armed", seed)
		}
		return
	}
	t.Fatal("no seed of 1-40 fired a spread crash that let ops pass")
}

// TestArmedLabelAfterReplay: a fired spread crash says where it was armed; replayed from
// its plan on a build where its op comes before that moment (here: the plan's armed
// time moved past it, as another build's earlier op would leave it), the line says the
// plan pinned it, never a time after the one it is traced at.
func TestArmedLabelAfterReplay(t *testing.T) {
	s := ftSim(t, placementConfig(engine.PlacementSpread, false))
	for seed := uint64(1); seed <= 50; seed++ {
		r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true})
		i := slices.IndexFunc(r.Faults, func(f engine.Fault) bool { return f.SkipOps > 0 && f.ArmedNS > 0 && f.DiskOp > 0 })
		if i < 0 {
			continue
		}
		f := r.Faults[i]
		line, _ := traceLine(r, fmt.Sprintf("during disk op #%d ", f.DiskOp))
		if !strings.Contains(line, "[armed at ") || f.AtNS < f.ArmedNS {
			t.Fatalf("seed %d: fault %+v traced as %q", seed, f, line)
		}
		// Its own plan replays the same line.
		plan := &engine.FaultPlan{Faults: slices.Clone(r.Faults)}
		again := s.Run(context.Background(), seed, engine.RunOptions{Trace: true, Plan: plan})
		if l, _ := traceLine(again, fmt.Sprintf("during disk op #%d ", f.DiskOp)); l != line {
			t.Fatalf("seed %d: the plan's replay traced %q, the run %q", seed, l, line)
		}
		// The op now comes before the armed time.
		plan.Faults[i].ArmedNS = f.AtNS + 1e9
		moved := s.Run(context.Background(), seed, engine.RunOptions{Trace: true, Plan: plan})
		l, _ := traceLine(moved, fmt.Sprintf("during disk op #%d ", f.DiskOp))
		if !strings.Contains(l, "[pinned to this op by the plan; armed at ") || strings.Contains(l, "[armed at ") {
			t.Fatalf("seed %d: a crash armed after its op traced as %q", seed, l)
		}
		return
	}
	t.Fatal("no seed of 1-50 fired a spread crash past its first op")
}
