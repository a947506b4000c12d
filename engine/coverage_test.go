package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
)

// The coverage guest (testdata/cover): the server's first life writes /marker; a
// later life finds it and runs recoverFromMarker, so that function runs only after a
// crash and a restart. neverCalled runs in no life. The server never exits: every
// incarnation ends in a crash or is killed at the end of the run.

var (
	coverMu   sync.Mutex
	coverSims = map[string]*engine.Sim{}
)

// coverSim prepares testdata/cover with the given faults (JSON), built with coverage.
func coverSim(t *testing.T, faults string) *engine.Sim {
	t.Helper()
	coverMu.Lock()
	defer coverMu.Unlock()
	if s := coverSims[faults]; s != nil {
		return s
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "cover"))
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`{"nodes": [{"name": "server", "pkg": "./server"}], "workload": {"name": "client", "pkg": "./client"},
		"faults": %s, "horizon": "5s", "coverage": {"packages": ["./..."]}}`, faults)
	cfg, err := engine.ParseConfig([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Path = dir, filepath.Join(dir, "seedfall.json")
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	coverSims[faults] = s
	return s
}

const (
	crashFaults   = `{"crash_per_sec": 2, "crash_mid_op": 0, "restart_delay": "50ms"}`
	noCrashFaults = `{}`
)

func unreachedNames(t *testing.T, c *coverage.Coverage) map[string]bool {
	t.Helper()
	rep, err := c.Report()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, u := range rep.Unreached {
		out[u.Func] = true
	}
	return out
}

// TestCoverageAfterCrashAndRestart: a function that only a restart after a crash runs
// is counted, one that never runs is not, and the counters of incarnations that end
// in a crash (the first life) or at the end of the run count too. The control without
// crashes does not reach the recovery path.
func TestCoverageAfterCrashAndRestart(t *testing.T) {
	s := coverSim(t, crashFaults)
	r := runSeed(t, s, 1, nil)
	crashes := 0
	for _, f := range r.Faults {
		if f.Kind == engine.FaultCrash && f.Node == "server" {
			crashes++
		}
	}
	if crashes == 0 || r.Stats.Incarnations < 3 {
		t.Fatalf("seed 1: %d crashes, %d incarnations: the test needs a restart", crashes, r.Stats.Incarnations)
	}
	if r.Coverage == nil || len(r.Coverage.Binaries) != 2 {
		t.Fatalf("coverage = %+v, want two binaries (server, client)", r.Coverage)
	}
	un := unreachedNames(t, r.Coverage)
	for _, f := range []string{"recoverFromMarker", "firstLife", "main"} {
		if un[f] {
			t.Errorf("%s ran but is listed as unreached", f)
		}
	}
	if !un["neverCalled"] {
		t.Errorf("neverCalled never ran but is not listed as unreached (unreached: %v)", un)
	}
	for _, line := range r.Trace {
		if strings.Contains(line, "GOCOVERDIR") || strings.Contains(line, "coverage") {
			t.Errorf("coverage leaked into the trace: %q", line)
		}
	}

	// The control: no crash, one life, killed at the end of the run.
	c := runSeed(t, coverSim(t, noCrashFaults), 1, nil)
	if c.Stats.Incarnations != 2 {
		t.Fatalf("control: %d incarnations, want 2", c.Stats.Incarnations)
	}
	un = unreachedNames(t, c.Coverage)
	if !un["recoverFromMarker"] {
		t.Errorf("control: recoverFromMarker is counted without any crash")
	}
	if un["firstLife"] {
		t.Errorf("control: firstLife of the incarnation killed at the end of the run is not counted")
	}
	if len(c.Coverage.Units()) >= len(r.Coverage.Units()) {
		t.Errorf("control reached %d units, the crash run %d: want fewer", len(c.Coverage.Units()), len(r.Coverage.Units()))
	}
}

// TestCoverageDeterministic: with coverage on, -check finds the two runs identical,
// and two runs of a seed have the same coverage; merging is the sum.
func TestCoverageDeterministic(t *testing.T) {
	s := coverSim(t, crashFaults)
	for seed := uint64(1); seed <= 3; seed++ {
		r := s.Run(context.Background(), seed, engine.RunOptions{Check: true})
		if r.Divergence != nil || r.Verdict == engine.VerdictFail {
			t.Fatalf("seed %d with coverage: %s %+v", seed, r, r.Divergence)
		}
		again := s.Run(context.Background(), seed, engine.RunOptions{})
		if !reflect.DeepEqual(r.Coverage, again.Coverage) {
			t.Errorf("seed %d: two runs have different coverage", seed)
		}
	}
	a := s.Run(context.Background(), 1, engine.RunOptions{})
	m := coverage.Merge(a.Coverage, a.Coverage, nil)
	if !reflect.DeepEqual(m.Units(), a.Coverage.Units()) {
		t.Errorf("merging a coverage with itself changed its units")
	}
	f0, f1 := a.Coverage.Binaries[1].Funcs[0], m.Binaries[1].Funcs[0]
	for i := range f0.Counters {
		if f1.Counters[i] != 2*f0.Counters[i] {
			t.Fatalf("merged counters %v, want twice %v", f1.Counters, f0.Counters)
		}
	}
	if coverage.Merge(nil, nil) != nil {
		t.Errorf("merging no coverage is not nil")
	}
}

// TestCoverageGoTool: the directory coverage.WriteDir writes is Go's format: go tool
// covdata reads it, and its per-function figures agree with the run.
func TestCoverageGoTool(t *testing.T) {
	s := coverSim(t, crashFaults)
	var sum coverage.Sum
	for seed := uint64(1); seed <= 2; seed++ {
		sum.Add(runSeed(t, s, seed, nil).Coverage)
	}
	dir := t.TempDir()
	if err := coverage.WriteDir(dir, sum.Coverage()); err != nil {
		t.Fatal(err)
	}
	goTool := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"tool", "covdata"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool covdata %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	pct := goTool("percent", "-i", dir)
	if !regexp.MustCompile(`cover/server\s+coverage: \d+\.\d% of statements`).MatchString(pct) {
		t.Errorf("covdata percent:\n%s", pct)
	}
	fn := goTool("func", "-i", dir)
	for re, what := range map[string]string{
		`recoverFromMarker\s+100\.0%`: "the recovery path as run",
		`neverCalled\s+0\.0%`:         "the function that never ran as not run",
	} {
		if !regexp.MustCompile(re).MatchString(fn) {
			t.Errorf("covdata func does not show %s (%s):\n%s", what, re, fn)
		}
	}
	// Our own percentages agree with the tool's.
	rep, err := sum.Coverage().Report()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Packages {
		want := fmt.Sprintf(`%s\s+coverage: %.1f%% of statements`, regexp.QuoteMeta(p.Path), p.Percent)
		if !regexp.MustCompile(want).MatchString(pct) {
			t.Errorf("report says %q; covdata percent:\n%s", want, pct)
		}
	}
	prof := filepath.Join(t.TempDir(), "cover.out")
	goTool("textfmt", "-i", dir, "-o", prof)
	if b, err := os.ReadFile(prof); err != nil || !strings.HasPrefix(string(b), "mode: count\n") {
		t.Errorf("textfmt profile: %v %.40q", err, b)
	}
}

// TestCoverageConfigErrors: a bad coverage field is an error naming it.
func TestCoverageConfigErrors(t *testing.T) {
	ok := `"workload": {"name": "client", "pkg": "./client"}`
	for _, c := range []struct{ text, want string }{
		{`{` + ok + `, "coverage": {}}`, "coverage.packages"},
		{`{` + ok + `, "coverage": {"packages": []}}`, "coverage.packages"},
		{`{` + ok + `, "coverage": {"packages": ["./a, ./b"]}}`, "coverage.packages[0]"},
		{`{` + ok + `, "coverage": {"packages": ["./...", ""]}}`, "coverage.packages[1]"},
		{`{` + ok + `, "coverage": {"packages": ["-race"]}}`, "coverage.packages[0]"},
		{`{` + ok + `, "coverage": {"pkgs": ["./..."]}}`, "coverage.pkgs"},
		{`{` + ok + `, "coverage": {"packages": "./..."}}`, "coverage.packages"},
	} {
		_, err := engine.ParseConfig([]byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.text, err, c.want)
		}
	}
	cfg, err := engine.ParseConfig([]byte(`{` + ok + `, "coverage": {"packages": ["./...", "github.com/tidwall/wal/..."]}}`))
	if err != nil || cfg.Coverage == nil || len(cfg.Coverage.Packages) != 2 {
		t.Errorf("good coverage field: %v %+v", err, cfg)
	}
}

// TestCoveragePatternMatchesNothing: a coverage pattern that matches no package of any
// node is an error naming it, not a sweep without coverage; one that matches the
// packages of some nodes only is fine.
func TestCoveragePatternMatchesNothing(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "cover"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pkgs, want string
	}{
		{`["./...", "github.com/no/such/module/..."]`, `coverage.packages[1]: "github.com/no/such/module/..." matches no package`},
		{`["./server"]`, ""},
		{`["./lib"]`, ""},
	} {
		cfg, err := engine.ParseConfig([]byte(`{"nodes": [{"name": "server", "pkg": "./server"}], "workload": {"name": "client", "pkg": "./client"},
			"coverage": {"packages": ` + c.pkgs + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Dir, cfg.Path = dir, filepath.Join(dir, "inline.json")
		s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.pkgs, err)
				continue
			}
			// The named packages are counted even when the pattern does not name the
			// main package (the hook that registers the counters runs from it).
			r := s.Run(context.Background(), 1, engine.RunOptions{})
			rep, err := r.Coverage.Report()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimPrefix(strings.Trim(c.pkgs, `[]"`), ".")
			found := false
			for _, p := range rep.Packages {
				if strings.HasSuffix(p.Path, "/cover"+want) {
					found = p.Covered > 0
				}
			}
			if !found {
				t.Errorf("%s: no statement of the package counted: %+v", c.pkgs, rep.Packages)
			}
			s.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.pkgs, err, c.want)
		}
		if s != nil {
			s.Close()
		}
	}
}
