package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// firstBuggyFailure returns the lowest failing seed of kvlog's buggy config in 1-60,
// from the shared buggy sweep (cli_test.go), so that the tests below do not each sweep.
func firstBuggyFailure(t *testing.T) uint64 {
	t.Helper()
	sweepBuggy(t)
	for _, r := range buggySweep.results {
		if seed := uint64(r["seed"].(float64)); r["verdict"] == "fail" && seed <= 60 {
			return seed
		}
	}
	t.Fatalf("buggy kvlog seeds 1-60: no failure\n%s", buggySweep.stdout)
	return 0
}

// buggyShrink is `shrink -json` of the first buggy failure, shared by the shrink and
// cause tests.
var buggyShrink struct {
	once           sync.Once
	seed           uint64
	plan           string
	code           int
	stdout, stderr string
	workers        int // worker processes the shrink started
}

func shrinkBuggy(t *testing.T) {
	t.Helper()
	seed := firstBuggyFailure(t)
	buggyShrink.once.Do(func() {
		dir, err := os.MkdirTemp("", "seedfall-shrink-test-")
		if err != nil {
			t.Fatal(err)
		}
		buggyShrink.seed, buggyShrink.plan = seed, filepath.Join(dir, "plan.json")
		workers := workerLog(t)
		buggyShrink.code, buggyShrink.stdout, buggyShrink.stderr = runCLI(t, "shrink", "-c", kvlogBuggy, "-seed", itoa(seed), "-o", buggyShrink.plan, "-json")
		buggyShrink.workers = workers()
	})
	if buggyShrink.code != exitFail {
		t.Fatalf("shrink: exit %d\n%s\n%s", buggyShrink.code, buggyShrink.stdout, buggyShrink.stderr)
	}
}

// TestShrinkReplaysInAnotherProcess is issue 5's acceptance 1: a failing kvlog seed
// shrinks to the faults that matter, and the saved plan replays to the same failure in
// a separate process. Shrink's runs happen in worker processes, and the saved plan
// states no stale arming time (armed_ns) from the unshrunk run.
func TestShrinkReplaysInAnotherProcess(t *testing.T) {
	shrinkBuggy(t)
	seed, plan, stdout := buggyShrink.seed, buggyShrink.plan, buggyShrink.stdout
	if buggyShrink.workers == 0 {
		t.Errorf("shrink started no worker process: its runs happened in the command's own")
	}
	var shrunk engine.FaultPlan
	if data, err := os.ReadFile(plan); err != nil || json.Unmarshal(data, &shrunk) != nil {
		t.Fatalf("read the saved plan: %v", err)
	}
	for _, f := range shrunk.Faults {
		if f.ArmedNS != 0 {
			t.Errorf("saved plan keeps armed_ns %d from the unshrunk run: %+v", f.ArmedNS, f)
		}
	}
	var sh struct {
		FaultsBefore  int  `json:"faults_before"`
		MinimalFaults int  `json:"minimal_faults"`
		ReplaysExact  bool `json:"replays_exactly"`
		Failure       struct {
			Reason              string   `json:"reason"`
			FaultsBeforeFailure []string `json:"faults_before_failure"`
		} `json:"failure"`
	}
	if err := json.Unmarshal([]byte(stdout), &sh); err != nil {
		t.Fatalf("shrink -json: %v\n%s", err, stdout)
	}
	t.Logf("seed %d: %d -> %d faults", seed, sh.FaultsBefore, sh.MinimalFaults)
	if sh.MinimalFaults < 1 || sh.MinimalFaults > sh.FaultsBefore || !sh.ReplaysExact {
		t.Fatalf("shrink result %+v", sh)
	}
	if !strings.Contains(sh.Failure.Reason, "acknowledged write lost") || len(sh.Failure.FaultsBeforeFailure) != sh.MinimalFaults {
		t.Fatalf("shrink failure %+v", sh.Failure)
	}
	// The plan names its config relative to itself (issue 35 point 5), never absolute.
	var saved engine.FaultPlan
	if data, err := os.ReadFile(plan); err != nil || json.Unmarshal(data, &saved) != nil || saved.Provenance == nil {
		t.Fatalf("read the saved plan: %v", err)
	}
	wantCfg, _ := filepath.Abs(kvlogBuggy)
	if c := saved.Provenance.Config; filepath.IsAbs(c) || filepath.Join(filepath.Dir(plan), filepath.FromSlash(c)) != wantCfg {
		t.Errorf("plan records config %q, want %s relative to the plan's folder", c, wantCfg)
	}
	// Replay the saved plan in a separate process.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "replay", "-c", kvlogBuggy, "-seed", itoa(seed), "-faults", plan, "-json")
	cmd.Env = append(os.Environ(), "SEEDFALL_AS_CLI=1")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFail {
		t.Fatalf("replay in another process: %v\n%s", err, out)
	}
	var r engine.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if r.Failure == nil || r.Failure.Reason != sh.Failure.Reason || len(r.Faults) != sh.MinimalFaults {
		t.Fatalf("replayed %v with %d faults, want %q with %d", r.Failure, len(r.Faults), sh.Failure.Reason, sh.MinimalFaults)
	}
}

// TestCauseNamesTheCrashMidWrite is issue 5's acceptance 2: cause on a shrunk kvlog
// failure puts the biggest jump at the crash during the write, while a bystander
// partition added early leaves the curve flat. The default run checks the text output
// on 4 moments of 8 futures; with SEEDFALL_LONG set the -json curve (8 of 16) is checked.
func TestCauseNamesTheCrashMidWrite(t *testing.T) {
	shrinkBuggy(t)
	seed, plan := buggyShrink.seed, buggyShrink.plan
	dir := t.TempDir()
	var p engine.FaultPlan
	data, _ := os.ReadFile(plan)
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	midOp := false
	for _, f := range p.Faults {
		midOp = midOp || f.DiskOp > 0
	}
	if !midOp {
		t.Skipf("seed %d's minimal plan has no crash during a disk op: %+v", seed, p.Faults)
	}
	// A bystander: a short partition early on, before any crash.
	first := p.Faults[0].AtNS
	if a := p.Faults[0].ArmedNS; a > 0 && a < first {
		first = a
	}
	by := engine.Fault{AtNS: first / 3, Kind: engine.FaultPartition, Node: "client", Peers: []string{"server"}, DurationNS: first / 6}
	p.Faults = append([]engine.Fault{by}, p.Faults...)
	data, _ = json.Marshal(p)
	withBystander := filepath.Join(dir, "bystander.json")
	if err := os.WriteFile(withBystander, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The default run checks the text output on a small grid (below); the -json curve
	// with the bystander, 128 futures, is a long test.
	if os.Getenv("SEEDFALL_LONG") != "" {
		causeCurve(t, seed, withBystander)
	}
	// The text output names the biggest jump; cause's runs happen in worker processes.
	workers := workerLog(t)
	_, text, _ := runCLI(t, "cause", "-c", kvlogBuggy, "-seed", itoa(seed), "-faults", withBystander, "-moments", "4", "-futures", "8")
	if !strings.Contains(text, "biggest jump:") || !strings.Contains(text, "<- crash server during disk op") {
		t.Fatalf("cause text:\n%s", text)
	}
	if workers() == 0 {
		t.Errorf("cause started no worker process: its runs happened in the command's own")
	}
}

// causeCurve checks cause's -json curve on 8 moments of 16 futures: the biggest jump is
// at the crash during the write, and the bystander partition leaves the curve flat.
func causeCurve(t *testing.T, seed uint64, withBystander string) {
	code, stdout, stderr := runCLI(t, "cause", "-c", kvlogBuggy, "-seed", itoa(seed), "-faults", withBystander, "-moments", "8", "-futures", "16", "-json")
	if code != exitFail {
		t.Fatalf("cause: exit %d, want %d like replay and shrink of a failing seed\n%s", code, exitFail, stderr)
	}
	var res struct {
		Moments []struct {
			AtNS  int64   `json:"at_ns"`
			Fault string  `json:"fault"`
			Runs  int     `json:"runs"`
			P     float64 `json:"p_fail"`
		} `json:"moments"`
		Jump struct {
			Faults  []string `json:"faults"`
			Summary string   `json:"summary"`
		} `json:"biggest_jump"`
		Futures int      `json:"futures"`
		Bars    []string `json:"bars"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("cause -json: %v\n%s", err, stdout)
	}
	t.Logf("%s\n%s", strings.Join(res.Bars, "\n"), res.Jump.Summary)
	if res.Futures != len(res.Moments)*16 || len(res.Bars) != len(res.Moments) {
		t.Fatalf("%d futures over %d moments, %d bars", res.Futures, len(res.Moments), len(res.Bars))
	}
	if len(res.Jump.Faults) == 0 || !regexp.MustCompile(`during disk op #\d+`).MatchString(res.Jump.Faults[0]) {
		t.Fatalf("biggest jump %q is not at the crash during the write", res.Jump.Summary)
	}
	for i, m := range res.Moments {
		if strings.HasPrefix(m.Fault, "partition") && i > 0 {
			if d := m.P - res.Moments[i-1].P; d > 0.25 || d < -0.25 {
				t.Fatalf("the bystander partition moved P(fail) by %.0f points", d*100)
			}
		}
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
