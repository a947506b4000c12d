package engine_test

import (
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// A split cuts the links between its groups and keeps those inside a group. With s2
// split off from the client and s1, pings to s2 stall until the heal, pings to s1 (the
// client's own group) do not; the control, without the split, stalls nowhere.
func TestFaultSplit(t *testing.T) {
	cfg := func(target string) string {
		return ftConfig(ftClient("-targets", target, "-n", "30"), "", ftServer("s1"), ftServer("s2"))
	}
	toS1, toS2 := ftSim(t, cfg("s1:7000")), ftSim(t, cfg("s2:7000"))
	at, dur := 100*time.Millisecond, 400*time.Millisecond
	heal := at + dur
	split := engine.Fault{AtNS: int64(at), Kind: engine.FaultSplit, Node: "s2",
		Groups: [][]string{{"s2"}, {"client", "s1"}}, DurationNS: int64(dur)}
	if err := split.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		s     *engine.Sim
		plan  *engine.FaultPlan
		stall bool
	}{
		{"split, ping the other group", toS2, ftPlan(split), true},
		{"split, ping the own group", toS1, ftPlan(split), false},
		{"control: no split", toS2, ftPlan(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, tc.s, 1, tc.plan)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			var stalled []ftPing
			for _, p := range ftPings(t, r) {
				if p.rtt > 100*time.Millisecond {
					stalled = append(stalled, p)
				}
			}
			if len(tc.plan.Faults) > 0 {
				ftMust(t, r, "fault", `^split s2 \| client,s1 for 400ms$`)
				if h := ftMust(t, r, "fault", `^heal split s2 \| client,s1$`); h.at != heal {
					t.Fatalf("healed at %s, want %s", h.at, heal)
				}
				if len(r.Faults) != 1 || r.Faults[0].Kind != engine.FaultSplit || len(r.Faults[0].Groups) != 2 {
					t.Fatalf("applied faults %+v, want the split", r.Faults)
				}
			}
			if !tc.stall {
				if len(stalled) > 0 {
					t.Fatalf("stalled pings: %+v\n%s", stalled, ftDump(r))
				}
				return
			}
			if len(stalled) != 1 || stalled[0].at < heal || stalled[0].at-heal > 10*time.Millisecond {
				t.Fatalf("want one ping answered just after the heal at %s, got %+v\n%s", heal, stalled, ftDump(r))
			}
		})
	}
}
