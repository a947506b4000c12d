package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

type mutateOut struct {
	Mutants []struct {
		Name, Kind, Site, Reason, Replay string
		Killed                           bool
		Seed                             uint64
		NotApplicable                    string `json:"not_applicable"`
	}
	Killed, Total int
	Score         string
}

func mutate(t *testing.T, cfg string) (int, mutateOut, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, "mutate", "-c", cfg, "-seeds", "1-40", "-json")
	var out mutateOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("mutate -json: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return code, out, stderr
}

// TestMutateKillsKvlogMutants is issue 6's acceptance 1: on fixed kvlog every
// applicable OS operator and every fsync call site is killed, with a replayable seed.
func TestMutateKillsKvlogMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("several sweeps")
	}
	code, out, stderr := mutate(t, kvlogFixed)
	if code != exitPass || out.Killed != out.Total || out.Total < 3 {
		t.Fatalf("exit %d, score %s (want every applicable mutant killed)\n%+v\n%s", code, out.Score, out.Mutants, stderr)
	}
	sites := 0
	for _, m := range out.Mutants {
		if m.NotApplicable != "" {
			continue
		}
		if !m.Killed || m.Seed == 0 || !strings.Contains(m.Replay, "-mutation") {
			t.Errorf("mutant %s: killed=%v seed=%d replay=%q", m.Name, m.Killed, m.Seed, m.Replay)
		}
		if m.Kind == "call-site" {
			sites++
			if !strings.Contains(m.Site, "kvstore.go:") {
				t.Errorf("call site %q does not name kvstore.go:LINE", m.Site)
			}
		}
	}
	if sites == 0 {
		t.Fatal("no call-site mutants: kvlog's fsync call sites were not found")
	}
}

// TestMutateWeakWorkload is issue 6's acceptance 2: a workload that writes but never
// reads back lets fsync-noop survive, and the report says the checks are blind.
func TestMutateWeakWorkload(t *testing.T) {
	weak := filepath.Join("..", "..", "examples", "kvlog", "seedfall.weak.json")
	code, out, _ := mutate(t, weak)
	if code != exitFail {
		t.Fatalf("exit %d, want %d (a surviving mutant)", code, exitFail)
	}
	found := false
	for _, m := range out.Mutants {
		if m.Name == "fsync-noop" {
			found = true
			if m.Killed {
				t.Fatalf("fsync-noop killed on seed %d by a workload that never reads back: %s", m.Seed, m.Reason)
			}
		}
	}
	if !found {
		t.Fatal("no fsync-noop mutant in the report")
	}
	// The text report names the blindness.
	_, text, _ := runCLI(t, "mutate", "-c", weak, "-seeds", "1-10", "-ops", "fsync-noop")
	if !strings.Contains(text, "SURVIVED  fsync-noop") || !strings.Contains(text, "the checks cannot see this durability bug") {
		t.Fatalf("text report does not say fsync-noop survived:\n%s", text)
	}
}

// TestMutantOutcome: only a failure of the checks kills a mutant. A seed stopped by the
// watchdog, a worker that died or a tool error leaves the mutant "unknown" with the
// reason, whatever seed order the results arrive in.
func TestMutantOutcome(t *testing.T) {
	res := func(seed uint64, v engine.Verdict, reason string) *engine.Result {
		r := &engine.Result{Seed: seed, Verdict: v}
		if v == engine.VerdictError {
			r.Error = reason
		} else if reason != "" {
			r.Failure = &engine.Failure{Reason: reason}
		}
		return r
	}
	replay := func(seed uint64) string { return "replay " + jsonNum(seed) }
	for _, tc := range []struct {
		name    string
		results []*engine.Result
		outcome string
		seed    uint64
		reason  string
	}{
		{"all pass", []*engine.Result{res(1, engine.VerdictPass, ""), res(2, engine.VerdictHorizon, "")}, "survived", 0, ""},
		{"check fails", []*engine.Result{res(3, engine.VerdictFail, "acknowledged write lost"), res(1, engine.VerdictPass, "")}, "killed", 3, "acknowledged write lost"},
		{"watchdog only", []*engine.Result{res(1, engine.VerdictPass, ""), res(2, engine.VerdictWatchdog, "ran for more than the wall-clock budget")}, "unknown", 2, "watchdog"},
		{"worker died", []*engine.Result{res(4, engine.VerdictError, "worker process failed: EOF")}, "unknown", 4, "worker process failed"},
		{"fail beats watchdog", []*engine.Result{res(2, engine.VerdictWatchdog, "spin"), res(5, engine.VerdictFail, "lost"), res(3, engine.VerdictFail, "lost k1")}, "killed", 3, "lost k1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kill, unjudged := judge(tc.results)
			var mr mutantResult
			mutantOutcome(&mr, kill, unjudged, replay)
			if mr.Outcome != tc.outcome || mr.Seed != tc.seed || mr.Killed != (tc.outcome == "killed") || !strings.Contains(mr.Reason, tc.reason) {
				t.Errorf("got %+v, want outcome %s seed %d reason ~%q", mr, tc.outcome, tc.seed, tc.reason)
			}
			if tc.seed != 0 && mr.Replay != replay(tc.seed) {
				t.Errorf("replay %q", mr.Replay)
			}
		})
	}
}
