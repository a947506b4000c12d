package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchTarget is one system of the explore-versus-random benchmark.
type benchTarget struct {
	name, dir, config string
	budget            int // runs per explorer seed and per random window
}

var benchTargets = []benchTarget{
	{"kvlog", "kvlog", "seedfall.json", 200},
	{"tidwall-wal", "tidwall-wal", "tidwall.json", 400},
	{"rosedb", "rosedb", "rosedb.json", 400},
	{"buntdb shrink", "buntdb", "seedfall.shrink.json", 200},
	{"raft strict snapshot", "raft", "strict.lin.json", 30},
	{"NATS meta.sum", "nats", "seedfall.always.json", 60},
}

// benchTrials is the number of explorer seeds and of random windows.
const benchTrials = 10

// TestExploreBenchmark measures runs to the first failure, `seedfall explore` (explorer
// seeds 1-10) against plain sweeps of seeds in order (10 windows of the same budget,
// starting at 1, 1+budget, 1+2·budget, …), and prints the BENCHMARKS.md table. It takes
// long (the NATS and raft rows most): it runs only with SEEDFALL_EXPLORE_BENCH=1.
// SEEDFALL_EXPLORE_BENCH_TARGETS selects rows by name prefix ("kvlog,tidwall");
// SEEDFALL_EXPLORE_BENCH_OUT writes the table to a file too.
func TestExploreBenchmark(t *testing.T) {
	if os.Getenv("SEEDFALL_EXPLORE_BENCH") != "1" {
		t.Skip("set SEEDFALL_EXPLORE_BENCH=1 to measure explore against random sweeps (takes long)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var sel []string
	if s := os.Getenv("SEEDFALL_EXPLORE_BENCH_TARGETS"); s != "" {
		sel = strings.Split(s, ",")
	}
	var rows []string
	for _, tg := range benchTargets {
		if len(sel) > 0 && !hasPrefixAny(tg.name, sel) {
			continue
		}
		start := time.Now()
		rnd, rndSig := benchRandom(t, exe, tg)
		exp, expSig := benchExplore(t, exe, tg)
		row := fmt.Sprintf("| %s | `%s` | %d | %s | %s | %s | %s | %s | %s |", tg.name, tg.config, tg.budget,
			fmtRuns(rnd, tg.budget), fmtMedian(rnd, tg.budget), fmtRuns(exp, tg.budget), fmtMedian(exp, tg.budget),
			fmtRatio(rnd, exp, tg.budget), sigNote(rndSig, expSig))
		t.Logf("%s (%s)", row, time.Since(start).Round(time.Second))
		rows = append(rows, row)
	}
	table := "| system | config | budget (runs) | random: runs to first failure, 10 windows | random median | explore: runs to first failure, explorer seeds 1-10 | explore median | random median / explore median | failures found |\n" +
		"|---|---|---|---|---|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	fmt.Print(table)
	if p := os.Getenv("SEEDFALL_EXPLORE_BENCH_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func hasPrefixAny(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, strings.TrimSpace(p)) {
			return true
		}
	}
	return false
}

// benchCLI runs the seedfall command (this test binary, see TestMain) inside an
// example's directory and decodes its -json output into out.
func benchCLI(t *testing.T, exe, dir string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = filepath.Join("..", "..", "examples", dir)
	cmd.Env = append(os.Environ(), "SEEDFALL_AS_CLI=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == exitFail) {
		t.Fatalf("seedfall %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("seedfall %s: bad JSON: %v\n%s", strings.Join(args, " "), err, b)
	}
}

type benchSweep struct {
	Signatures []struct {
		Signature string   `json:"signature"`
		Reason    string   `json:"reason"`
		Seeds     []uint64 `json:"seeds"`
	} `json:"signatures"`
}

// benchRandom returns, per window, the runs to the first failure of a sweep of seeds in
// order from the window's start (0: none within the budget), and the failures' reasons.
// The windows advance together in rounds of a few seeds each, one `seedfall run` per
// round, and a window stops at its first failure.
func benchRandom(t *testing.T, exe string, tg benchTarget) ([]int, map[string]string) {
	res := make([]int, benchTrials)
	done := make([]bool, benchTrials)
	sigs := map[string]string{}
	chunk := 10
	for at := 0; at < tg.budget; at += chunk {
		n := min(chunk, tg.budget-at)
		var spec []string
		for i := range benchTrials {
			if !done[i] {
				lo := uint64(1 + i*tg.budget + at)
				spec = append(spec, fmt.Sprintf("%d-%d", lo, lo+uint64(n)-1))
			}
		}
		if len(spec) == 0 {
			break
		}
		var s benchSweep
		benchCLI(t, exe, tg.dir, &s, "run", "-c", tg.config, "-seeds", strings.Join(spec, ","), "-json", "-q", "-workers", "2")
		for i := range benchTrials {
			if done[i] {
				continue
			}
			lo := uint64(1 + i*tg.budget + at)
			first := uint64(math.MaxUint64)
			for _, g := range s.Signatures {
				for _, seed := range g.Seeds {
					if seed >= lo && seed < lo+uint64(n) && seed < first {
						first = seed
						sigs[g.Signature] = g.Reason
					}
				}
			}
			if first != math.MaxUint64 {
				done[i] = true
				res[i] = int(first-uint64(1+i*tg.budget)) + 1
			}
		}
		chunk = min(chunk*2, 80)
	}
	return res, sigs
}

type benchExploreOut struct {
	FirstFailure int `json:"first_failure_run"`
	Signatures   []struct {
		Signature string `json:"signature"`
		Reason    string `json:"reason"`
	} `json:"signatures"`
	Plans []struct {
		Run       int    `json:"run"`
		Signature string `json:"signature"`
	} `json:"failure_plans"`
}

// benchExplore returns, per explorer seed, the runs to the first failure (0: none
// within the budget), and the first failures' reasons.
func benchExplore(t *testing.T, exe string, tg benchTarget) ([]int, map[string]string) {
	res := make([]int, benchTrials)
	sigs := map[string]string{}
	plans := t.TempDir()
	for i := range benchTrials {
		var o benchExploreOut
		benchCLI(t, exe, tg.dir, &o, "explore", "-c", tg.config, "-runs", strconv.Itoa(tg.budget), "-seed", strconv.Itoa(i+1),
			"-stop", "-json", "-q", "-workers", "2", "-plans", plans)
		res[i] = o.FirstFailure
		for _, p := range o.Plans {
			if p.Run == o.FirstFailure {
				for _, g := range o.Signatures {
					if g.Signature == p.Signature {
						sigs[g.Signature] = g.Reason
					}
				}
			}
		}
	}
	return res, sigs
}

func fmtRuns(rs []int, budget int) string {
	var out []string
	for _, r := range rs {
		if r == 0 {
			out = append(out, fmt.Sprintf(">%d", budget))
		} else {
			out = append(out, strconv.Itoa(r))
		}
	}
	return strings.Join(out, " ")
}

// median is the median of the runs to the first failure, a window without one counting
// as more than the budget (+Inf).
func median(rs []int) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = float64(r)
		if r == 0 {
			v[i] = math.Inf(1)
		}
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func fmtMedian(rs []int, budget int) string {
	m := median(rs)
	if math.IsInf(m, 1) {
		return fmt.Sprintf("not found within %d", budget)
	}
	return strconv.FormatFloat(m, 'f', -1, 64)
}

func fmtRatio(rnd, exp []int, budget int) string {
	a, b := median(rnd), median(exp)
	switch {
	case math.IsInf(a, 1) && math.IsInf(b, 1):
		return "neither found it"
	case math.IsInf(a, 1):
		return fmt.Sprintf("> %.1f× (random: none within %d)", float64(budget)/b, budget)
	case math.IsInf(b, 1):
		return fmt.Sprintf("< %.2f× (explore: none within %d)", a/float64(budget), budget)
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func sigNote(rnd, exp map[string]string) string {
	var parts []string
	for _, side := range []struct {
		name string
		m    map[string]string
	}{{"random", rnd}, {"explore", exp}} {
		for _, k := range sortedKeys(side.m) {
			parts = append(parts, fmt.Sprintf("%s: %s %q", side.name, k, clipReason(side.m[k])))
		}
	}
	return strings.Join(parts, "; ")
}

func clipReason(s string) string {
	if len(s) > 70 {
		return s[:70] + "…"
	}
	return s
}
