// Package exampletest holds the test helpers of the real-library examples: each
// builds the seedfall CLI from this repository once (from the example's directory,
// two levels down) and runs it on the example's configs.
package exampletest

import (
	"bytes"
	"context"
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
	"time"
)

var (
	buildOnce sync.Once
	sfPath    string
	buildErr  error
	buildDir  string
)

// Main runs the tests and removes the built binary; call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	return code
}

// binary returns the path of a seedfall binary built once from this repository.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "seedfall-bin-")
		if buildErr != nil {
			return
		}
		sfPath = filepath.Join(buildDir, "seedfall")
		root, err := repoRoot()
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", sfPath, "./cmd/seedfall")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New("build seedfall: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return sfPath
}

// repoRoot is the repository's root: the nearest directory up from here with
// cmd/seedfall (examples/X for an example's tests, examples/ for the root's).
func repoRoot() (string, error) {
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "cmd", "seedfall", "main.go")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("build seedfall: no cmd/seedfall above the test's directory")
		}
		dir = parent
	}
}

// Run runs seedfall with args in this directory and returns its exit code and output.
func Run(t testing.TB, args ...string) (int, string) {
	t.Helper()
	return RunIn(t, "", args...)
}

// RunIn is Run in directory dir ("" for this one).
func RunIn(t testing.TB, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
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

// WantFail asserts that seedfall exited 1 and printed every one of want.
func WantFail(t testing.TB, code int, out string, want ...string) {
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

// WantPass asserts that seedfall exited 0.
func WantPass(t testing.TB, code int, out string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit code %d, want 0 (all seeds pass):\n%s", code, out)
	}
}

// SweepPasses runs a sweep of cfg (seeds "A-B") and asserts that every seed passed,
// that the durability check of examples/raft's client ("every acknowledged write
// survives") was reached and true on each, and, with lin, that every history was
// checked and found linearizable (a checker timeout is not a pass of the check).
func SweepPasses(t testing.TB, cfg, seeds string, lin bool) {
	t.Helper()
	code, out := Run(t, "run", "-q", "-c", cfg, "-seeds", seeds)
	WantPass(t, code, out)
	var a, b int
	if _, err := fmt.Sscanf(seeds, "%d-%d", &a, &b); err != nil {
		t.Fatalf("seeds %q: %v", seeds, err)
	}
	n := b - a + 1
	if !regexp.MustCompile(fmt.Sprintf(`every acknowledged write survives\s+%d\s+%d\s+ok`, n, n)).MatchString(out) {
		t.Fatalf("want the durability check reached and true on all %d seeds:\n%s", n, out)
	}
	if lin && (!regexp.MustCompile(fmt.Sprintf(`linearizable \(kv\)\s+%d\s+%d\s+ok`, n, n)).MatchString(out) || strings.Contains(out, "timed out")) {
		t.Fatalf("want all %d histories checked linearizable:\n%s", n, out)
	}
}

// RunJSON runs seedfall with args in this directory, decodes its standard output as
// JSON into v and returns the exit code.
func RunJSON(t testing.TB, v any, args ...string) int {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
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

// LowestFailing sweeps seeds (e.g. "1-40") of cfg and returns the lowest seed that
// fails, whatever its failure. Which seeds fail depends on how the engine draws its
// randomness, so the tests find the seed instead of hard-coding it.
func LowestFailing(t testing.TB, cfg, seeds string) uint64 {
	t.Helper()
	var sum struct {
		Signatures []struct {
			Seeds []uint64 `json:"seeds"`
		} `json:"signatures"`
	}
	code := RunJSON(t, &sum, "run", "-c", cfg, "-seeds", seeds, "-json", "-q")
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

// LowestFailsWith finds the lowest failing seed of cfg in seeds 1-40, runs it alone
// and asserts that it fails with every one of want. It returns the seed.
func LowestFailsWith(t testing.TB, cfg string, want ...string) uint64 {
	t.Helper()
	return LowestFailsWithIn(t, cfg, "1-40", want...)
}

// LowestFailsWithIn is LowestFailsWith over seeds (e.g. "1-60") instead of 1-40.
func LowestFailsWithIn(t testing.TB, cfg, seeds string, want ...string) uint64 {
	t.Helper()
	seed := LowestFailing(t, cfg, seeds)
	code, out := Run(t, "run", "-c", cfg, "-seeds", fmt.Sprintf("%d-%d", seed, seed))
	WantFail(t, code, out, append([]string{fmt.Sprintf("FAIL seed %d ", seed)}, want...)...)
	t.Logf("%s: lowest failing seed in %s is %d", cfg, seeds, seed)
	return seed
}

// ReadPlan returns the seed of a saved fault plan (written by seedfall shrink) and
// its number of faults.
func ReadPlan(t testing.TB, path string) (seed uint64, faults int) {
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

// FaultCount returns N from the "faults before the failure (N):" line of out.
func FaultCount(t testing.TB, out string) int {
	t.Helper()
	m := faultsBefore.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output lacks \"faults before the failure (N):\":\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// RunModule runs `go test -short ./...` in the example module at dir (its own Go
// module, which the root's `go test ./...` does not reach) within 10 minutes, and fails
// with its output if it fails. Each module has its own test package under
// examples/modules/, so that each gets its own test binary and timeout.
//
// flags are more go test flags ("-run", "^TestX$"): a module whose suite is long is
// split across two packages of this module, each running part of it.
func RunModule(t *testing.T, dir string, flags ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the example module's own test suite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"test", "-short", "-count=1"}, flags...), "./...")...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s: go test -short ./... in %s", dir, time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("%s: %v\n%s", dir, err, out)
	}
}

// Seeds returns long when SEEDFALL_LONG is set (the sweeps a README quotes) and short
// otherwise (a few seeds for `go test -short`).
func Seeds(short, long string) string {
	if os.Getenv("SEEDFALL_LONG") != "" {
		return long
	}
	return short
}
