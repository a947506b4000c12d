package engine_test

import (
	"context"
	"fmt"
	"reflect"
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
	before := sweepPlacement(t, placementConfig("", false), n)
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
	next := ftSim(t, placementConfig("", false))
	spread := ftSim(t, placementConfig(engine.PlacementSpread, false))
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
