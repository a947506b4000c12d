package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/seedfall/seedfall/internal/engineapi"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// swarmConfig is the jumpy guest (a bug that needs four wall-clock jumps in one life)
// under crashes that restart it often, pauses and clock jumps: all at once, the crashes
// mask the bug; a seed whose swarm turns crashes off finds it.
func swarmConfig(swarm bool) string {
	return ftConfig(ftNode("client", "./wait", "-for", "8s"),
		fmt.Sprintf(`"faults":{"crash_per_sec":6,"crash_mid_op":0,"clock_jump_per_sec":1,"pause_per_sec":2,"max_faults":500,"swarm":%v}`, swarm),
		ftNode("jumpy", "./jumpy"))
}

// TestSwarmDraw: the draw is a pure function of config and seed, each value is within
// the config's, every configured knob is both on and off across seeds, at least one is
// on, and a knob's draw does not depend on which other knobs the config sets.
func TestSwarmDraw(t *testing.T) {
	s := ftSim(t, swarmConfig(true))
	on, off := map[string]int{}, map[string]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		d := engineapi.DrawSwarm(s, seed)
		if !reflect.DeepEqual(d, engineapi.DrawSwarm(s, seed)) {
			t.Fatalf("seed %d: two draws differ", seed)
		}
		if got := slices.Sorted(mapsKeys(d)); !slices.Equal(got, []string{"clock_jump_per_sec", "crash_per_sec", "pause_per_sec"}) {
			t.Fatalf("seed %d: draw names %v, want the three configured knobs", seed, got)
		}
		limit := map[string]float64{"crash_per_sec": 6, "clock_jump_per_sec": 1, "pause_per_sec": 2}
		any := false
		for k, v := range d {
			if v < 0 || v > limit[k] {
				t.Fatalf("seed %d: %s %v outside [0, %v]", seed, k, v, limit[k])
			}
			if v > 0 {
				on[k]++
				any = true
			} else {
				off[k]++
			}
		}
		if !any {
			t.Fatalf("seed %d: every kind is off", seed)
		}
	}
	for _, k := range []string{"crash_per_sec", "clock_jump_per_sec", "pause_per_sec"} {
		if on[k] < 60 || off[k] < 60 {
			t.Errorf("%s: on in %d and off in %d of 200 seeds, want about half each", k, on[k], off[k])
		}
	}
	// A config without pauses draws the same crash and clock-jump values, in the seeds
	// where the fallback that turns one kind on applies to neither config (two kinds on
	// with pauses, so at least one of the other two).
	s2 := ftSim(t, strings.Replace(swarmConfig(true), `"pause_per_sec":2,`, "", 1))
	same := 0
	for seed := uint64(1); seed <= 50; seed++ {
		a, b := engineapi.DrawSwarm(s, seed), engineapi.DrawSwarm(s2, seed)
		if _, ok := b["pause_per_sec"]; ok {
			t.Fatalf("seed %d: the draw names pause_per_sec, which the config does not set", seed)
		}
		if onKinds(a) >= 2 {
			same++
			if a["crash_per_sec"] != b["crash_per_sec"] || a["clock_jump_per_sec"] != b["clock_jump_per_sec"] {
				t.Fatalf("seed %d: crash and clock jump drew %v without pauses, %v with", seed, b, a)
			}
		}
	}
	if same < 15 {
		t.Fatalf("only %d seeds compared", same)
	}
	// Without swarm there is no draw.
	if d := engineapi.DrawSwarm(ftSim(t, swarmConfig(false)), 1); d != nil {
		t.Fatalf("swarm off: draw %v, want nil", d)
	}
}

func mapsKeys(d engine.SwarmDraw) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range d {
			if !yield(k) {
				return
			}
		}
	}
}

// TestSwarmRunRecordedAndReplayed: a swarm run traces its draw, records it in its
// result, applies only the kinds that are on, passes -check, and its saved plan (faults
// and draw, through JSON) replays it exactly; the same faults under another draw do not.
func TestSwarmRunRecordedAndReplayed(t *testing.T) {
	s := ftSim(t, swarmConfig(true))
	ctx := context.Background()
	var r *engine.Result
	var seed uint64
	// A seed with crashes off and pauses on, so the draw shapes both the plan and the
	// trace.
	for seed = 1; seed < 100; seed++ {
		d := engineapi.DrawSwarm(s, seed)
		if d["crash_per_sec"] == 0 && d["pause_per_sec"] > 0 {
			break
		}
	}
	r = ftRun(t, s, seed, nil)
	if !reflect.DeepEqual(r.Swarm, engineapi.DrawSwarm(s, seed)) {
		t.Fatalf("result swarm %v, want the seed's draw %v", r.Swarm, engineapi.DrawSwarm(s, seed))
	}
	want := "swarm: " + r.Swarm.String()
	if !strings.Contains(want, "crash off") || !strings.Contains(want, "pause ") {
		t.Fatalf("draw text %q", want)
	}
	found := false
	for _, l := range r.Trace {
		found = found || strings.HasSuffix(l, " "+want)
	}
	if !found {
		t.Fatalf("trace has no %q line:\n%s", want, strings.Join(r.Trace[:min(10, len(r.Trace))], "\n"))
	}
	pauses := 0
	for _, f := range r.Faults {
		if f.Kind == engine.FaultCrash {
			t.Fatalf("crashes are off in this seed's swarm, yet %s was applied", f)
		}
		if f.Kind == engine.FaultPause {
			pauses++
		}
	}
	if pauses == 0 {
		t.Fatalf("pauses are on (%v), yet none was applied", r.Swarm)
	}
	// -check: the seed twice, traces identical.
	if c := s.Run(ctx, seed, engine.RunOptions{Check: true}); !c.Checked || c.Divergence != nil || c.TraceHash != r.TraceHash {
		t.Fatalf("-check: checked %v, divergence %+v, hash %s vs %s", c.Checked, c.Divergence, c.TraceHash, r.TraceHash)
	}
	// The saved plan, through JSON, replays exactly.
	data, err := json.Marshal(engine.FaultPlan{Seed: seed, Faults: r.Faults, Swarm: r.Swarm})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"swarm":{`) {
		t.Fatalf("saved plan has no swarm: %s", data)
	}
	var plan engine.FaultPlan
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	if rr := ftRun(t, s, seed, &plan); rr.TraceHash != r.TraceHash || !reflect.DeepEqual(rr.Swarm, r.Swarm) {
		t.Fatalf("replay of the saved plan: hash %s, want %s", rr.TraceHash, r.TraceHash)
	}
	// The plan replays under its own draw even on a config without swarm.
	if rr := ftRun(t, ftSim(t, swarmConfig(false)), seed, &plan); rr.TraceHash != r.TraceHash {
		t.Fatalf("replay of the saved plan on the config without swarm: hash %s, want %s", rr.TraceHash, r.TraceHash)
	}
	// Negative control: the same faults under another draw are another run.
	other := engine.SwarmDraw{}
	for k, v := range r.Swarm {
		other[k] = v / 2
	}
	if rr := ftRun(t, s, seed, &engine.FaultPlan{Seed: seed, Faults: r.Faults, Swarm: other}); rr.TraceHash == r.TraceHash {
		t.Fatalf("the faults under another swarm draw gave the same trace")
	}
}

// TestSwarmOffUnchanged: without swarm a run has no draw and no swarm line, and its
// plan is the seed's plan at the config's own rates.
func TestSwarmOffUnchanged(t *testing.T) {
	s := ftSim(t, swarmConfig(false))
	r := ftRun(t, s, 3, nil)
	if r.Swarm != nil {
		t.Fatalf("swarm off: result swarm %v", r.Swarm)
	}
	for _, l := range r.Trace {
		if strings.Contains(l, "swarm") {
			t.Fatalf("swarm off: trace line %q", l)
		}
	}
	if p := engineapi.GeneratePlan(s, 3, 0); p.Swarm != nil {
		t.Fatalf("swarm off: generated plan has swarm %v", p.Swarm)
	}
}

// TestSwarmGeneratePlan: a plan generated under a draw has only the kinds that are on,
// and the seed's own plan records the seed's draw.
func TestSwarmGeneratePlan(t *testing.T) {
	s := ftSim(t, swarmConfig(true))
	only := engine.SwarmDraw{"crash_per_sec": 0, "clock_jump_per_sec": 1, "pause_per_sec": 0}
	p := engineapi.GeneratePlanSwarm(s, only, 5, 0)
	if len(p.Faults) == 0 || !reflect.DeepEqual(p.Swarm, only) {
		t.Fatalf("plan: %d faults, swarm %v", len(p.Faults), p.Swarm)
	}
	for _, f := range p.Faults {
		if f.Kind != engine.FaultClockJump {
			t.Fatalf("only clock jumps are on, yet the plan has %s", f)
		}
	}
	if own := engineapi.GeneratePlan(s, 5, 0); !reflect.DeepEqual(own.Swarm, engineapi.DrawSwarm(s, 5)) {
		t.Fatalf("the seed's own plan records %v, want the seed's draw %v", own.Swarm, engineapi.DrawSwarm(s, 5))
	}
}

// TestSwarmFindsMaskedBug is the negative control of swarm testing: the jumpy guest's
// bug needs four clock jumps in one life, and the config's crashes restart it before
// they come. Over the same seeds, the run with every kind on finds it rarely; swarm,
// which turns crashes off in about half the seeds, finds it in fewer runs. The counts
// are of fixed seeds, so the test is deterministic.
func TestSwarmFindsMaskedBug(t *testing.T) {
	const seeds = 60
	count := func(swarm bool) (fails, first int) {
		s := ftSim(t, swarmConfig(swarm))
		var list []uint64
		for i := uint64(1); i <= seeds; i++ {
			list = append(list, i)
		}
		for _, r := range s.Sweep(context.Background(), list, engine.SweepOptions{Workers: 2}) {
			if r.Verdict == engine.VerdictError || r.Verdict == engine.VerdictWatchdog {
				t.Fatalf("seed %d: %s: %+v", r.Seed, r.Verdict, r.Failure)
			}
			if r.Verdict == engine.VerdictFail {
				if !strings.Contains(r.Failure.Reason, "jumpy") {
					t.Fatalf("seed %d fails otherwise: %s", r.Seed, r.Failure.Reason)
				}
				fails++
				if first == 0 {
					first = int(r.Seed)
				}
			}
		}
		return fails, first
	}
	plain, plainFirst := count(false)
	swarm, swarmFirst := count(true)
	t.Logf("of %d seeds: all kinds on %d failures (first at run %d), swarm %d (first at run %d)", seeds, plain, plainFirst, swarm, swarmFirst)
	if swarm < 4 || swarm < 3*plain {
		t.Fatalf("swarm found the masked bug in %d of %d seeds, all kinds on in %d: want swarm at least 4 and 3 times as many", swarm, seeds, plain)
	}
	if plainFirst != 0 && swarmFirst >= plainFirst {
		t.Fatalf("swarm's first failure at run %d, all kinds on at run %d", swarmFirst, plainFirst)
	}
}

// TestSwarmShrinkTurnsKindsOff: shrinking a swarm failure turns off the kinds the
// failure does not need, and the minimal plan, with its draw, replays exactly.
func TestSwarmShrinkTurnsKindsOff(t *testing.T) {
	s := ftSim(t, swarmConfig(true))
	ctx := context.Background()
	// A failing seed with pauses on beside the clock jumps.
	var seed uint64
	for i := uint64(1); i <= 200 && seed == 0; i++ {
		if d := engineapi.DrawSwarm(s, i); d["pause_per_sec"] > 0 && d["clock_jump_per_sec"] > 0.5 {
			if r := s.Run(ctx, i, engine.RunOptions{}); r.Verdict == engine.VerdictFail {
				seed = i
			}
		}
	}
	if seed == 0 {
		t.Fatal("no failing seed with pauses on")
	}
	res, err := s.Shrink(ctx, seed, engine.ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.KindsOff, engine.FaultPause) || res.Plan.Swarm["pause_per_sec"] != 0 {
		t.Fatalf("shrink turned off %v (plan swarm %v), want pause off", res.KindsOff, res.Plan.Swarm)
	}
	if slices.Contains(res.KindsOff, engine.FaultClockJump) || res.Plan.Swarm["clock_jump_per_sec"] == 0 {
		t.Fatalf("shrink turned off clock jumps, which the failure needs: %v", res.KindsOff)
	}
	if !res.Replays {
		t.Fatal("the minimal plan does not replay exactly")
	}
	// With KeepSwarm, the draw stays as it was.
	kept, err := s.Shrink(ctx, seed, engine.ShrinkOptions{KeepSwarm: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept.KindsOff) != 0 || !reflect.DeepEqual(kept.Plan.Swarm, engineapi.DrawSwarm(s, seed)) {
		t.Fatalf("KeepSwarm: kinds off %v, plan swarm %v", kept.KindsOff, kept.Plan.Swarm)
	}
}

// onKinds counts the kinds a draw turns on.
func onKinds(d engine.SwarmDraw) int {
	n := 0
	for _, v := range d {
		if v > 0 {
			n++
		}
	}
	return n
}
