// Tests of the raft example: they build the seedfall CLI from this repository and run
// it on the example's config, as a user would.
package raft_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// seedfall builds the CLI once per test process.
func seedfall(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "seedfall-raft-test-")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "seedfall")
		cmd := exec.Command("go", "build", "-o", cliPath, "./cmd/seedfall")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build ../../cmd/seedfall: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

// cli runs the seedfall CLI and returns its exit code and output.
func cli(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(seedfall(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String()
}

// TestSweep runs a small sweep of the config with random partitions. Five seeds may
// happen to see no leader change, which fails the sweep's Sometimes property alone; that
// is not a failure of the cluster.
func TestSweep(t *testing.T) {
	code, out := cli(t, "run", "-c", "seedfall.json", "-seeds", "1-5")
	sometimesOnly := code == 1 && strings.Count(out, "FAIL") == 1 &&
		strings.Contains(out, `FAIL property: sometimes "entries acknowledged by more than one leader"`)
	if code != 0 && !sometimesOnly || !strings.Contains(out, "5 seeds passed") || !strings.Contains(out, "linearizable (kv)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestCheck20 is the acceptance sweep: 20 seeds, each run twice with identical traces.
func TestCheck20(t *testing.T) {
	if testing.Short() {
		t.Skip("20 seeds, each run twice")
	}
	code, out := cli(t, "run", "-c", "seedfall.json", "-seeds", "1-20", "-check")
	if code != 0 || !strings.Contains(out, "20 seeds passed") || !strings.Contains(out, "traces identical") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	t.Log(lastLines(out, 8))
}

var traceLine = regexp.MustCompile(`^\s*(\S+) (n\d)#1 \| (became leader|lost leadership)$`)

type event struct {
	at   time.Duration
	node string
	what string
}

func leaderEvents(t *testing.T, out string) []event {
	var evs []event
	for _, l := range strings.Split(out, "\n") {
		if m := traceLine.FindStringSubmatch(l); m != nil {
			at, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, event{at, m[2], m[3]})
		}
	}
	return evs
}

func writePlan(t *testing.T, faults []map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"faults": faults})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLeaderPartition partitions the leader from everyone with a hand-written plan:
// another server is elected, the client follows it, and every acknowledged entry is
// still on a majority at the end. The plan replays exactly.
func TestLeaderPartition(t *testing.T) {
	// Without faults: who leads on seed 1?
	code, out := cli(t, "replay", "-c", "seedfall.json", "-seed", "1", "-faults", writePlan(t, []map[string]any{}))
	evs := leaderEvents(t, out)
	if code != 0 || len(evs) == 0 || evs[0].what != "became leader" {
		t.Fatalf("no leader without faults (exit %d)\n%s", code, lastLines(out, 20))
	}
	leader := evs[0].node
	var others []string
	for _, n := range []string{"n1", "n2", "n3", "client"} {
		if n != leader {
			others = append(others, n)
		}
	}
	at, dur := time.Second, 3*time.Second
	plan := writePlan(t, []map[string]any{{
		"at_ns": at.Nanoseconds(), "kind": "partition", "node": leader, "peers": others, "duration_ns": dur.Nanoseconds(),
	}})
	saved := filepath.Join(t.TempDir(), "saved.json")
	code, out = cli(t, "replay", "-c", "seedfall.json", "-seed", "1", "-faults", plan, "-save", saved)
	if code != 0 || !strings.Contains(out, "client#1 | ok: 30 entries committed on a majority") {
		t.Fatalf("exit %d\n%s", code, lastLines(out, 30))
	}
	var newLeader string
	for _, e := range leaderEvents(t, out) {
		if e.what == "became leader" && e.node != leader && e.at > at && e.at < at+dur {
			newLeader = e.node
			break
		}
	}
	if newLeader == "" {
		t.Fatalf("no new leader while %s was partitioned\n%s", leader, out)
	}
	if !regexp.MustCompile(`client#1 \| PUT k\d+ via ` + newLeader + `: OK`).MatchString(out) {
		t.Fatalf("no entry acknowledged by the new leader %s", newLeader)
	}
	t.Logf("leader %s partitioned at %s for %s; %s took over", leader, at, dur, newLeader)

	// The saved plan replays the run byte for byte.
	code2, out2 := cli(t, "replay", "-c", "seedfall.json", "-seed", "1", "-faults", saved)
	if code2 != 0 || out2 != out {
		t.Fatalf("replaying the saved plan differs (exit %d)", code2)
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
