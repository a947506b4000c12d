package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestGroupFailuresRule: fail and watchdog results are grouped by signature, a watchdog
// result without a Failure gets one named by its verdict, and error results are never
// grouped but listed apart by message. The input results are not changed.
func TestGroupFailuresRule(t *testing.T) {
	fail := func(seed uint64, sig string) *engine.Result {
		return &engine.Result{Seed: seed, Verdict: engine.VerdictFail, Failure: &engine.Failure{Kind: engine.KindAlways, Reason: "lost", Signature: sig}}
	}
	bare := &engine.Result{Seed: 3, Verdict: engine.VerdictWatchdog, EndNS: 7}
	results := []*engine.Result{
		fail(1, "aaaa"),
		{Seed: 2, Verdict: engine.VerdictError, Error: "worker process failed: EOF", Failure: &engine.Failure{Kind: engine.KindError, Reason: "worker process failed: EOF", Signature: "eeee"}},
		bare,
		fail(4, "aaaa"),
		{Seed: 5, Verdict: engine.VerdictPass},
		{Seed: 6, Verdict: engine.VerdictError, Error: "worker process failed: EOF"},
	}
	groups := GroupFailures(results)
	var got [][]uint64
	for _, g := range groups {
		got = append(got, g.Seeds)
		if len(g.Results) != len(g.Seeds) || g.First != g.Results[0] {
			t.Errorf("group %s: %d results for %d seeds, First not the first", g.Signature, len(g.Results), len(g.Seeds))
		}
	}
	if want := [][]uint64{{1, 4}, {3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("groups %v, want %v (an error result was grouped, or a failure lost)", got, want)
	}
	if w := groups[1]; w.Kind != string(engine.VerdictWatchdog) || w.Signature == "" || w.First.Failure == nil {
		t.Errorf("the bare watchdog result's group: kind %q, signature %q", w.Kind, w.Signature)
	}
	if bare.Failure != nil {
		t.Error("GroupFailures changed its input")
	}
	errs := GroupErrors(results)
	if want := []ErrorGroup{{Error: "worker process failed: EOF", Seeds: []uint64{2, 6}}}; !reflect.DeepEqual(errs, want) {
		t.Errorf("errors %+v, want %+v", errs, want)
	}
}

// TestReplayCommand: the one spelling of the replay command, flags appended in order,
// empty ones dropped.
func TestReplayCommand(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "seedfall replay -c a/seedfall.json -seed 9"},
		{[]string{"", " -faults p.json"}, "seedfall replay -c a/seedfall.json -seed 9 -faults p.json"},
		{[]string{"-mutation 'fsync-noop'", "-check"}, "seedfall replay -c a/seedfall.json -seed 9 -mutation 'fsync-noop' -check"},
	} {
		if got := ReplayCommand("a/seedfall.json", 9, tc.flags...); got != tc.want {
			t.Errorf("ReplayCommand(%q) = %q, want %q", tc.flags, got, tc.want)
		}
	}
}

// TestFaultLinesAlign: the lines are Fault.String's, right-aligned on their times.
func TestFaultLinesAlign(t *testing.T) {
	fs := []engine.Fault{
		{AtNS: 800e6, Kind: engine.FaultCrash, Node: "n1"},
		{AtNS: 12_500e6, Kind: engine.FaultPause, Node: "n2", DurationNS: 1e9},
		{AtNS: 1e9, Kind: engine.FaultKill, Node: "n3"},
	}
	want := []string{
		"800ms crash n1",
		"12.5s pause n2 for 1s",
		"   1s kill n3",
	}
	if got := FaultLines(fs); !reflect.DeepEqual(got, want) {
		t.Fatalf("FaultLines =\n%q\nwant\n%q", got, want)
	}
	for i, f := range fs {
		if got := FaultLines(fs)[i]; !strings.HasSuffix(got, f.String()) {
			t.Errorf("line %d %q does not end in Fault.String %q", i, got, f.String())
		}
	}
}
