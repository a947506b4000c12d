package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cachedir"
)

// bad holds simulation tests that are wrong on purpose, and one that is right.
const badTests = "./testdata/simtest/bad"

// TestSimtestBadInput: a wrong simulation test gets a clear error and exit 2, never a
// hang or a sweep of failures that are not the user's library's.
func TestSimtestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{badTests, "-run", "^TestNoWorkload$"}, "TestNoWorkload: no workload: declare one with simtest.Workload"},
		{[]string{badTests, "-run", "^TestDuplicateNodes$"}, `TestDuplicateNodes: two nodes are named "a"`},
		{[]string{badTests, "-run", "^TestPanicsAtStart$"}, "TestPanicsAtStart: fails with no faults injected, so the test itself is wrong: a#1 crashed: exit_code(2): panic: the node cannot start"},
		{[]string{badTests, "-run", "^TestUnknownNode$"}, `TestUnknownNode: fails with no faults injected, so the test itself is wrong: workload#1: simtest: Crash("nope"): crash "nope": no such node (nodes: a and workload)`},
		{[]string{badTests, "-run", "^TestNothing$"}, `-run "^TestNothing$" matches no simulation test in ./testdata/simtest/bad`},
		{[]string{badTests, "-run", "("}, `-run "(": error parsing regexp`},
		{[]string{"./testdata/engine-none"}, "./testdata/engine-none: no such directory"},
		{[]string{"."}, "no simulation test (a Test function that calls simtest.Run) in ."},
		{[]string{badTests, "-seed", "1"}, "-seed replays one test; 6 match (narrow it with -run)"},
		{[]string{badTests, "-run", "^TestInSubtest$"}, "TestInSubtest calls simtest.Run in its subtest TestInSubtest/sub: call it from the test function itself"},
		{[]string{"./testdata/simtest/nocompile"}, `x_test.go:11:`},
	} {
		done := make(chan struct{})
		var code int
		var stderr string
		go func() {
			defer close(done)
			code, _, stderr = runCLI(t, append([]string{"test", "-q", "-seeds", "1-2", "-workers", "1"}, tc.args...)...)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			t.Fatalf("seedfall test %q: no exit in 5 minutes", tc.args)
		}
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("seedfall test %q: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestSimtestPasses: the correct test of the same package runs its sweep, -check
// identical, with the package's wrong tests left out by -run.
func TestSimtestPasses(t *testing.T) {
	code, stdout, stderr := runCLI(t, "test", badTests, "-run", "Pings", "-seeds", "1-4", "-check", "-workers", "2", "-q")
	if code != exitPass || !strings.Contains(stdout, "=== TestPings ("+badTests+")") || !strings.Contains(stdout, "every seed ran twice, traces identical") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestSimtestPreflightKept: the fault-free preflight runs once per test and build; a
// -seed replay after it, with the same build, starts at once. A marker that does not
// match the build (another config, node, seedfall or Go) runs it again.
func TestSimtestPreflightKept(t *testing.T) {
	t.Setenv("SEEDFALL_TIMINGS", "1")
	args := []string{"test", badTests, "-run", "^TestPings$", "-seed", "3", "-q"}
	ran := func(stderr string) bool {
		return strings.Contains(stderr, "preflight: ") && strings.Contains(stderr, " of virtual time (")
	}
	kept := func(stderr string) bool { return strings.Contains(stderr, "preflight: passed before with this build") }
	code, stdout, stderr := runCLI(t, args...)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The first run of this test binary may or may not have met a marker (another test
	// of the package ran the preflight already); the second must.
	code, stdout, stderr = runCLI(t, args...)
	if code != exitPass || ran(stderr) || !kept(stderr) {
		t.Fatalf("second replay: exit %d, the preflight ran again or said nothing:\n%s\n%s", code, stdout, stderr)
	}
	// Knowing the build is kept needs the build, not its compilation (seconds for a
	// large test binary): a kept preflight compiles nothing.
	if strings.Contains(stderr, "preflight: built in ") || !strings.Contains(stderr, "nothing compiled") {
		t.Fatalf("second replay: the kept preflight compiled the modules:\n%s", stderr)
	}
	// So is the test binary's description of its tests.
	if !strings.Contains(stderr, "(the description of this build was kept: nothing compiled or run)") {
		t.Fatalf("second replay: the test binary was described again:\n%s", stderr)
	}
	// A marker of another build: the preflight runs, and the marker is renewed.
	markers, _ := filepath.Glob(filepath.Join(cachedir.Dir(), "simtest", "*", "TestPings.json.preflight"))
	if len(markers) == 0 {
		t.Fatal("no preflight marker in the cache")
	}
	for _, m := range markers {
		if err := os.WriteFile(m, []byte("another build"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A kept description of another build: the binary describes its tests again.
	descs, _ := filepath.Glob(filepath.Join(cachedir.Dir(), "simtest", "*", "describe.json.out"))
	if len(descs) == 0 {
		t.Fatal("no kept description in the cache")
	}
	for _, d := range descs {
		if err := os.WriteFile(d, []byte(`{"key": "another build", "decls": []}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr = runCLI(t, args...)
	if code != exitPass || !ran(stderr) || kept(stderr) {
		t.Fatalf("after the build changed: exit %d, the preflight did not run:\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "description of this build was kept") {
		t.Fatalf("after the build changed: the description was taken from another build:\n%s", stderr)
	}
	if code, _, stderr = runCLI(t, args...); code != exitPass || !kept(stderr) {
		t.Fatalf("the marker was not renewed: exit %d\n%s", code, stderr)
	}
}

// TestCISimulationTest: the Action's inputs test and run sweep a simulation test in
// place of a config; the report and the annotations name the test's replay command.
func TestCISimulationTest(t *testing.T) {
	out := t.TempDir()
	t.Setenv("GITHUB_WORKSPACE", "../..") // the repository: annotations name its files
	code, stdout, stderr := runCLI(t, "ci", "-test", "../../examples/kvlog/simtest", "-run", "^TestTornTail$", "-seeds", "1-20", "-mode", "push", "-shrink-budget", "0s", "-out", out)
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if code != exitFail || !strings.Contains(string(md), "seedfall test ../../examples/kvlog/simtest -run '^TestTornTail$' -seed ") ||
		!strings.Contains(stdout, "::error file=examples/kvlog/kvstore/kvstore.go,line=") {
		t.Fatalf("exit %d\n%s\n%s\nreport.md:\n%s", code, stdout, stderr, md)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Several tests sweep in one job, each derived first: a wrong one is refused.
		{[]string{"-test", badTests}, `input test: ./testdata/simtest/bad: TestDuplicateNodes: two nodes are named "a"`},
		{[]string{"-test", badTests, "-mutation", "always"}, `inputs test ./testdata/simtest/bad and run "" match 6 simulation tests (TestDuplicateNodes, TestInSubtest, TestNoWorkload, TestPanicsAtStart, TestPings, TestUnknownNode): input mutation runs on one`},
		{[]string{"-test", badTests, "-run", "Pings", "-config", "x.json"}, "inputs config and test: give one"},
		{[]string{"-run", "Pings"}, "input run: names a simulation test"},
		{[]string{"-test", badTests, "-run", "NoWorkload"}, "TestNoWorkload: no workload"},
	} {
		code, _, stderr := runCLI(t, append([]string{"ci", "-seeds", "1-2", "-out", t.TempDir()}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("ci %q: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRunProgressLines: a long run's progress shows after progressAfter, then, where
// it cannot be redrawn, one line per progressEvery; a short run prints nothing.
func TestRunProgressLines(t *testing.T) {
	var b strings.Builder
	report, done := runProgress(&b, "preflight of TestX")
	for _, s := range []int{1, 2, 4, 8, 13, 15, 24, 25} {
		report(engine.RunProgress{Elapsed: time.Duration(s) * time.Second, VirtualNS: int64(s) * 1e8})
	}
	done()
	want := "preflight of TestX: 4s of wall time, virtual time 400ms\n" +
		"preflight of TestX: 15s of wall time, virtual time 1.5s\n" +
		"preflight of TestX: 25s of wall time, virtual time 2.5s\n"
	if b.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestSimtestJSONWithGoTools: `seedfall test -json` prints go test -json's events, read
// by the real tools: gotestsum counts the tests and the failing seeds' subtests, and
// go-junit-report's XML names the failing seeds with their replay commands.
func TestSimtestJSONWithGoTools(t *testing.T) {
	gotestsum := goTool(t, "gotest.tools/gotestsum@v1.13.0", "gotestsum")
	junit := goTool(t, "github.com/jstemmer/go-junit-report/v2@v2.1.0", "go-junit-report")
	const pkg = "../../examples/kvlog/simtest"
	code, stdout, stderr := runCLI(t, "test", pkg, "-seeds", "25-34", "-workers", "2", "-json")
	if code != exitFail {
		t.Fatalf("exit %d, want 1 (TestTornTail fails)\n%s\n%s", code, stdout, stderr)
	}
	var failing []string
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e testEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a test2json event: %q: %v", l, err)
		}
		if e.Action == "fail" && strings.Contains(e.Test, "/seed=") {
			failing = append(failing, e.Test)
		}
	}
	if len(failing) == 0 {
		t.Fatalf("no failing seed subtest in:\n%s", stdout)
	}
	events := filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(events, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gotestsum, "--format", "testname", "--raw-command", "--", "cat", events).CombinedOutput()
	if err != nil {
		t.Fatalf("gotestsum: %v\n%s", err, out)
	}
	want := fmt.Sprintf("DONE %d tests, %d failures", 2+len(failing), 1+len(failing))
	if !strings.Contains(string(out), want) {
		t.Errorf("gotestsum's summary lacks %q:\n%s", want, out)
	}
	cmd := exec.Command(junit, "-parser", "gojson")
	cmd.Stdin = strings.NewReader(stdout)
	xml, err := cmd.Output()
	if err != nil {
		t.Fatalf("go-junit-report: %v", err)
	}
	for _, f := range failing {
		seed := f[strings.Index(f, "=")+1:]
		for _, w := range []string{`<testcase name="` + f + `"`, "replay: seedfall test " + pkg + " -run '^TestTornTail$' -seed " + seed} {
			if !strings.Contains(string(xml), w) {
				t.Errorf("go-junit-report's XML lacks %q:\n%s", w, xml)
			}
		}
	}
	if !strings.Contains(string(xml), `<testsuite name="`+pkg+`" tests="`+fmt.Sprint(2+len(failing))+`" failures="`+fmt.Sprint(1+len(failing))+`"`) {
		t.Errorf("go-junit-report's counts:\n%s", xml)
	}
}

// goTool is the path of a Go developer's tool: on PATH, in GOPATH/bin, or installed
// now into a temporary GOBIN from the module proxy.
func goTool(t *testing.T, module, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if gp, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gp)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "install", module)
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s: %v\n%s", module, err, out)
	}
	return filepath.Join(bin, name)
}

// TestSimtestTable: a run of several simulation tests ends with a table of each test's
// seeds, failures, distinct failures and time, and a closing line. Of kvlog's seeds
// 28-30 TestTornTail fails one (30; the failing seeds move whenever package simtest
// changes, since the test binary does), and TestTornTailFixed passes all three.
func TestSimtestTable(t *testing.T) {
	code, stdout, stderr := runCLI(t, "test", "../../examples/kvlog/simtest", "-seeds", "28-30", "-workers", "2", "-q")
	if code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, re := range []string{
		`(?m)^test +package +seeds +failed +distinct failures +time`,
		`(?m)^TestTornTail +\.\./\.\./examples/kvlog/simtest +3 +1 +1 +\d`,
		`(?m)^TestTornTailFixed +\.\./\.\./examples/kvlog/simtest +3 +0 +0 +\d`,
		`(?m)^FAIL 2 tests, 6 seeds, 1 failed$`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("stdout lacks %s:\n%s", re, stdout)
		}
	}
}
