package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/explore"
)

// exploreSummary is the -json output of explore: the sweep summary of its runs (as run
// prints it) and what the exploration did.
type exploreSummary struct {
	cli.SweepSummary
	ExploreSeed uint64 `json:"explore_seed"`
	Batch       int    `json:"batch"`
	// FirstFailure is the 1-based index of the first failing run (0: none).
	FirstFailure   int    `json:"first_failure_run"`
	FirstFailureOp string `json:"first_failure_op,omitempty"`
	Corpus         int    `json:"corpus"`
	// Crashes are the crash-state reports of the first corpus runs (-crashes).
	Crashes      []*cli.CrashesReport       `json:"crashes,omitempty"`
	CrashFailing int                        `json:"crash_failing,omitempty"`
	Features     int                        `json:"features"`
	Operators    map[string]*explore.OpStat `json:"operators"`
	Plans        []explorePlan              `json:"failure_plans"`
	Runs         []explore.Run              `json:"runs,omitempty"`
}

// explorePlan is a failing run's saved plan: `seedfall replay -seed Seed -faults Path`
// reproduces it.
type explorePlan struct {
	Run       int    `json:"run"`
	Seed      uint64 `json:"seed"`
	Signature string `json:"signature"`
	Path      string `json:"path"`
}

func cmdExplore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("explore", stderr)
	cfgPath := fs.String("c", "seedfall.json", "config `file`")
	tf := addTestFlags(fs)
	runs := fs.Int("runs", 200, "run budget")
	seed := fs.Uint64("seed", 1, "seed of the explorer's own choices (same seed, same runs)")
	batch := fs.Int("batch", 4, "runs derived at a time from the corpus and run in parallel (part of the sequence, unlike -workers)")
	fresh := fs.Float64("fresh", 0.25, "share of runs that are new seeds rather than mutations of the corpus")
	stopAt := fs.Bool("stop", false, "stop after the batch of the first failing run")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel worker processes")
	jsonOut := fs.Bool("json", false, "print a JSON summary instead of text")
	out := fs.String("out", "", "write every run's result as JSON lines to `file`")
	plans := fs.String("plans", "explore-plans", "`dir` for the fault plans of failing runs (replay them with -faults)")
	quiet := fs.Bool("q", false, "no progress output")
	crashes := fs.Int("crashes", 0, "then run `seedfall crashes` on the first `K` corpus runs (their seeds and plans); 0: no")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if code := tf.resolve(ctx, "explore", cfgPath, stderr); code != 0 {
		return code
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "seedfall explore: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case *runs < 1 || *runs > 10_000_000:
		return bad("-runs %d: want a run budget from 1 to 10000000", *runs)
	case *batch < 1 || *batch > 1024:
		return bad("-batch %d: want 1 to 1024 runs at a time", *batch)
	case !(*fresh > 0 && *fresh <= 1):
		return bad("-fresh %v: want a share in (0, 1]", *fresh)
	case *workers < 1:
		return bad("-workers %d: want at least 1", *workers)
	case *plans == "":
		return bad("-plans: want a directory for the plans of failing runs")
	case *crashes < 0:
		return bad("-crashes %d: want how many corpus runs to crash systematically (0: none)", *crashes)
	}
	sim, code := loadAndPrepare(ctx, *cfgPath, stderr, *quiet)
	if sim == nil {
		return code
	}
	defer sim.Close()
	rn, err := cli.NewPool(sim, *workers, "")
	if err != nil {
		return bad("%v", err)
	}
	defer rn.Close()
	t0 := time.Now()
	tty := !*quiet && cli.IsTerminal(stderr)
	lastPrint := time.Now()
	progress := func(r explore.Run, st *explore.State) {
		if *quiet {
			return
		}
		line := fmt.Sprintf("%s, corpus %d, %d features", cli.ProgressLine(st.Runs, st.Failed, *runs, time.Since(t0)), len(st.Corpus), len(st.Features))
		if tty {
			fmt.Fprintf(stderr, "\r\033[K%s", line)
			if st.Runs == *runs {
				fmt.Fprintln(stderr)
			}
		} else if time.Since(lastPrint) > 10*time.Second || st.Runs == *runs {
			lastPrint = time.Now()
			fmt.Fprintln(stderr, line)
		}
	}
	all, st, err := explore.Explore(ctx, explore.Options{
		Runs: *runs, Seed: *seed, Batch: *batch, Workers: *workers, Fresh: *fresh,
		StopAtFailure: *stopAt, Run: rn.Run, Sim: sim, OnRun: progress,
	})
	if err != nil && len(all) == 0 {
		return bad("%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "seedfall explore: stopped early: %v (%d of %d runs ran)\n", err, len(all), *runs)
	}
	results := make([]*engine.Result, len(all))
	for i, r := range all {
		results[i] = r.Result
	}
	sum := exploreSummary{SweepSummary: cli.Summarize(*cfgPath, results), ExploreSeed: *seed, Batch: *batch,
		FirstFailure: st.FirstFailure, Corpus: len(st.Corpus), Features: len(st.Features), Operators: st.OpStats}
	sum.WallSec = time.Since(t0).Seconds()
	if st.FirstFailure > 0 {
		sum.FirstFailureOp = all[st.FirstFailure-1].Op
	}
	prov := sim.Provenance(*cfgPath)
	// Every failing run's plan is saved: the faults it applied, which replay it exactly
	// (for a fresh run as for a mutated one).
	planOf := map[*engine.Result]string{}
	for _, r := range all {
		res := r.Result
		if !res.Failed() || res.Verdict == engine.VerdictError {
			continue
		}
		if err := os.MkdirAll(*plans, 0o755); err != nil {
			return bad("-plans: %v", err)
		}
		p := filepath.Join(*plans, fmt.Sprintf("run-%d-seed-%d.faults.json", r.Index, r.Seed))
		if err := cli.SavePlan(p, &engine.FaultPlan{Seed: r.Seed, Faults: res.Faults, Swarm: res.Swarm, Provenance: prov}); err != nil {
			return bad("-plans: %v", err)
		}
		planOf[res] = p
		sig := ""
		if res.Failure != nil {
			sig = res.Failure.Signature
		}
		sum.Plans = append(sum.Plans, explorePlan{Run: r.Index, Seed: r.Seed, Signature: sig, Path: p})
	}
	if *out != "" {
		for _, r := range results {
			r.Provenance = prov
		}
		if err := writeResults(*out, results); err != nil {
			return bad("-out: %v", err)
		}
		sum.Results = *out
	}
	// The crash-state stage: every crash point of the first corpus runs.
	for i, e := range st.Corpus {
		if i == *crashes || ctx.Err() != nil {
			break
		}
		dir := filepath.Join(*plans, fmt.Sprintf("crashes-corpus-%d", i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return bad("-plans: %v", err)
		}
		var progress io.Writer
		if !*quiet {
			progress = stderr
		}
		rep, cerr := cli.RunCrashes(ctx, cli.CrashesSpec{Sim: sim, Config: *cfgPath, Seed: e.Seed,
			CrashStatesOptions: engineapi.CrashStatesOptions{Plan: &engine.FaultPlan{Seed: e.Seed, Faults: e.Faults}},
			RecheckNS:          -1, Workers: *workers, Pool: rn, OutDir: dir, Progress: progress})
		if cerr != nil {
			fmt.Fprintf(stderr, "seedfall explore: crashes of corpus run %d: %v\n", i+1, cerr)
			err = cerr
			break
		}
		sum.Crashes = append(sum.Crashes, rep)
		sum.CrashFailing += rep.Failing
	}
	failed := sum.Failed+sum.Watchdog+sum.Errors > 0 || len(sum.PropFails) > 0 || sum.CrashFailing > 0
	if *jsonOut {
		sum.Runs = all
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(sum)
	} else {
		printSweepReplay(stdout, sum.SweepSummary, *cfgPath, func(r *engine.Result) string {
			if p := planOf[r]; p != "" {
				return " -faults " + p
			}
			return ""
		})
		printExplore(stdout, sum, all)
		for _, rep := range sum.Crashes {
			fmt.Fprintln(stdout)
			printCrashes(stdout, rep)
		}
	}
	if !*quiet {
		fmt.Fprintf(stderr, "%d runs in %.1fs (%.1f runs/s)\n", len(all), sum.WallSec, float64(len(all))/sum.WallSec)
	}
	if err != nil {
		return exitUsage
	}
	if failed {
		return exitFail
	}
	return exitPass
}

// printExplore prints what the exploration did: its corpus, features, the first
// failure and what each operator contributed.
func printExplore(w io.Writer, s exploreSummary, all []explore.Run) {
	fmt.Fprintf(w, "explore: %s (explorer seed %d, batch %d), corpus %s, %s\n",
		plural(len(all), "run", "runs"), s.ExploreSeed, s.Batch, plural(s.Corpus, "run", "runs"), plural(s.Features, "feature", "features"))
	if s.FirstFailure > 0 {
		r := all[s.FirstFailure-1]
		from := ""
		if r.Parent > 0 {
			from = fmt.Sprintf(" of run %d", r.Parent)
		}
		fmt.Fprintf(w, "first failure: run %d (%s%s)\n", s.FirstFailure, r.Op, from)
	}
	fmt.Fprintf(w, "%-16s %6s %6s %6s\n", "operator", "runs", "new", "failed")
	for _, name := range sortedKeys(s.Operators) {
		o := s.Operators[name]
		fmt.Fprintf(w, "%-16s %6d %6d %6d\n", name, o.Runs, o.New, o.Fail)
	}
}
