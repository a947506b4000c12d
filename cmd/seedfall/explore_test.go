package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// exploreJSON is the part of explore -json the tests read.
type exploreJSON struct {
	Seeds        int `json:"seeds"`
	Failed       int `json:"failed"`
	FirstFailure int `json:"first_failure_run"`
	Corpus       int `json:"corpus"`
	Features     int `json:"features"`
	Plans        []struct {
		Run       int    `json:"run"`
		Seed      uint64 `json:"seed"`
		Signature string `json:"signature"`
		Path      string `json:"path"`
	} `json:"failure_plans"`
	Runs []struct {
		Index  int    `json:"index"`
		Seed   uint64 `json:"seed"`
		Op     string `json:"op"`
		Parent int    `json:"parent"`
		New    int    `json:"new_features"`
	} `json:"runs"`
}

// kvlogExplore is one exploration of kvlog's buggy config (60 runs, explorer seed 1),
// shared by the tests that need it: its text output, and its -json and results file
// from a second, identical exploration.
var kvlogExplore struct {
	once                 sync.Once
	code, jcode          int
	stdout, stderr       string
	sum                  exploreJSON
	results              []map[string]any
	resultLines, jsonOut []string
	plans                map[string][]byte // the saved plans of the -json exploration, by path
}

func exploreKvlog(t *testing.T) {
	t.Helper()
	kvlogExplore.once.Do(func() {
		// Not t.TempDir(): the tests sharing this outlive the first one's directory.
		dir, err := os.MkdirTemp("", "seedfall-explore-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		kvlogExplore.code, kvlogExplore.stdout, kvlogExplore.stderr = runCLI(t, "explore", "-c", kvlogBuggy, "-runs", "60", "-seed", "1",
			"-workers", "2", "-plans", filepath.Join(dir, "plans-text"))
		var out string
		kvlogExplore.jcode, out, _ = runCLI(t, "explore", "-c", kvlogBuggy, "-runs", "60", "-seed", "1",
			"-workers", "2", "-plans", filepath.Join(dir, "plans"), "-json", "-q", "-out", filepath.Join(dir, "r.jsonl"))
		if err := json.Unmarshal([]byte(out), &kvlogExplore.sum); err != nil {
			t.Fatalf("explore -json: %v\n%s", err, out)
		}
		kvlogExplore.resultLines, kvlogExplore.results = readResults(t, filepath.Join(dir, "r.jsonl"))
		kvlogExplore.plans = map[string][]byte{}
		for _, p := range kvlogExplore.sum.Plans {
			b, err := os.ReadFile(p.Path)
			if err != nil {
				t.Fatalf("saved plan: %v", err)
			}
			kvlogExplore.plans[p.Path] = b
		}
	})
}

// TestExploreFindsKvlogBug: 60 runs of exploration find kvlog's lost write, reported as
// run reports it, with a replay command that names the saved plan.
func TestExploreFindsKvlogBug(t *testing.T) {
	exploreKvlog(t)
	e := &kvlogExplore
	if e.code != exitFail {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", e.code, exitFail, e.stdout, e.stderr)
	}
	for _, w := range []string{
		"acknowledged write lost",
		"  faults before the failure (",
		"recovery found a torn tail",
		"explore: 60 runs (explorer seed 1, batch 4), corpus ",
		"first failure: run ",
		"crash-at-op",
	} {
		if !strings.Contains(e.stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, e.stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^FAIL seed \d+ at t=\S+ client#1: acknowledged write lost`).MatchString(e.stdout) {
		t.Errorf("no failure line as run prints it:\n%s", e.stdout)
	}
	if !regexp.MustCompile(`(?m)^  replay: seedfall replay -c \S+ -seed \d+ -faults \S+plans-text/run-\d+-seed-\d+\.faults\.json$`).MatchString(e.stdout) {
		t.Errorf("no replay command with the saved plan:\n%s", e.stdout)
	}
	if !regexp.MustCompile(`(?m)^FAIL \d+ of 60 seeds failed \(1 distinct failure\); \d+ passed`).MatchString(e.stdout) {
		t.Errorf("no sweep summary line:\n%s", e.stdout)
	}
	if !strings.Contains(e.stderr, "/60 seeds, ") || !strings.Contains(e.stderr, "corpus ") {
		t.Errorf("no progress line:\n%s", e.stderr)
	}
	s := e.sum
	if e.jcode != exitFail || s.Seeds != 60 || s.Failed == 0 || s.FirstFailure == 0 || s.Corpus == 0 || s.Features == 0 || len(s.Plans) != s.Failed {
		t.Errorf("json: exit %d, %+v", e.jcode, s)
	}
	if len(e.results) != 60 {
		t.Errorf("results file has %d lines, want 60", len(e.results))
	}
}

// TestExploreFixedPasses is the negative control: the same exploration of the fixed
// server finds nothing and exits 0.
func TestExploreFixedPasses(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, "explore", "-c", kvlogFixed, "-runs", "40", "-seed", "1", "-workers", "2", "-plans", t.TempDir(), "-q")
	if code != exitPass || !strings.Contains(stdout, "ok 40 seeds passed") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestExploreReplaysPlans: every failing run's saved plan, replayed in another process
// with `seedfall replay -faults`, fails the same way with the trace the explorer's
// worker saw.
func TestExploreReplaysPlans(t *testing.T) {
	exploreKvlog(t)
	e := &kvlogExplore
	if len(e.sum.Plans) == 0 {
		t.Fatal("no failure plans")
	}
	mutated := false
	for _, p := range e.sum.Plans[:min(3, len(e.sum.Plans))] {
		res := e.results[p.Run-1]
		if uint64(res["seed"].(float64)) != p.Seed || res["verdict"] != "fail" {
			t.Fatalf("plan %+v: results line %d is %v", p, p.Run, res["verdict"])
		}
		if e.sum.Runs[p.Run-1].Op != "fresh" {
			mutated = true
		}
		path := filepath.Join(t.TempDir(), filepath.Base(p.Path))
		if err := os.WriteFile(path, e.plans[p.Path], 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := selfCLI(t, "replay", "-c", kvlogBuggy, "-seed", strconv.FormatUint(p.Seed, 10), "-faults", path, "-json")
		var r map[string]any
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("replay -json: %v", err)
		}
		fail, _ := r["failure"].(map[string]any)
		if code != exitFail || fail == nil || fail["signature"] != p.Signature || r["trace_hash"] != res["trace_hash"] {
			t.Errorf("replay of %s: exit %d, signature %v (want %s), trace %v (want %v)", p.Path, code, fail["signature"], p.Signature, r["trace_hash"], res["trace_hash"])
		}
	}
	if !mutated {
		t.Logf("the replayed failures all came from fresh runs")
	}
}

// TestExploreIsReproducible: the same explorer seed gives the same runs, with 1 worker
// as with 2; another seed gives others.
func TestExploreIsReproducible(t *testing.T) {
	exploreKvlog(t)
	explore := func(seed string, workers string) (exploreJSON, []string) {
		dir := t.TempDir()
		_, out, stderr := runCLI(t, "explore", "-c", kvlogBuggy, "-runs", "24", "-seed", seed, "-workers", workers,
			"-plans", dir, "-json", "-q", "-out", filepath.Join(dir, "r.jsonl"))
		var s exploreJSON
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("explore -json: %v\n%s", err, stderr)
		}
		lines, _ := readResults(t, filepath.Join(dir, "r.jsonl"))
		for i := range lines {
			lines[i] = withoutWall(t, lines[i])
		}
		return s, lines
	}
	a, ra := explore("5", "1")
	b, rb := explore("5", "2")
	c, _ := explore("6", "2")
	if len(a.Runs) != 24 || !reflect.DeepEqual(a.Runs, b.Runs) {
		t.Errorf("explorer seed 5 with 1 and 2 workers: different runs\n%+v\n%+v", a.Runs, b.Runs)
	}
	if !reflect.DeepEqual(ra, rb) {
		t.Errorf("explorer seed 5 with 1 and 2 workers: different results")
	}
	if reflect.DeepEqual(a.Runs, c.Runs) {
		t.Errorf("explorer seeds 5 and 6 gave the same runs")
	}
	mutations := 0
	for _, r := range a.Runs {
		if r.Op != "fresh" {
			mutations++
		}
	}
	if mutations == 0 {
		t.Errorf("no mutated run in 24: %+v", a.Runs)
	}
	// The first 24 runs of the shared 60-run exploration with explorer seed 1 are those
	// a 24-run exploration with seed 1 makes: the budget only cuts the sequence.
	d, _ := explore("1", "2")
	if !reflect.DeepEqual(d.Runs, kvlogExplore.sum.Runs[:24]) {
		t.Errorf("24-run exploration is not the prefix of the 60-run one")
	}
}

func TestExploreBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero budget", []string{"-runs", "0"}, "-runs 0: want a run budget from 1 to 10000000"},
		{"budget not a number", []string{"-runs", "many"}, `invalid value "many" for flag -runs`},
		{"zero batch", []string{"-batch", "0"}, "-batch 0: want 1 to 1024"},
		{"fresh share", []string{"-fresh", "1.5"}, "-fresh 1.5: want a share in (0, 1]"},
		{"no workers", []string{"-workers", "0"}, "-workers 0: want at least 1"},
		{"negative seed", []string{"-seed", "-3"}, `invalid value "-3" for flag -seed`},
		{"missing config", []string{"-c", filepath.Join(t.TempDir(), "none.json")}, "none.json"},
		{"stray argument", []string{"-runs", "5", "extra"}, `unexpected argument "extra"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"explore"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr lacks %q:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
}

// TestExploreUsesCoverage: with the config's "coverage" field, the covered units of each
// run are features too. kvlog's cover config is its fixed config plus coverage: the
// first batch (fresh seeds, drawn before any result) is the same in both, and the
// exploration with coverage counts many more features.
func TestExploreUsesCoverage(t *testing.T) {
	t.Parallel()
	explore := func(cfg string) exploreJSON {
		_, out, stderr := runCLI(t, "explore", "-c", cfg, "-runs", "8", "-seed", "1", "-workers", "2", "-plans", t.TempDir(), "-json", "-q")
		var s exploreJSON
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("explore -json: %v\n%s", err, stderr)
		}
		return s
	}
	plain := explore(kvlogFixed)
	cover := explore(filepath.Join("..", "..", "examples", "kvlog", "seedfall.cover.json"))
	if len(plain.Runs) != 8 || len(cover.Runs) != 8 {
		t.Fatalf("%d and %d runs, want 8", len(plain.Runs), len(cover.Runs))
	}
	for i := range 4 {
		a, b := plain.Runs[i], cover.Runs[i]
		if a.Seed != b.Seed || a.Op != b.Op {
			t.Fatalf("run %d: %+v without coverage, %+v with", i+1, a, b)
		}
	}
	if cover.Runs[0].New < plain.Runs[0].New+50 {
		t.Errorf("the first run reached %d features with coverage, %d without: want the covered units on top", cover.Runs[0].New, plain.Runs[0].New)
	}
	if cover.Features < plain.Features+50 {
		t.Errorf("%d features with coverage, %d without: want the covered units on top", cover.Features, plain.Features)
	}
}
