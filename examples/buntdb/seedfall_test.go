package buntdb_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// These tests build the seedfall CLI from this repository into a temporary
// directory and run small sweeps of this example's configs. Each one takes seconds
// to a minute; -short skips the passing sweeps.

var (
	buildOnce sync.Once
	sfPath    string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// seedfall returns the path of a freshly built seedfall binary.
func seedfall(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "seedfall-bin-")
		if buildErr != nil {
			return
		}
		sfPath = filepath.Join(buildDir, "seedfall")
		cmd := exec.Command("go", "build", "-o", sfPath, "./cmd/seedfall")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New("build seedfall: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return sfPath
}

// sf runs seedfall with args in this directory and returns its exit code and output.
func sf(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(seedfall(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("seedfall %s: %v\n%s", strings.Join(args, " "), err, out.String())
	return 0, ""
}

// wantFail asserts that seedfall exited 1 and printed every one of want.
func wantFail(t *testing.T, code int, out string, want ...string) {
	t.Helper()
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (a failure found):\n%s", code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

func wantPass(t *testing.T, code int, out string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit code %d, want 0 (all seeds pass):\n%s", code, out)
	}
}

// sfJSON runs seedfall with args in this directory, decodes its standard output as
// JSON into v and returns the exit code.
func sfJSON(t *testing.T, v any, args ...string) int {
	t.Helper()
	cmd := exec.Command(seedfall(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("seedfall %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("seedfall %s (exit code %d): decode JSON: %v\n%s%s", strings.Join(args, " "), code, err, stdout.String(), stderr.String())
	}
	return code
}

// lowestFailing sweeps seeds (e.g. "1-40") of cfg and returns the lowest seed that
// fails, whatever its failure. Which seeds fail depends on how the engine draws its
// randomness, so the tests find the seed instead of hard-coding it.
func lowestFailing(t *testing.T, cfg, seeds string) uint64 {
	t.Helper()
	var sum struct {
		Signatures []struct {
			Seeds []uint64 `json:"seeds"`
		} `json:"signatures"`
	}
	code := sfJSON(t, &sum, "run", "-c", cfg, "-seeds", seeds, "-json", "-q")
	if code != 1 {
		t.Fatalf("run -c %s -seeds %s: exit code %d, want 1 (a failure found)", cfg, seeds, code)
	}
	var low uint64
	for _, s := range sum.Signatures {
		for _, n := range s.Seeds {
			if low == 0 || n < low {
				low = n
			}
		}
	}
	if low == 0 {
		t.Fatalf("run -c %s -seeds %s: exit code 1 but no failing seed in the JSON summary", cfg, seeds)
	}
	return low
}

// lowestFailsWith finds the lowest failing seed of cfg in seeds 1-40, runs it alone
// and asserts that it fails with every one of want. It returns the seed.
func lowestFailsWith(t *testing.T, cfg string, want ...string) uint64 {
	t.Helper()
	seed := lowestFailing(t, cfg, "1-40")
	code, out := sf(t, "run", "-c", cfg, "-seeds", fmt.Sprintf("%d-%d", seed, seed))
	wantFail(t, code, out, append([]string{fmt.Sprintf("FAIL seed %d ", seed)}, want...)...)
	t.Logf("%s: lowest failing seed in 1-40 is %d", cfg, seed)
	return seed
}

// readPlan returns the seed of a saved fault plan (written by seedfall shrink) and
// its number of faults.
func readPlan(t *testing.T, path string) (seed uint64, faults int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Seed   uint64            `json:"seed"`
		Faults []json.RawMessage `json:"faults"`
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return plan.Seed, len(plan.Faults)
}

var faultsBefore = regexp.MustCompile(`faults before the failure \((\d+)\):`)

// faultCount returns N from the "faults before the failure (N):" line of out.
func faultCount(t *testing.T, out string) int {
	t.Helper()
	m := faultsBefore.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output lacks \"faults before the failure (N):\":\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// SyncPolicy Always with auto-shrink: Shrink renames an unsynced file over the
// database, and a crash after it loses acknowledged writes.
func TestShrinkLosesWrites(t *testing.T) {
	lowestFailsWith(t, "seedfall.shrink.json", "acknowledged write lost: ")
}

// The plan seedfall shrink saved for seed 1 (plans/seed1.shrunk.json): at most two
// idle crashes, no crash in the middle of a write.
func TestShrinkFewFaults(t *testing.T) {
	const plan = "plans/seed1.shrunk.json"
	seed, n := readPlan(t, plan)
	if n < 1 || n > 2 {
		t.Fatalf("%s has %d faults, want 1 or 2", plan, n)
	}
	code, out := sf(t, "replay", "-q", "-c", "seedfall.shrink.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "acknowledged write lost: ", "server now answers \"NONE\"")
	if got := faultCount(t, out); got > 2 {
		t.Fatalf("%d faults before the failure, want at most 2:\n%s", got, out)
	}
	// The same schedule against the patched library passes.
	code, out = sf(t, "replay", "-q", "-c", "seedfall.shrink.patched.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	wantPass(t, code, out)
}

// Negative control: SyncPolicy Never acknowledges before fsync.
func TestNegativeControlNever(t *testing.T) {
	code, out := sf(t, "run", "-c", "seedfall.nosync.json", "-seeds", "1-3")
	wantFail(t, code, out, "acknowledged write lost: ")
}

// No false alarms: auto-shrink disabled, and the patched shrink (f.Sync before the
// rename, directory fsync after it), also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep; skipped with -short")
	}
	for _, c := range []string{"seedfall.noshrink.json", "seedfall.shrink.patched.json", "seedfall.shrink.strict.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-10")
		wantPass(t, code, out)
	}
}
