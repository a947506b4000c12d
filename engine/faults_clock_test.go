package engine_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

var ftTick = regexp.MustCompile(`^tick (\d+) wall=(-?\d+) mono=(\d+)$`)

type ftTickLine struct {
	n          int
	wall, mono int64 // ms since the node's start, by its own clocks
	at         time.Duration
}

func ftTicks(t *testing.T, r *engine.Result) []ftTickLine {
	var out []ftTickLine
	for _, l := range ftOutput(t, r, "clock") {
		m := ftTick.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		w, _ := strconv.ParseInt(m[2], 10, 64)
		mo, _ := strconv.ParseInt(m[3], 10, 64)
		out = append(out, ftTickLine{n, w, mo, l.at})
	}
	return out
}

func ftClockConfig(extra string) string {
	return ftConfig(ftNode("client", "./wait", "-for", "3s"), extra, ftNode("clock", "./clock", "-n", "20"))
}

// A wall-clock jump's plan is the scenario testdata/scenarios/clock_jump_back_forward.txt;
// a fast clock's and a clock slowed mid-run are clock_skew_fast.txt and
// clock_skew_slowed.txt.

// Clock skew: without a skew the 20th tick comes at 2s of global time, and the config's
// clock_skew_ppm draws a drift (the planned skews are scenarios, above).
func TestFaultClockSkew(t *testing.T) {
	s := ftSim(t, ftClockConfig(""))
	lastTick := func(t *testing.T, plan *engine.FaultPlan) (*engine.Result, ftTickLine) {
		r := ftRun(t, s, 1, plan)
		if r.Verdict != engine.VerdictPass {
			t.Fatalf("%s\n%s", r, ftDump(r))
		}
		ticks := ftTicks(t, r)
		if len(ticks) != 20 {
			t.Fatalf("%d ticks\n%s", len(ticks), ftDump(r))
		}
		return r, ticks[19]
	}
	t.Run("control", func(t *testing.T) {
		_, last := lastTick(t, nil)
		if last.at < 2000*time.Millisecond || last.at > 2020*time.Millisecond {
			t.Fatalf("last tick at %s, want ~2s", last.at)
		}
	})
	t.Run("config clock_skew_ppm", func(t *testing.T) {
		s := ftSim(t, ftClockConfig(`"faults":{"clock_skew_ppm":50000}`))
		r := ftRun(t, s, 1, nil)
		ftMust(t, r, "world", `^clock of clock drifts [+-]\d+ppm$`)
	})
}

// A run's applied faults, saved as JSON and replayed as a plan, give a byte-identical
// trace, for a plan drawn from every rate of the config.
func TestFaultPlanReplayIdentical(t *testing.T) {
	cfg := ftConfig(ftClient("-targets", "s1:7000,s2:7000", "-n", "60", "-every", "30ms"), `"faults":{
		"crash_per_sec":1,"restart_delay":"200ms","torn_writes":true,"fsync_eio":0.05,
		"partition_per_sec":1,"partition_duration":"300ms","one_way_share":0.5,
		"reset_per_sec":1,"pause_per_sec":1,"pause_duration":"200ms",
		"clock_jump_per_sec":1,"clock_skew_ppm":20000,"latency_spike_per_sec":1}`,
		ftServer("s1", "-disk"), ftServer("s2", "-disk"))
	s := ftSim(t, cfg)
	kinds := map[engine.FaultKind]bool{}
	for seed := uint64(1); seed <= 3; seed++ {
		r1 := ftRun(t, s, seed, nil)
		if len(r1.Faults) == 0 || len(ftPings(t, r1)) < 20 {
			t.Fatalf("seed %d: %d faults applied, %d pings answered\n%s", seed, len(r1.Faults), len(ftPings(t, r1)), ftDump(r1))
		}
		for _, f := range r1.Faults {
			kinds[f.Kind] = true
		}
		// Save and load the plan as `replay -save` and `replay -faults` do.
		data, err := json.MarshalIndent(&engine.FaultPlan{Seed: seed, Faults: r1.Faults}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var plan engine.FaultPlan
		if err := json.Unmarshal(data, &plan); err != nil {
			t.Fatal(err)
		}
		for i, f := range plan.Faults {
			if err := f.Validate(); err != nil {
				t.Fatalf("saved fault %d: %v", i, err)
			}
		}
		r2 := ftRun(t, s, seed, &plan)
		if r1.TraceHash != r2.TraceHash || !slices.Equal(r1.Trace, r2.Trace) {
			for i := range min(len(r1.Trace), len(r2.Trace)) {
				if r1.Trace[i] != r2.Trace[i] {
					t.Fatalf("seed %d: replay differs at line %d:\n  %s\n  %s", seed, i+1, r1.Trace[i], r2.Trace[i])
				}
			}
			t.Fatalf("seed %d: replay differs in length: %d vs %d lines", seed, len(r1.Trace), len(r2.Trace))
		}
		if r1.Verdict != r2.Verdict {
			t.Fatalf("seed %d: verdict %s, replayed %s", seed, r1.Verdict, r2.Verdict)
		}
		// The replay applies the same faults, and so saves the same plan.
		d2, _ := json.MarshalIndent(&engine.FaultPlan{Seed: seed, Faults: r2.Faults}, "", "  ")
		if string(data) != string(d2) {
			t.Fatalf("seed %d: replayed faults differ:\n%s\n%s", seed, data, d2)
		}
		// Faults are printed in the trace as they fire.
		for _, f := range r1.Faults {
			if f.Kind == engine.FaultCrash {
				ftMust(t, r1, "fault", `^crash `+f.Node+`#\d+ `)
			}
		}
	}

	// A hand-written plan with every kind, some by time and some by disk op, is saved the
	// same way: as the faults it applied, where they fired.
	ms := func(d int) int64 { return int64(time.Duration(d) * time.Millisecond) }
	hand := ftPlan(
		engine.Fault{AtNS: ms(100), Kind: engine.FaultFsyncEIO, Node: "s1"},
		engine.Fault{AtNS: ms(150), Kind: engine.FaultCrash, Node: "s2", MidOp: true, RestartNS: ms(100)},
		engine.Fault{AtNS: ms(200), Kind: engine.FaultPartition, Node: "s1", Peers: []string{"client"}, OneWay: true, DurationNS: ms(150)},
		engine.Fault{AtNS: ms(320), Kind: engine.FaultPause, Node: "s2", DurationNS: ms(100)},
		engine.Fault{AtNS: ms(300), Kind: engine.FaultClockJump, Node: "s1", JumpNS: -ms(3000)},
		engine.Fault{AtNS: ms(350), Kind: engine.FaultClockSkew, Node: "s2", SkewPPM: -30000},
		engine.Fault{AtNS: ms(400), Kind: engine.FaultLatency, Node: "s1", LatencyNS: ms(20), DurationNS: ms(300)},
		engine.Fault{AtNS: ms(450), Kind: engine.FaultReset, Node: "client"},
		engine.Fault{Kind: engine.FaultCrash, Node: "s1", DiskOp: 20, Incarnation: 1, RestartNS: ms(50)},
	)
	r1 := ftRun(t, s, 7, hand)
	if len(r1.Faults) != len(hand.Faults) {
		t.Fatalf("hand-written plan: %d of %d faults applied: %+v\n%s", len(r1.Faults), len(hand.Faults), r1.Faults, ftDump(r1))
	}
	data, _ := json.Marshal(&engine.FaultPlan{Faults: r1.Faults})
	var saved engine.FaultPlan
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if r2 := ftRun(t, s, 7, &saved); r2.TraceHash != r1.TraceHash || !slices.Equal(r1.Trace, r2.Trace) {
		t.Fatalf("the saved hand-written plan does not replay the run")
	}
	if r3 := ftRun(t, s, 7, hand); r3.TraceHash != r1.TraceHash {
		t.Fatalf("the hand-written plan is not deterministic")
	}

	var got []string
	for k := range kinds {
		got = append(got, string(k))
	}
	slices.Sort(got)
	t.Logf("fault kinds applied over the seeds: %v", got)
	if len(got) < 7 {
		t.Fatalf("want every generated fault kind exercised, got %v", got)
	}
}
