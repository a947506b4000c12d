package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// TestCrashesKvlog runs `seedfall crashes` on the first ops of kvlog's seed 1 in worker
// processes: the buggy recovery is found at the fsync of an append (a torn record
// written past), its replay command reproduces the failure, and the fixed config has
// no vulnerable site over the same ops.
func TestCrashesKvlog(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "crashes", "-c", kvlogBuggy, "-seed", "1", "-ops", "1-12", "-workers", "2", "-out", out)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFail, stdout, stderr)
	}
	for _, want := range []string{"bound: per disk op, at most 8 distinct durable images", "VULNERABLE kvlog/kvstore/kvstore.go:179: ", " states not run: equivalent to a state of an earlier op", "  replay: seedfall replay -c " + kvlogBuggy + " -seed 1 -faults "} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "ETA") {
		t.Errorf("no progress with an ETA on stderr:\n%s", stderr)
	}
	var replay, reason string
	for _, l := range strings.Split(stdout, "\n") {
		if r, ok := strings.CutPrefix(l, "  replay: seedfall "); ok && replay == "" {
			replay = r
		}
		if _, r, ok := strings.Cut(l, "  first: crash at disk op #"); ok && reason == "" {
			_, reason, _ = strings.Cut(r, ": ")
		}
	}
	code, rout, rerr := runCLI(t, strings.Fields(replay+" -q")...)
	if code != exitFail || !strings.Contains(rout, reason) {
		t.Fatalf("%s: exit %d, want the failure %q\n%s\n%s", replay, code, reason, rout, rerr)
	}

	code, stdout, stderr = runCLI(t, "crashes", "-c", kvlogFixed, "-seed", "1", "-ops", "1-8", "-workers", "2", "-out", t.TempDir(), "-json")
	var rep struct {
		Ops, States, Failing, Equivalent int
		Sites                            []struct{ Site string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-json: %v\n%s\n%s", err, stdout, stderr)
	}
	if code != exitPass || rep.Failing != 0 || rep.States < 8 || rep.Ops < 8 || rep.Equivalent == 0 {
		t.Fatalf("fixed: exit %d, %+v\n%s", code, rep, stderr)
	}
	// -per-op runs the equivalent states too: the same search, none left out.
	perOp := rep
	code, stdout, stderr = runCLI(t, "crashes", "-c", kvlogFixed, "-seed", "1", "-ops", "1-8", "-workers", "2", "-out", t.TempDir(), "-json", "-per-op")
	if err := json.Unmarshal([]byte(stdout), &perOp); err != nil {
		t.Fatalf("-per-op -json: %v\n%s\n%s", err, stdout, stderr)
	}
	if code != exitPass || perOp.Equivalent != 0 || perOp.States != rep.States+rep.Equivalent || perOp.Ops != rep.Ops {
		t.Fatalf("-per-op: exit %d, %+v; by default %+v: want the default's states and its equivalent ones", code, perOp, rep)
	}
}

func TestCrashesUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"empty range", []string{"-ops", "9-2"}, `-ops "9-2": the range is empty (9 > 2)`},
		{"bad range", []string{"-ops", "x"}, `-ops "x": want A-B with disk op numbers from 1`},
		{"no states", []string{"-max-states", "0"}, "-max-states must be at least 1"},
		{"negative budget", []string{"-budget", "-1"}, "-budget must not be negative (0: no budget)"},
		{"unknown node", []string{"-node", "nope"}, `crashes: no node "nope" in the config`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"crashes", "-c", kvlogFixed, "-out", t.TempDir()}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q, want %q", code, stderr, tc.want)
			}
		})
	}
}

// TestExploreCrashesStage: explore's -crashes stage runs the crash states of its first
// corpus run, reports them in its JSON summary and fails on a vulnerable site.
func TestExploreCrashesStage(t *testing.T) {
	if os.Getenv("SEEDFALL_LONG") == "" {
		t.Skip("an exploration and a crash-state search (about a minute on 2 cores); SEEDFALL_LONG=1 runs it")
	}
	code, stdout, stderr := runCLI(t, "explore", "-c", kvlogBuggy, "-runs", "4", "-crashes", "1", "-workers", "2", "-plans", t.TempDir(), "-json", "-q")
	var sum struct {
		Crashes []struct {
			Seed            uint64
			States, Failing int
		}
		CrashFailing int `json:"crash_failing"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("-json: %v\n%s\n%s", err, stdout, stderr)
	}
	if code != exitFail || len(sum.Crashes) != 1 || sum.Crashes[0].States == 0 || sum.CrashFailing == 0 || sum.CrashFailing != sum.Crashes[0].Failing {
		t.Fatalf("exit %d, %+v\n%s", code, sum, stderr)
	}
}

// TestCrashesWithoutOwnFaults: kvlog's seed 2 fails on its own faults after a few dozen
// disk ops, so its probe never reaches the server's later ops; with -own-faults=false
// the probe runs the workload with no fault of the seed and reaches them, finds the
// torn-tail bug there, and the plan of a failing state (the pinned crash and the
// recheck, nothing of the seed's own) replays to the same failure.
func TestCrashesWithoutOwnFaults(t *testing.T) {
	ops := []string{"crashes", "-c", kvlogBuggy, "-seed", "2", "-ops", "90-93", "-workers", "2", "-json"}
	var rep struct {
		Ops, States, Failing int
		NoOwnFaults          bool `json:"no_own_faults"`
		Baseline             string
		Sites                []struct{ Site, Plan, Reason string }
	}
	// Default: the seed's own faults, under which no incarnation reaches op 90.
	code, stdout, stderr := runCLI(t, append(ops, "-out", t.TempDir())...)
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-json: %v\n%s\n%s", err, stdout, stderr)
	}
	if code != exitPass || rep.Ops != 0 || rep.NoOwnFaults || rep.Baseline != "fail" {
		t.Fatalf("with own faults: exit %d, %+v: want no op reached and the seed's own failure\n%s", code, rep, stderr)
	}

	code, stdout, stderr = runCLI(t, append(ops, "-out", t.TempDir(), "-own-faults=false")...)
	rep.Sites = nil
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-json: %v\n%s\n%s", err, stdout, stderr)
	}
	if code != exitFail || rep.Ops < 4 || rep.Failing == 0 || !rep.NoOwnFaults || rep.Baseline != "pass" {
		t.Fatalf("without own faults: exit %d, %+v\n%s", code, rep, stderr)
	}
	var site = rep.Sites[0]
	plan, err := cli.LoadPlan(site.Plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Faults) != 2 || plan.Faults[0].DiskOp < 90 || plan.Faults[0].CrashState == nil || plan.Faults[1].DiskOp != 0 {
		t.Fatalf("plan %s: want the pinned crash and the recheck alone, got %+v", site.Plan, plan.Faults)
	}
	code, rout, rerr := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "2", "-faults", site.Plan, "-q")
	if code != exitFail || !strings.Contains(rout, site.Reason) {
		t.Fatalf("replay %s: exit %d, want the failure %q\n%s\n%s", site.Plan, code, site.Reason, rout, rerr)
	}
	// The probe cannot take a plan and run without own faults at once.
	if _, _, err := engineapi.CrashPoints(context.Background(), nil, 2, engineapi.CrashStatesOptions{NoOwnFaults: true, Plan: &engine.FaultPlan{}}); err == nil {
		t.Error("a plan with NoOwnFaults: no error")
	}
}

// TestCrashesBudget: with -budget the search runs that many of its distinct states,
// every call site's first states before any site's later ones: on kvlog's seed 1 a
// budget of 12 reaches every site the full search of the same ops reaches, still finds
// the torn-tail bug, and says how many states it left out.
func TestCrashesBudget(t *testing.T) {
	type report struct {
		States, Ran, Failing, Budget int
		OverBudget                   int `json:"over_budget"`
		Sites                        []struct {
			Site            string
			States, Failing int
		}
	}
	args := []string{"crashes", "-c", kvlogBuggy, "-seed", "1", "-own-faults=false", "-ops", "1-40", "-workers", "2", "-json"}
	search := func(extra ...string) (int, report, string) {
		var rep report
		code, stdout, stderr := runCLI(t, append(append(args, "-out", t.TempDir()), extra...)...)
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("-json: %v\n%s\n%s", err, stdout, stderr)
		}
		return code, rep, stderr
	}
	_, full, _ := search()
	code, part, stderr := search("-budget", "12")
	if code != exitFail || part.Ran != 12 || part.Budget != 12 || part.OverBudget != full.States-12 || part.States != full.States || part.Failing == 0 {
		t.Fatalf("budget 12: exit %d, %+v; the full search %+v\n%s", code, part, full, stderr)
	}
	if len(full.Sites) > 12 || len(part.Sites) != len(full.Sites) {
		t.Errorf("budget 12 reached %d sites, the full search %d: %+v", len(part.Sites), len(full.Sites), part.Sites)
	}
	if !strings.Contains(stderr, fmt.Sprintf("crashes: budget 12 states: %d left out", full.States-12)) {
		t.Errorf("stderr does not say what the budget left out:\n%s", stderr)
	}
}

// -faults probes the run of a given plan instead of the seed's own faults: its faults
// before each op stay in every state's plan, and that plan replays to the same failure.
// An empty plan is the same search as -own-faults=false. Bad input exits 2.
func TestCrashesOnAGivenPlan(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.faults.json")
	kill := filepath.Join(dir, "kill.faults.json")
	os.WriteFile(empty, []byte(`{"seed": 2, "faults": []}`), 0o644)
	os.WriteFile(kill, []byte(`{"seed": 2, "faults": [{"at_ns": 1000, "kind": "crash", "node": "server", "restart_after_ns": 1000000}]}`), 0o644)
	ops := []string{"crashes", "-c", kvlogBuggy, "-seed", "2", "-ops", "90-93", "-workers", "2", "-json"}
	type report struct {
		Ops, States, Failing int
		Baseline             string
		Sites                []struct{ Site, Plan, Reason string }
	}
	search := func(extra ...string) (int, report) {
		t.Helper()
		var rep report
		code, stdout, stderr := runCLI(t, append(append(ops, "-out", t.TempDir()), extra...)...)
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%v: -json: %v\n%s\n%s", extra, err, stdout, stderr)
		}
		return code, rep
	}
	codeNone, none := search("-own-faults=false")
	codeEmpty, withEmpty := search("-faults", empty)
	if codeEmpty != codeNone || withEmpty.Ops != none.Ops || withEmpty.States != none.States || withEmpty.Failing != none.Failing || withEmpty.Baseline != "pass" {
		t.Fatalf("an empty plan: exit %d, %+v; want the search of -own-faults=false: exit %d, %+v", codeEmpty, withEmpty, codeNone, none)
	}
	code, withKill := search("-faults", kill)
	if code != exitFail || withKill.Failing == 0 {
		t.Fatalf("the one-crash plan: exit %d, %+v: want failing states at ops 90-93 of the server's second life", code, withKill)
	}
	site := withKill.Sites[0]
	plan, err := cli.LoadPlan(site.Plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Faults) < 2 || plan.Faults[0].AtNS != 1000 || plan.Faults[0].DiskOp != 0 ||
		plan.Faults[1].Incarnation != 2 || plan.Faults[1].DiskOp < 90 || plan.Faults[1].CrashState == nil {
		t.Fatalf("plan %s: want the file's crash first, then the crash pinned in the life it began: %+v", site.Plan, plan.Faults)
	}
	code, rout, rerr := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "2", "-faults", site.Plan, "-q")
	if code != exitFail || !strings.Contains(rout, site.Reason) {
		t.Fatalf("replay %s: exit %d, want the failure %q\n%s\n%s", site.Plan, code, site.Reason, rout, rerr)
	}
	// Bad input: a missing file, a file that is not a plan, and both plan flags at once.
	bad := filepath.Join(dir, "bad.faults.json")
	os.WriteFile(bad, []byte(`{"faults": [{"kind": "nonsense"}]}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-faults", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"-faults", bad}, "bad.faults.json: faults[0]"},
		{[]string{"-faults", empty, "-own-faults=false"}, "exclude each other"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"crashes", "-c", kvlogBuggy, "-seed", "2"}, c.args...), "-out", t.TempDir())...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d and %q in:\n%s", c.args, code, exitUsage, c.want, stderr)
		}
	}
}

// The summary line says how many states ran: all the distinct ones, or under a
// -budget that left some out, that many of them (a new user read "341 distinct states
// run" above "budget: 40 of the 341 distinct states run").
func TestPrintCrashesSaysWhatRan(t *testing.T) {
	for _, c := range []struct {
		rep        cli.CrashesReport
		want, lack string
	}{
		{cli.CrashesReport{Seed: 1, Node: "db", Ops: 10, Candidates: 90, States: 34},
			"seed 1, node db: 10 disk ops, 90 candidate states, 34 distinct states run (0 ops at the bound)", "-budget"},
		{cli.CrashesReport{Seed: 1, Node: "db", Ops: 164, Candidates: 352, States: 341, Budget: 40, OverBudget: 301},
			"seed 1, node db: 164 disk ops, 352 candidate states, 341 distinct states, 40 of them run (-budget) (0 ops at the bound)", "candidate states, 341 distinct states run"},
	} {
		var b strings.Builder
		printCrashes(&b, &c.rep)
		if !strings.Contains(b.String(), c.want) || strings.Contains(b.String(), c.lack) {
			t.Errorf("want %q and no %q:\n%s", c.want, c.lack, b.String())
		}
	}
}
