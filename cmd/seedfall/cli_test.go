// End-to-end tests of the seedfall command: they call run() as main does, with real
// builds of examples/kvlog and worker processes (this test binary, see TestMain).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	kvlogBuggy = filepath.Join("..", "..", "examples", "kvlog", "seedfall.json")
	kvlogFixed = filepath.Join("..", "..", "examples", "kvlog", "seedfall.fixed.json")
	testdata   = filepath.Join("..", "..", "engine", "testdata")
)

// runCLI runs the command in this process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(args, &stdout, &stderr)
	t.Logf("seedfall %s: exit %d in %s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond))
	return code, stdout.String(), stderr.String()
}

// buggySweep is `run` over seeds 1-200 of kvlog's buggy config with 2 workers, shared
// by the tests that need a failing sweep.
var buggySweep struct {
	once           sync.Once
	code           int
	stdout, stderr string
	results        []map[string]any
	lines          []string
}

func sweepBuggy(t *testing.T) {
	t.Helper()
	buggySweep.once.Do(func() {
		dir, err := os.MkdirTemp("", "seedfall-cli-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "buggy.jsonl")
		buggySweep.code, buggySweep.stdout, buggySweep.stderr = runCLI(t, "run", "-c", kvlogBuggy, "-seeds", "1-200", "-workers", "2", "-out", out)
		buggySweep.lines, buggySweep.results = readResults(t, out)
	})
	if len(buggySweep.results) != 200 {
		t.Fatalf("buggy sweep wrote %d results, want 200; exit %d\nstdout:\n%s\nstderr:\n%s", len(buggySweep.results), buggySweep.code, buggySweep.stdout, buggySweep.stderr)
	}
}

// readResults reads a results file: its raw lines and the decoded objects.
func readResults(t *testing.T, path string) ([]string, []map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("results file: %v", err)
		return nil, nil
	}
	defer f.Close()
	var lines []string
	var objs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("results line %q: %v", sc.Text(), err)
		}
		lines = append(lines, sc.Text())
		objs = append(objs, m)
	}
	return lines, objs
}

// TestRunFindsKvlogBug is acceptance 1: the sweep finds the lost acknowledged write and
// prints the seed, the faults before the failure, the reason and a replay command.
func TestRunFindsKvlogBug(t *testing.T) {
	t.Parallel()
	sweepBuggy(t)
	if buggySweep.code != exitFail {
		t.Errorf("exit %d, want %d", buggySweep.code, exitFail)
	}
	for _, w := range []string{
		"acknowledged write lost",
		"faults before the failure",
		"replay: seedfall replay -c " + kvlogBuggy + " -seed ",
		"distinct failure",
	} {
		if !strings.Contains(buggySweep.stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, buggySweep.stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^FAIL seed \d+ at t=\S+ client#1: acknowledged write lost: `).MatchString(buggySweep.stdout) {
		t.Errorf("no FAIL line with the seed, time and reason:\n%s", buggySweep.stdout)
	}
	// The bug needs a crash: the faults listed before the failure include one.
	if !regexp.MustCompile(`(?m)^    \S+ crash server`).MatchString(buggySweep.stdout) {
		t.Errorf("no crash among the faults before the failure:\n%s", buggySweep.stdout)
	}
	if !regexp.MustCompile(`(?m)^FAIL \d+ of 200 seeds failed`).MatchString(buggySweep.stdout) {
		t.Errorf("no summary line:\n%s", buggySweep.stdout)
	}
}

// TestRunFixedCheck is acceptance 2 (on 100 seeds; TestRunFixedCheck1000 does 1000):
// the fixed server passes every seed, and every seed replays identically.
func TestRunFixedCheck(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, "run", "-c", kvlogFixed, "-seeds", "1-100", "-check", "-workers", "2")
	if code != exitPass {
		t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"every seed ran twice, traces identical", "ok 100 seeds passed ("} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
}

// TestRunFixedCheck1000 is acceptance 2 as written: 1000 seeds with -check. It takes a
// few minutes on two cores, so it runs only with SEEDFALL_LONG_TESTS=1.
func TestRunFixedCheck1000(t *testing.T) {
	if os.Getenv("SEEDFALL_LONG_TESTS") != "1" || testing.Short() {
		t.Skip("set SEEDFALL_LONG_TESTS=1 to sweep 1000 seeds twice")
	}
	code, stdout, stderr := runCLI(t, "run", "-c", kvlogFixed, "-seeds", "1-1000", "-check")
	if code != exitPass {
		t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"every seed ran twice, traces identical", "ok 1000 seeds passed ("} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
}

// firstFailing returns the first failing seed of the buggy sweep and its result.
func firstFailing(t *testing.T) (uint64, map[string]any) {
	t.Helper()
	sweepBuggy(t)
	for _, r := range buggySweep.results {
		if r["verdict"] == "fail" {
			return uint64(r["seed"].(float64)), r
		}
	}
	t.Fatal("no failing seed in the buggy sweep")
	return 0, nil
}

// selfCLI runs this test binary as the seedfall command in a new process.
func selfCLI(t *testing.T, args ...string) (int, []byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SEEDFALL_AS_CLI=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Logf("stderr of %v:\n%s", args, stderr.String())
	}
	return code, out
}

// TestReplayTwoProcesses is acceptance 3, first half: replaying a failing seed in two
// separate processes prints byte-identical output, whose trace hash is the one the
// sweep's worker computed for that seed.
func TestReplayTwoProcesses(t *testing.T) {
	t.Parallel()
	seed, res := firstFailing(t)
	args := []string{"replay", "-c", kvlogBuggy, "-seed", strings.TrimSpace(jsonNum(seed))}
	code1, out1 := selfCLI(t, args...)
	code2, out2 := selfCLI(t, args...)
	if code1 != exitFail || code2 != exitFail {
		t.Errorf("exit codes %d and %d, want %d", code1, code2, exitFail)
	}
	if !bytes.Equal(out1, out2) {
		a, b := strings.Split(string(out1), "\n"), strings.Split(string(out2), "\n")
		for i := 0; i < min(len(a), len(b)); i++ {
			if a[i] != b[i] {
				t.Fatalf("replays of seed %d differ at line %d:\n  %s\n  %s", seed, i+1, a[i], b[i])
			}
		}
		t.Fatalf("replays of seed %d differ in length: %d and %d lines", seed, len(a), len(b))
	}
	out := string(out1)
	for _, w := range []string{
		"FAIL seed " + jsonNum(seed),
		"acknowledged write lost",
		"fault crash server#",
		"trace " + res["trace_hash"].(string) + " (",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("replay output lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n"); n < 50 {
		t.Errorf("replay printed %d lines, want the full trace", n)
	}
}

func jsonNum(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// withoutWall drops stats.wall_ns and stats.cpu_ns, the fields of a result that are not
// part of its identity (host time), and re-encodes the result.
func withoutWall(t *testing.T, line string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if st, ok := m["stats"].(map[string]any); ok {
		delete(st, "wall_ns")
		delete(st, "cpu_ns")
	}
	b, err := json.Marshal(m) // map keys come out sorted
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunWorkersAgree is acceptance 3, second half, through the CLI: the results file
// of a sweep with 1 worker equals that of the sweep with 2 workers, line for line
// (stats.wall_ns aside).
func TestRunWorkersAgree(t *testing.T) {
	t.Parallel()
	// 40 seeds of 1-200 around the first failing one, so that the comparison covers a
	// failure.
	first, _ := firstFailing(t)
	lo := min(max(first, 21)-20, 161)
	out := filepath.Join(t.TempDir(), "one.jsonl")
	seeds := jsonNum(lo) + "-" + jsonNum(lo+39)
	code, stdout, stderr := runCLI(t, "run", "-c", kvlogBuggy, "-seeds", seeds, "-workers", "1", "-out", out, "-q")
	if code != exitPass && code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	one, _ := readResults(t, out)
	if len(one) != 40 {
		t.Fatalf("%d results, want 40", len(one))
	}
	failed := 0
	for i, l := range one {
		a, b := withoutWall(t, l), withoutWall(t, buggySweep.lines[int(lo)-1+i])
		if a != b {
			t.Errorf("seed %d:\n  1 worker:  %s\n  2 workers: %s", int(lo)+i, a, b)
		}
		if strings.Contains(l, `"verdict":"fail"`) {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("no seed of %s failed: the comparison never covered a failing run", seeds)
	}
}

// TestRunWatchdog: a guest that spins without host calls on seed 2 is reported as
// watchdog for that seed by the worker-process sweep, and the other seeds complete.
func TestRunWatchdog(t *testing.T) {
	t.Setenv("SEEDFALL_WATCHDOG_GRACE", "5s")
	out := filepath.Join(t.TempDir(), "spin.jsonl")
	start := time.Now()
	code, stdout, stderr := runCLI(t, "run", "-c", filepath.Join(testdata, "spin.json"), "-seeds", "1-5", "-workers", "2", "-out", out)
	// How long it took is logged, not asserted: a loaded machine stretches it (see the
	// worker's limit in engine/worker.go).
	t.Logf("the sweep took %s", time.Since(start))
	if code != exitFail {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, stdout, stderr)
	}
	if !strings.Contains(stdout, "1 stopped by the watchdog") || !strings.Contains(stdout, "4 passed") {
		t.Errorf("summary does not count the watchdog and the passes:\n%s", stdout)
	}
	_, rs := readResults(t, out)
	var got []string
	for _, r := range rs {
		got = append(got, jsonNum(uint64(r["seed"].(float64)))+":"+r["verdict"].(string))
	}
	if want := "1:pass 2:watchdog 3:pass 4:pass 5:pass"; strings.Join(got, " ") != want {
		t.Errorf("results %v, want %s", got, want)
	}
}

// TestBadInput: usage and tool errors exit 2 with a message that says what is wrong.
func TestBadInput(t *testing.T) {
	t.Parallel()
	badCfg := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(badCfg, []byte(`{"workload": {"pkg": "./client"}, "faults": {"restart_delay": "soon"}}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"malformed config", []string{"run", "-c", badCfg, "-seeds", "1"}, []string{badCfg, "faults.restart_delay", "soon"}},
		{"missing config", []string{"run", "-c", filepath.Join(t.TempDir(), "none.json")}, []string{"none.json"}},
		{"package does not compile", []string{"run", "-c", filepath.Join(testdata, "broken.json"), "-seeds", "1"}, []string{`"server"`, "cannot use", "main.go"}},
		{"replay without seed", []string{"replay", "-c", kvlogBuggy}, []string{"-seed is required"}},
		{"bad seeds", []string{"run", "-c", kvlogBuggy, "-seeds", "9-1"}, []string{"backwards"}},
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`}},
		{"unknown flag", []string{"run", "-nope"}, []string{"-nope"}},
		{"unknown mutation (run)", []string{"run", "-c", kvlogBuggy, "-seeds", "1", "-mutation", "fsync-nopp"}, []string{`"fsync-nopp" is not a mutation operator`, "fsync-noop", "rename-nonatomic"}},
		{"unknown mutation (replay)", []string{"replay", "-c", kvlogBuggy, "-seed", "1", "-mutation", "fsync-nopp"}, []string{`"fsync-nopp" is not a mutation operator`, "dir-fsync-noop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestRunSpinEverySeed: a guest that spins without host calls on every seed is one
// bug: every seed is a watchdog outcome with the same signature, however the worker
// noticed it, and no seed is lost to a worker that was exiting after the one before.
func TestRunSpinEverySeed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "spin.jsonl")
	code, stdout, stderr := runCLI(t, "run", "-c", filepath.Join(testdata, "spin-all.json"), "-seeds", "1-3", "-workers", "2", "-q", "-out", out)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFail, stdout, stderr)
	}
	if !strings.Contains(stdout, "FAIL 3 of 3 seeds failed (1 distinct failure), 3 stopped by the watchdog; 0 passed") {
		t.Errorf("summary:\n%s", stdout)
	}
	_, rs := readResults(t, out)
	sigs := map[string]bool{}
	for _, r := range rs {
		if r["verdict"] != "watchdog" {
			t.Errorf("seed %v: verdict %v", r["seed"], r["verdict"])
		}
		sigs[r["failure"].(map[string]any)["signature"].(string)] = true
	}
	if len(rs) != 3 || len(sigs) != 1 {
		t.Errorf("%d results with %d signatures, want 3 with 1", len(rs), len(sigs))
	}
}

// TestRunStopOnFail: -stop-on-fail with one worker runs exactly the seeds up to the
// first failing one and reports its position; on a config that passes, every seed runs.
func TestRunStopOnFail(t *testing.T) {
	t.Parallel()
	sum := func(args ...string) (int, map[string]any) {
		code, stdout, stderr := runCLI(t, append([]string{"run", "-workers", "1", "-stop-on-fail", "-json", "-q"}, args...)...)
		var m map[string]any
		if err := json.Unmarshal([]byte(stdout), &m); err != nil {
			t.Fatalf("summary: %v\n%s\n%s", err, stdout, stderr)
		}
		return code, m
	}
	// kvlog's seed 2 is its first failing seed (seed 1 passes).
	code, m := sum("-c", kvlogBuggy, "-seeds", "1-20")
	if code != exitFail || m["first_failure_run"] != 2.0 || m["seeds"] != 2.0 {
		t.Fatalf("buggy: exit %d, first_failure_run %v, seeds %v; want 1, 2, 2", code, m["first_failure_run"], m["seeds"])
	}
	// From seed 2 on, the first run fails.
	if _, m := sum("-c", kvlogBuggy, "-seeds", "2-20"); m["first_failure_run"] != 1.0 || m["seeds"] != 1.0 {
		t.Fatalf("from seed 2: first_failure_run %v, seeds %v", m["first_failure_run"], m["seeds"])
	}
	// Negative control: the fixed server never fails, so nothing stops the sweep.
	code, m = sum("-c", kvlogFixed, "-seeds", "1-5")
	if code != exitPass || m["first_failure_run"] != nil || m["seeds"] != 5.0 {
		t.Fatalf("fixed: exit %d, first_failure_run %v, seeds %v", code, m["first_failure_run"], m["seeds"])
	}
}
