package ci

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/githubtest"
)

// searchFinding is a crash-state search's finding whose failure has reason (kind
// "always" unless the reason says the node crashed).
func searchFinding(reason string) CrashFinding {
	kind := engine.FailureKind("always")
	if strings.Contains(reason, "crashed") {
		kind = "node-exit"
	}
	crash := engine.Fault{AtNS: 7_000_000, Kind: engine.FaultCrash, Node: "server", DiskOp: 9, Incarnation: 1, RestartNS: 250e6,
		Where: "write /data/log @0+600 at store/log.go:88", CrashState: []int{1}}
	recheck := engine.Fault{AtNS: 1_257_000_000, Kind: engine.FaultCrash, Node: "server", RestartNS: 250e6, CrashState: []int{0}}
	r := engine.Result{Seed: 1, Verdict: engine.VerdictFail, Faults: []engine.Fault{crash, recheck},
		Failure: &engine.Failure{Kind: kind, Reason: reason, Node: "client#1", AtNS: 2e9},
		Trace:   []string{"7ms fault crash server#1 during disk op #9 write /data/log @0+600 at store/log.go:88"}}
	r.Failure.Signature = engine.Signature(&r)
	return CrashFinding{Site: "store/log.go:88", Failing: 3, States: 12, Where: "disk op #9 of server#1, state in flight torn at 1/1",
		Result: r, Plan: r.Faults}
}

// TestCrashSearchInCI: the crash-state search runs on every event (push and pull request
// with the budget, scheduled runs in full); its findings are signatures like the sweep's,
// labelled new, known and fixed against the baseline; a signature found by both is one
// group; a search under a budget that no longer finds a signature does not mark it
// fixed, a full one does.
func TestCrashSearchInCI(t *testing.T) {
	gh := githubtest.New(t)
	gh.SetBranch("seedfall-baseline", nil)
	in := testInputs(t, "branch:seedfall-baseline")
	torn := searchFinding("server#1 crashed: exit_code(2): panic: torn record at offset 600")
	sig := torn.Result.Failure.Signature
	entry := func(step string) *Entry { t.Helper(); return baselineEntry(t, gh, DefaultBaselinePath, sig, step) }
	push := func(i int, eng *fakeEngine) *ghRun {
		return runGH(t, gh, "push", pushEvent("refs/heads/main", fmt.Sprintf("%040d", i)), int64(400+i), in, eng)
	}

	// A push: the sweep passes, the search (budget 200, not complete) finds a torn record.
	eng := &fakeEngine{searches: map[uint64]*CrashSearch{1: {States: 900, Ran: 200, Findings: []CrashFinding{torn}}}}
	r := push(1, eng)
	wantOutputs(t, "search finds", r.outputs, "1", "0", "0", "failure")
	if r.code != ExitFailure || !slices.Equal(eng.crashed, []uint64{1}) || !slices.Equal(eng.crashBudgets, []int{200}) {
		t.Fatalf("push: exit %d, searches %v with budgets %v\n%s", r.code, eng.crashed, eng.crashBudgets, r.stdout.String())
	}
	out := r.stdout.String()
	for _, want := range []string{
		"seedfall ci: up to 200 crash states of seed 1",
		"seedfall ci: seed 1: 200 of 900 crash states ran, 1 distinct failures",
		"::error title=seedfall new failure::" + sig + ": server#1 crashed: exit_code(2): panic: torn record at offset 600 (crash-state search of seed 1: a crash in disk op #9 of server#1, state in flight torn at 1/1 (store/log.go:88); 3 of the 12 states run there fail)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	md, err := os.ReadFile(filepath.Join(r.dir, "out", ReportMarkdown))
	must(t, err)
	for _, want := range []string{
		"crash-state search of seed 1: 200 of 900 states (budget), 1 distinct failure",
		"### NEW `" + sig + "` · crash-state search",
		"found by the crash-state search of seed 1: a crash in disk op #9 of server#1",
		"seedfall replay -c seedfall.json -seed 1 -faults " + filepath.Join(r.dir, "out", "faults", sig+".json"),
		"the crash-state search's plan (2 faults)",
	} {
		if !strings.Contains(strings.ReplaceAll(string(md), "\\", ""), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	plan, err := os.ReadFile(filepath.Join(r.dir, "out", "faults", sig+".json"))
	if err != nil || !strings.Contains(string(plan), `"crash_state": [`) {
		t.Errorf("the search's plan is not saved with the report: %v\n%s", err, plan)
	}
	if e := entry("recorded"); !slices.Equal(e.SearchSeeds, []uint64{1}) || len(e.Seeds) != 0 || len(e.Shrunk) != 2 || e.Status != StatusFailing {
		t.Fatalf("baseline entry %+v: want the search seed 1, no sweep seed, the plan", e)
	}

	// The next push finds it again: known, the step passes (fail-on new).
	r = push(2, eng)
	wantOutputs(t, "search finds again", r.outputs, "0", "1", "0", "success")

	// A push whose budgeted search does not find it: no evidence of a fix.
	r = push(3, &fakeEngine{searches: map[uint64]*CrashSearch{1: {States: 900, Ran: 200}}})
	wantOutputs(t, "budget misses", r.outputs, "0", "0", "0", "success")
	if e := entry("budget misses"); e.Status != StatusFailing {
		t.Errorf("a budgeted search marked it %s", e.Status)
	}

	// The weekly schedule searches every state (budget 0) and finds nothing: fixed.
	sched := &fakeEngine{}
	r = runGH(t, gh, "schedule", map[string]any{"repository": map[string]any{"full_name": "acme/store", "default_branch": "main"}}, 410, in, sched)
	wantOutputs(t, "complete search", r.outputs, "0", "0", "1", "success")
	if !slices.Equal(sched.crashBudgets, []int{0}) {
		t.Errorf("schedule searched with budgets %v, want [0]", sched.crashBudgets)
	}
	if e := entry("complete search"); e.Status != StatusFixed {
		t.Errorf("after a complete search without it: %s", e.Status)
	}

	// One bug, one signature: a pull request whose sweep loses a write that the search
	// loses too is one group, with its seeds and the search's line.
	lost := searchFinding("client#1: acknowledged write lost: k40=v7, server now answers NONE")
	both := &fakeEngine{bug: true, searches: map[uint64]*CrashSearch{1: {States: 40, Ran: 40, Complete: true, Findings: []CrashFinding{lost}}}}
	if lost.Result.Failure.Signature != both.result(3).Failure.Signature {
		t.Fatalf("the test's two losses have different signatures")
	}
	r = runGH(t, gh, "pull_request", prEvent(7, "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1", "acme/store"), 411, in, both)
	wantOutputs(t, "both", r.outputs, "1", "0", "0", "failure")
	md, err = os.ReadFile(filepath.Join(r.dir, "out", ReportMarkdown))
	must(t, err)
	if plain := strings.ReplaceAll(string(md), "\\", ""); !strings.Contains(plain, "seeds 3, 10, 17") || !strings.Contains(plain, "found by the crash-state search of seed 1") || strings.Count(plain, "### NEW") != 1 {
		t.Errorf("want one new group with the seeds and the search:\n%s", md)
	}

	// A config without power losses: the engine skips the search, and the run says so.
	skip := &fakeEngine{searches: map[uint64]*CrashSearch{1: {Skipped: "the config injects no power loss"}}}
	r = push(8, skip)
	if !strings.Contains(r.stdout.String(), "seedfall ci: no crash-state search: the config injects no power loss") || strings.Contains(r.summary, "crash-state search of") {
		t.Errorf("skipped search:\n%s\nsummary:\n%s", r.stdout.String(), r.summary)
	}

	// No crash-seeds: no search; a shard other than the first: no search.
	none := &fakeEngine{}
	in2 := in
	in2.CrashSeeds = ""
	push(5, none)
	runGH(t, gh, "push", pushEvent("refs/heads/main", fmt.Sprintf("%040d", 6)), 406, in2, none)
	in2.CrashSeeds, in2.Shard = "1", shard{2, 2}
	runGH(t, gh, "push", pushEvent("refs/heads/main", fmt.Sprintf("%040d", 7)), 407, in2, none)
	if !slices.Equal(none.crashed, []uint64{1}) {
		t.Errorf("searches %v: want only the first push's", none.crashed)
	}
}

// TestBaselineKeysSeedsByPlacement: seeds drawn with one crash placement are other runs
// under another, so a baseline written before seedfall recorded placements (every
// mid-op crash in the next op) is not marked fixed by seeds that pass under "spread";
// when the signature fails again its seeds are re-recorded with the placement, and then
// passing seeds mark it fixed.
func TestBaselineKeysSeedsByPlacement(t *testing.T) {
	gh := githubtest.New(t)
	gh.SetBranch("seedfall-baseline", nil)
	in := testInputs(t, "branch:seedfall-baseline")
	in.CrashSeeds = ""
	sig := buggySig(t)
	entry := func() *Entry {
		t.Helper()
		raw, _ := gh.File("seedfall-baseline", DefaultBaselinePath)
		b, err := ParseBaseline("fake", raw)
		must(t, err)
		return b.Signatures[sig]
	}
	push := func(i int, eng *fakeEngine) *ghRun {
		return runGH(t, gh, "push", pushEvent("refs/heads/main", fmt.Sprintf("%040d", i)), int64(500+i), in, eng)
	}
	push(1, &fakeEngine{bug: true, goVersion: "go1.26.8"}) // recorded without a placement
	if e := entry(); e.Placement != "" || e.Status != StatusFailing {
		t.Fatalf("old draw: %+v", e)
	}
	r := push(2, &fakeEngine{goVersion: "go1.26.8", placement: engine.PlacementSpread})
	wantOutputs(t, "spread, passing", r.outputs, "0", "0", "0", "success")
	if want := sig + " did not fail, but its seeds were drawn with crash placement none recorded"; !strings.Contains(r.stdout.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, r.stdout.String())
	}
	push(3, &fakeEngine{bug: true, goVersion: "go1.26.8", placement: engine.PlacementSpread})
	if e := entry(); e.Placement != engine.PlacementSpread || e.Status != StatusFailing {
		t.Fatalf("spread, failing: %+v", e)
	}
	r = push(4, &fakeEngine{goVersion: "go1.26.8", placement: engine.PlacementSpread})
	wantOutputs(t, "spread, fixed", r.outputs, "0", "0", "1", "success")
}
