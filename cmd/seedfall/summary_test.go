package main

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
)

// TestSweepVerdictAgreesWithExit: the summary line states one verdict, the exit code's:
// a sweep whose seeds all passed but whose Reachable property was never reached ends
// with FAIL, never with "ok … passed".
func TestSweepVerdictAgreesWithExit(t *testing.T) {
	failing := []cli.SignatureGroup{{Signature: "sig-1", Seeds: []uint64{4}, First: &engine.Result{Seed: 4, Verdict: engine.VerdictFail, Failure: &engine.Failure{Reason: "lost k1"}}}}
	for _, tc := range []struct {
		name string
		s    cli.SweepSummary
		code int
		last string
	}{
		{"all pass", cli.SweepSummary{Seeds: 20, Passed: 20}, exitPass, "ok 20 seeds passed (0 hit the time horizon)"},
		{"property never reached", cli.SweepSummary{Seeds: 20, Passed: 20, PropFails: []string{`reachable "recovered a torn tail" was never reached`}}, exitFail,
			"FAIL 1 property failed, although every seed passed (0 hit the time horizon)"},
		{"seeds and a property", cli.SweepSummary{Seeds: 20, Passed: 19, Failed: 1, Signatures: failing, PropFails: []string{"x"}}, exitFail,
			"FAIL 1 of 20 seeds failed (1 distinct failure); 1 property failed; 19 passed (0 hit the time horizon)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			code := printSweep(&b, tc.s, "seedfall.json")
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if got := lines[len(lines)-1]; got != tc.last || code != tc.code {
				t.Errorf("exit %d, last line %q; want %d, %q\n%s", code, got, tc.code, tc.last, b.String())
			}
		})
	}
}

// TestSweepCountsFailStopRestarts: the restarts of fail-stop nodes are summed over the
// sweep's results and printed before the verdict; a sweep without any prints nothing.
func TestSweepCountsFailStopRestarts(t *testing.T) {
	results := []*engine.Result{
		{Seed: 1, Verdict: engine.VerdictPass, Stats: engine.RunStats{FailStopRestarts: 3}},
		{Seed: 2, Verdict: engine.VerdictPass},
		{Seed: 3, Verdict: engine.VerdictPass, Stats: engine.RunStats{FailStopRestarts: 1}},
	}
	s := cli.Summarize("seedfall.json", results)
	if s.FailStopRestarts != 4 || s.FailStopSeeds != 2 {
		t.Fatalf("summary counts %d restarts in %d seeds, want 4 in 2", s.FailStopRestarts, s.FailStopSeeds)
	}
	var b strings.Builder
	printSweep(&b, s, "seedfall.json")
	want := "fail-stop: 4 restarts of nodes that exited on their own (on_exit restart), in 2 seeds\nok 3 seeds passed (0 hit the time horizon)\n"
	if b.String() != want {
		t.Fatalf("printed %q, want %q", b.String(), want)
	}
	b.Reset()
	printSweep(&b, cli.Summarize("seedfall.json", results[1:2]), "seedfall.json")
	if strings.Contains(b.String(), "fail-stop") {
		t.Fatalf("a sweep without fail-stop restarts printed %q", b.String())
	}
}
