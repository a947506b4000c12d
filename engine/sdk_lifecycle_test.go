package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// lcConfig is a server under frequent crashes and the wait workload with lifecycle
// flags; extra adds fields to "faults" or the top level.
func lcConfig(faults, extra string, waitArgs ...string) string {
	if extra != "" {
		extra = "," + extra
	}
	return ftConfig(ftNode("client", "./wait", waitArgs...), `"faults":{"crash_per_sec":5,"restart_delay":"50ms"`+faults+`}`+extra,
		ftServer("server"))
}

func faultTimes(r *engine.Result) []time.Duration {
	var out []time.Duration
	for _, f := range r.Faults {
		out = append(out, time.Duration(f.AtNS))
	}
	return out
}

// With start_on setup_complete the generated faults start when the workload says its
// setup is complete (plus start_after), not at start_after. The control is the same
// workload without start_on: faults before the signal.
func TestSetupCompleteStartsFaults(t *testing.T) {
	const setup = time.Second
	args := []string{"-setup-at", "1s", "-for", "3s"}
	for _, tc := range []struct {
		name, faults string
		early        bool
	}{
		{"start_on setup_complete", `,"start_on":"setup_complete"`, false},
		{"control: start_on time", ``, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, ftSim(t, lcConfig(tc.faults, "", args...)), 3, nil)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			ftMust(t, r, "client#1", `^setup complete \{"ready":true\}$`)
			times := faultTimes(r)
			early := 0
			for _, at := range times {
				if at < setup {
					early++
				}
			}
			if len(times) == 0 || (early > 0) != tc.early {
				t.Fatalf("faults at %v; want some, and early ones %v\n%s", times, tc.early, ftDump(r))
			}
			if !tc.early {
				ftMust(t, r, "world", `^faults start \(start_on setup_complete\): \d+ planned$`)
			}
		})
	}
}

// A quiet period drops the faults due inside it and keeps those after; the control,
// without the call, has faults inside the same window.
func TestStopFaultsQuietPeriod(t *testing.T) {
	const from, to = time.Second, 2 * time.Second
	for _, tc := range []struct {
		name  string
		args  []string
		quiet bool
	}{
		{"stop faults for 1s", []string{"-stop-at", "1s", "-stop-for", "1s", "-for", "3s"}, true},
		{"control", []string{"-setup-at", "1s", "-for", "3s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, ftSim(t, lcConfig("", "", tc.args...)), 3, nil)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			var inside, after int
			for _, at := range faultTimes(r) {
				switch {
				case at >= from && at < to:
					inside++
				case at >= to:
					after++
				}
			}
			if tc.quiet {
				ftMust(t, r, "client#1", `^stop faults for 1s \(until 2\.\d+s\)$`)
				ftMust(t, r, "fault", `dropped: quiet period until 2\.\d+s$`)
				if inside != 0 || after == 0 {
					t.Fatalf("%d faults inside the quiet period, %d after it\n%s", inside, after, ftDump(r))
				}
				return
			}
			if inside == 0 {
				t.Fatalf("the control has no fault in [%s, %s)", from, to)
			}
		})
	}
}

// A workload that stops the faults for the rest of the run is held to liveness.quiet
// from the end of the last fault that did happen: when it then takes longer than that,
// the run fails as a liveness failure. The control keeps the faults going (they end
// after the workload does) and passes.
func TestStopFaultsLivenessQuiet(t *testing.T) {
	quiet := `"liveness":{"quiet":"2s"}`
	r := ftRun(t, ftSim(t, lcConfig("", quiet, "-stop-at", "1s", "-for", "8s")), 3, nil)
	if r.Verdict != engine.VerdictFail || r.Failure.Kind != engine.KindLiveness || !strings.Contains(r.Failure.Reason, "(liveness.quiet)") {
		t.Fatalf("want a liveness.quiet failure, got %s\n%s", r, ftDump(r))
	}
	ftMust(t, r, "client#1", `^stop faults for the rest of the run$`)
	r = ftRun(t, ftSim(t, lcConfig("", quiet, "-setup-at", "1s", "-for", "8s")), 3, nil)
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("control: %s\n%s", r, ftDump(r))
	}
}
