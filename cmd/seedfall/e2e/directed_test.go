package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/ci"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/githubtest"
)

// directedTests holds simulation tests whose workload crashes, restarts, partitions
// and pauses the node itself (simtest's T.Crash and the rest: engine/directed.go).
const directedTests = "./testdata/directed"

// TestSimtestDirected: a test crashes its node at a moment it chooses, restarts it and
// reads back: it fails at every seed on a store that acknowledges before it syncs, with
// the signature its random-crash twin finds; the same test passes on the store that
// syncs (the control). Replay, -check and shrink work on it: shrink drops the random
// pauses around the test's own crash and keeps the crash and restart, and the shrunk
// plan replays without applying them twice.
func TestSimtestDirected(t *testing.T) {
	code, stdout, stderr := runCLI(t, "test", directedTests, "-run", "^(TestCrash|TestCrashDurable|TestRandomTwin|TestPartitionAndPause)$",
		"-seeds", "1-4", "-workers", "2")
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	sections := map[string]string{}
	for _, sec := range strings.Split(stdout, "=== ")[1:] {
		name, _, _ := strings.Cut(sec, " ")
		sections[name] = sec
	}
	crash := sections["TestCrash"]
	for _, want := range []string{
		"FAIL seed 1 at t=", "workload#1: acknowledged write lost: k0",
		"crash s, by the test", "restart s, by the test",
		"FAIL 4 of 4 seeds failed (1 distinct failure)",
	} {
		if !strings.Contains(crash, want) {
			t.Errorf("TestCrash: no %q in\n%s", want, crash)
		}
	}
	sig := regexp.MustCompile(`sig-[0-9a-f]+`)
	if a, b := sig.FindString(crash), sig.FindString(sections["TestRandomTwin"]); a == "" || a != b {
		t.Errorf("the directed test's signature %q is not its random twin's %q\n%s", a, b, stdout)
	}
	for _, ok := range []string{"TestCrashDurable", "TestPartitionAndPause"} {
		if !strings.Contains(sections[ok], "ok 4 seeds passed") {
			t.Errorf("%s: want 4 seeds passed\n%s", ok, sections[ok])
		}
	}

	// -check: the seed runs twice, identically.
	if code, stdout, stderr := runCLI(t, "test", directedTests, "-run", "^TestCrash$", "-seed", "2", "-check", "-q"); code != exitFail || strings.Contains(stdout+stderr, "differ") {
		t.Errorf("-check: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Shrink: the random pauses go, the test's own faults stay.
	plan := filepath.Join(t.TempDir(), "plan.json")
	code, stdout, stderr = runCLI(t, "shrink", "-test", directedTests, "-run", "^TestCrashAmidPauses$", "-seed", "1", "-o", plan)
	if code != exitFail || !strings.Contains(stdout, "(2 of them the test's own, which shrink keeps)") {
		t.Fatalf("shrink: exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	var p engine.FaultPlan
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range p.Faults {
		if !f.Directed {
			t.Errorf("shrunk plan keeps a random fault: %s", f)
		}
		kinds = append(kinds, string(f.Kind))
	}
	if strings.Join(kinds, ",") != "crash,restart" {
		t.Errorf("shrunk plan: %v, want the directed crash and restart\n%s", kinds, data)
	}
	_, full, _ := runCLI(t, "test", directedTests, "-run", "^TestCrashAmidPauses$", "-seed", "1")
	if !strings.Contains(full, "fault pause s#1") {
		t.Errorf("the unshrunk run has no random pause to drop:\n%s", full)
	}
	code, stdout, stderr = runCLI(t, "test", directedTests, "-run", "^TestCrashAmidPauses$", "-seed", "1", "-faults", plan)
	if code != exitFail || strings.Count(stdout, "fault crash s#1 (idle), by the test") != 1 ||
		strings.Count(stdout, "fault restart s, by the test") != 1 || strings.Contains(stdout, "fault pause") ||
		strings.Contains(stdout, "it is down") || strings.Contains(stdout, "it is up") ||
		!strings.Contains(stdout, "acknowledged write lost: k0") {
		t.Errorf("replay of the shrunk plan: exit %d, want each directed fault once and no pause\n%s\n%s", code, stdout, stderr)
	}
}

// TestSimtestDirectedNatively: under go test the same tests run as ordinary tests (a
// crash stops the node and runs its Cleanup, a restart runs its function again, a
// partition fails calls at once until the heal, a pause holds requests), and pass.
func TestSimtestDirectedNatively(t *testing.T) {
	out, err := exec.Command("go", "test", "-count=1", "-v", directedTests).CombinedOutput()
	if err != nil {
		t.Fatalf("go test %s: %v\n%s", directedTests, err, out)
	}
	for _, want := range []string{"--- PASS: TestCrash ", "--- PASS: TestPartitionAndPause ", `Crash("s") stops the node's process as Kill does`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestCISeveralSimulationTests: the Action's input test naming a package with three
// simulation tests (run matching three) sweeps them all in one job: one report whose
// table lists the three, one pull-request comment that lists them and the failing one's
// signature (keyed by its test) with its replay command; the push to main writes one
// baseline whose signature is keyed by the test. Sharded, the jobs split the (test,
// seed) pairs between them, and merge and report put them back together.
func TestCISeveralSimulationTests(t *testing.T) {
	gh := githubtest.New(t)
	const three = "^(TestCrash|TestCrashDurable|TestPartitionAndPause)$"
	sweep := []string{"-test", directedTests, "-run", three, "-seeds", "1-3", "-crash-seeds", "", "-shrink-budget", "0s", "-fail-on", "new", "-baseline", "branch:" + ciBranch}
	pr := runCIWith(t, gh, "PR", "pull_request", ciPREvent(strings.Repeat("a", 40)), strings.Repeat("e", 40), 201, sweep...)
	pr.wantOutputs(t, exitFail, "1", "0", "0", "failure")
	if !strings.Contains(pr.stdout, "sweeping 9 seeds of 3 simulation tests") {
		t.Errorf("PR: one job should sweep the three tests:\n%s", pr.stdout)
	}
	cs := gh.MarkerComments(ciPR, ci.CommentMarker)
	if len(cs) != 1 {
		t.Fatalf("PR: %d seedfall comments, want 1", len(cs))
	}
	body := cs[0].Body
	for _, want := range []string{
		"| `TestCrash` | 3 | 0 | 3 | 1 | 0 |",
		"| `TestCrashDurable` | 3 | 3 | 0 | 0 | 0 |",
		"| `TestPartitionAndPause` | 3 | 3 | 0 | 0 | 0 |",
		"TestCrash.sig-",
		"seedfall test " + directedTests + " -run '^TestCrash$' -seed 1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("PR: the comment lacks %q:\n%s", want, body)
		}
	}
	push := runCIWith(t, gh, "push", "push", ciPushEvent(strings.Repeat("b", 40)), strings.Repeat("b", 40), 202, sweep...)
	push.wantOutputs(t, exitFail, "1", "0", "0", "failure")
	raw, ok := gh.File(ciBranch, ci.DefaultBaselinePath)
	if !ok {
		t.Fatalf("push: no baseline written\n%s", push.stdout)
	}
	base, err := ci.ParseBaseline("fake", raw)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range base.Signatures {
		keys = append(keys, k)
	}
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "TestCrash.sig-") {
		t.Errorf("baseline signatures %v, want one keyed by TestCrash", keys)
	}
	// A second push: the signature is known, by its test.
	again := runCIWith(t, gh, "push again", "push", ciPushEvent(strings.Repeat("c", 40)), strings.Repeat("c", 40), 203, sweep...)
	again.wantOutputs(t, exitPass, "0", "1", "0", "success")

	// Sharded: the two jobs split the nine (test, seed) pairs; merged, they are the sweep.
	var files []string
	seen := map[string]bool{}
	for _, shard := range []string{"1/2", "2/2"} {
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, "ci", "-test", directedTests, "-run", three, "-seeds", "1-3", "-crash-seeds", "", "-shrink-budget", "0s", "-fail-on", "never", "-shard", shard, "-out", out)
		if code != exitPass {
			t.Fatalf("shard %s: exit %d\n%s\n%s", shard, code, stdout, stderr)
		}
		f := filepath.Join(out, ci.ResultsJSONL)
		files = append(files, f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r engine.Result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			k := fmt.Sprintf("%s/%d", r.Test, r.Seed)
			if seen[k] {
				t.Errorf("shard %s: %s swept twice", shard, k)
			}
			seen[k] = true
		}
	}
	if len(seen) != 9 {
		t.Errorf("the shards swept %d (test, seed) pairs, want 9: %v", len(seen), seen)
	}
	merged := filepath.Join(t.TempDir(), "all.jsonl")
	if code, _, stderr := runCLI(t, append([]string{"merge", "-o", merged}, files...)...); code != exitPass {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	out := t.TempDir()
	if code, stdout, stderr := runCLI(t, "report", "-in", merged, "-out", out); code != exitFail {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, ci.ReportMarkdown))
	for _, want := range []string{"| `TestCrash` | 3 | 0 | 3 |", "| `TestPartitionAndPause` | 3 | 3 | 0 |", "-run '^TestCrash$' -seed 1"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report of the merged shards lacks %q:\n%s", want, md)
		}
	}
}

// TestShrinkEmitTest: `seedfall shrink -emit-test` writes the shrunk plan of a random
// twin's failing seed as a Go test of its package (simtest.Schedule: the plan's faults
// in Go, the test's random faults off), runs it, and it fails the seed the same way; it
// is an ordinary test (go vet, go test pass natively). Control: without its fault the
// emitted test passes the seed.
func TestShrinkEmitTest(t *testing.T) {
	dir, err := os.MkdirTemp("testdata", "emit-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src, err := os.ReadFile(filepath.Join(directedTests, "directed_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "directed_test.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := "./" + filepath.ToSlash(dir)
	code, stdout, stderr := runCLI(t, "shrink", "-test", pkg, "-run", "^TestRandomTwin$", "-seed", "1", "-o", filepath.Join(t.TempDir(), "plan.json"), "-emit-test")
	if code != exitFail || !strings.Contains(stdout, "it fails seed 1 the same way (sig-") {
		t.Fatalf("shrink -emit-test: exit %d\n%s\n%s", code, stdout, stderr)
	}
	file := filepath.Join(dir, "random_twin_seed1_test.go")
	emitted, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"func TestRandomTwinSeed1(t *testing.T) {", "simtest.Schedule(t, TestRandomTwin,", `Kind: "crash", Node: "s"`} {
		if !strings.Contains(string(emitted), want) {
			t.Errorf("the emitted test lacks %q:\n%s", want, emitted)
		}
	}
	if out, err := exec.Command("go", "vet", pkg).CombinedOutput(); err != nil {
		t.Fatalf("go vet %s: %v\n%s", pkg, err, out)
	}
	if out, err := exec.Command("go", "test", "-count=1", "-run", "^TestRandomTwinSeed1$", pkg).CombinedOutput(); err != nil {
		t.Fatalf("go test %s natively: %v\n%s", pkg, err, out)
	}
	// Again, by its own name: the same failure, and in the trace the plan's crash as the
	// test's own.
	code, stdout, _ = runCLI(t, "test", pkg, "-run", "^TestRandomTwinSeed1$", "-seed", "1")
	if code != exitFail || !strings.Contains(stdout, "acknowledged write lost") || !strings.Contains(stdout, "by the test") {
		t.Errorf("the emitted test, seed 1: exit %d\n%s", code, stdout)
	}
	// Control: without its fault, the emitted test passes the seed.
	var kept []string
	for _, l := range strings.Split(string(emitted), "\n") {
		if !strings.Contains(l, "simtest.Fault{") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(strings.Join(kept, "\n"), "\t\"time\"\n", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "test", pkg, "-run", "^TestRandomTwinSeed1$", "-seed", "1", "-q"); code != exitPass {
		t.Errorf("the emitted test without its fault: exit %d, want a pass\n%s\n%s", code, stdout, stderr)
	}
}
