package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
