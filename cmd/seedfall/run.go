package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/seedfall/seedfall/ci"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/seedspec"
	"github.com/seedfall/seedfall/internal/worker"
	"github.com/seedfall/seedfall/report"
)

func propertyRows(ps []engine.PropertySummary) []report.Property { return report.Properties(ps) }

// printSweep prints failures, the property table and the summary line; it returns the
// exit code.
func printSweep(w io.Writer, s cli.SweepSummary, cfgArg string) int {
	return printSweepReplay(w, s, cfgArg, nil)
}

// seedList is seeds for a message: the first 12, then how many more.
func seedList(seeds []uint64) string {
	shown, more := seeds, ""
	if len(shown) > 12 {
		more = fmt.Sprintf(" (+%d more)", len(shown)-12)
		shown = shown[:12]
	}
	ss := make([]string, len(shown))
	for i, x := range shown {
		ss[i] = fmt.Sprint(x)
	}
	return strings.Join(ss, ", ") + more
}

// printSweepReplay is printSweep whose failures' replay commands get replayExtra(r) appended
// (" -faults plan.json" for a run that replayed a plan); replayExtra may be nil.
func printSweepReplay(w io.Writer, s cli.SweepSummary, cfgArg string, replayExtra func(*engine.Result) string) int {
	for _, g := range s.Signatures {
		more := ""
		if replayExtra != nil {
			more = replayExtra(g.First)
		}
		printFailure(w, g.First, cfgArg, more)
		if len(g.Seeds) > 1 {
			fmt.Fprintf(w, "  same failure (%s) on %s: %s\n", g.Signature, plural(len(g.Seeds), "seed", "seeds"), seedList(g.Seeds))
		}
		fmt.Fprintln(w)
	}
	// Seeds the tool could not run are not failures of the system (cli.GroupFailures):
	// one line per message.
	for _, e := range s.CouldNotRun {
		fmt.Fprintf(w, "ERROR could not run %s (%s): %s\n\n", plural(len(e.Seeds), "seed", "seeds"), seedList(e.Seeds), e.Error)
	}
	if len(s.Properties) > 0 {
		report.PropertyTable(w, propertyRows(s.Properties))
		fmt.Fprintln(w)
	}
	if s.Coverage != nil {
		for _, l := range cli.CoverageLines(s.Coverage) {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
	}
	for _, pf := range s.PropFails {
		fmt.Fprintf(w, "FAIL property: %s\n", pf)
	}
	if s.Checked {
		if s.Diverged == 0 {
			fmt.Fprintf(w, "every seed ran twice, traces identical\n")
		} else {
			fmt.Fprintf(w, "NONDETERMINISM: %s whose two runs differ\n", plural(s.Diverged, "seed", "seeds"))
		}
	}
	if s.LinUnknown > 0 {
		fmt.Fprintf(w, "linearizability: %s where the checker ran out of its budget (unknown, not counted as passes of the check)\n", plural(s.LinUnknown, "seed", "seeds"))
	}
	if s.FailStopRestarts > 0 {
		fmt.Fprintf(w, "fail-stop: %s of nodes that exited on their own (on_exit restart), in %s\n",
			plural(s.FailStopRestarts, "restart", "restarts"), plural(s.FailStopSeeds, "seed", "seeds"))
	}
	bad := s.Failed + s.Watchdog + s.Errors
	extra := ""
	if s.Liveness > 0 {
		extra += fmt.Sprintf(", %d never finished (liveness)", s.Liveness)
	}
	if s.Watchdog > 0 {
		extra += fmt.Sprintf(", %d stopped by the watchdog", s.Watchdog)
	}
	if s.Errors > 0 {
		extra += fmt.Sprintf(", %d could not run", s.Errors)
	}
	props := ""
	if n := len(s.PropFails); n > 0 {
		props = fmt.Sprintf("; %s", plural(n, "property failed", "properties failed"))
	}
	switch {
	case bad == 0 && props == "":
		fmt.Fprintf(w, "ok %s passed (%d hit the time horizon)\n", plural(s.Passed, "seed", "seeds"), s.Horizon)
	case bad == 0:
		// Every seed passed on its own, but the sweep's properties did not hold: one
		// verdict, and it is the exit code's.
		fmt.Fprintf(w, "FAIL %s, although every seed passed (%d hit the time horizon)\n",
			plural(len(s.PropFails), "property failed", "properties failed"), s.Horizon)
	default:
		fmt.Fprintf(w, "FAIL %d of %s failed (%s)%s%s; %d passed (%d hit the time horizon)\n",
			bad, plural(s.Seeds, "seed", "seeds"), plural(len(s.Signatures), "distinct failure", "distinct failures"), extra, props, s.Passed, s.Horizon)
	}
	if bad > 0 || len(s.PropFails) > 0 {
		return exitFail
	}
	return exitPass
}

// writeResults writes results as JSON lines, with the one results writer
// (ci.WriteResults) that `seedfall ci` uses too.
func writeResults(path string, results []*engine.Result) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	rs := make([]engine.Result, len(results))
	for i, r := range results {
		rs[i] = *r
	}
	if err := ci.WriteResults(f, rs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", stderr)
	cfgPath := fs.String("c", "seedfall.json", "config `file`")
	seedSpec := fs.String("seeds", "1-100", "seeds to run: 1-1000, 7, 1-5,9")
	check := fs.Bool("check", false, "run every seed twice and compare traces line by line")
	jsonOut := fs.Bool("json", false, "print a JSON summary instead of text")
	out := fs.String("out", "", "write results as JSON lines to `file`")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel workers")
	shard := fs.String("shard", "", "run shard `i/n` of the seeds (for CI matrices)")
	inproc := fs.Bool("inproc", false, "run seeds in this process instead of worker processes (no protection against guests that spin)")
	mutation := fs.String("mutation", "", "run under a durability mutation of the simulated OS")
	quiet := fs.Bool("q", false, "no progress output")
	stopOnFail := fs.Bool("stop-on-fail", false, "stop at the first failing seed (with -workers 1: exactly the seeds up to it); the summary gives its position in the seed list")
	coverDir := fs.String("cover", "", "write Go's coverage data of the sweep to `dir` (needs the config's \"coverage\" field)")
	upgradeFrom := upgradeFromFlag(fs)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if err := engineapi.CheckMutation(*mutation); err != nil {
		fmt.Fprintf(stderr, "seedfall run: -mutation: %v\n", err)
		return exitUsage
	}
	seeds, err := seedspec.Parse(*seedSpec)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall run: -%v\n", err)
		return exitUsage
	}
	if *shard != "" {
		i, n, err := seedspec.ParseShard(*shard)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall run: -shard: %v\n", err)
			return exitUsage
		}
		seeds = seedspec.Shard(seeds, i, n)
	}
	sim, code := loadAndPrepareFrom(ctx, *cfgPath, *upgradeFrom, stderr, *quiet)
	if sim == nil {
		return code
	}
	defer sim.Close()
	var covSum *coverage.Sum
	if sim.Config().Coverage != nil {
		covSum = &coverage.Sum{}
	} else if *coverDir != "" {
		fmt.Fprintf(stderr, "seedfall run: -cover: %s has no \"coverage\" field: add e.g. \"coverage\": {\"packages\": [\"./...\"]}\n", *cfgPath)
		return exitUsage
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	outDir := ""
	if *out != "" {
		outDir = filepath.Dir(*out)
	}
	t0 := time.Now()
	results, err := cli.Sweep(ctx, cli.SweepSpec{Sim: sim, Seeds: seeds, Check: *check, Mutation: *mutation, Workers: *workers, InProc: *inproc, Progress: progress, OutDir: outDir,
		Coverage: covSum, KeepCoverage: *out != "", StopOnFail: *stopOnFail})
	if err != nil && len(results) == 0 {
		fmt.Fprintf(stderr, "seedfall run: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "seedfall run: stopped early: %v (%d of %d seeds ran)\n", err, len(results), len(seeds))
	}
	sum := cli.Summarize(*cfgPath, results)
	sum.WallSec = time.Since(t0).Seconds()
	if *stopOnFail {
		sum.FirstFailureRun = firstFailureRun(seeds, results)
	}
	if c := covSum.Coverage(); c != nil {
		if *coverDir != "" {
			if err := coverage.WriteDir(*coverDir, c); err != nil {
				fmt.Fprintf(stderr, "seedfall run: -cover: %v\n", err)
				return exitUsage
			}
			if _, err := engineapi.WriteCoverageProfile(*coverDir, sim.Config()); err != nil {
				fmt.Fprintf(stderr, "seedfall run: -cover: %v\n", err)
				return exitUsage
			}
		}
		cs, err := cli.SummarizeCoverage(c)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall run: coverage: %v\n", err)
			return exitUsage
		}
		cs.Dir = *coverDir
		sum.Coverage = cs
	}
	if *out != "" {
		prov := sim.Provenance(*cfgPath)
		if wd, err := os.Getwd(); err == nil {
			prov.WorkDir = wd
		}
		if *upgradeFrom != "" {
			// seedfall report shows it, as the Action's report does.
			prov.Upgrade = ci.UpgradeLine(*upgradeFrom, "this build", upgradeNodes(sim.Config()))
			prov.UpgradeFrom = *upgradeFrom
		}
		for _, r := range results {
			r.Provenance = prov
		}
		if err := writeResults(*out, results); err != nil {
			fmt.Fprintf(stderr, "seedfall run: -out: %v\n", err)
			return exitUsage
		}
		sum.Results = *out
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(sum)
		if sum.Failed+sum.Watchdog+sum.Errors > 0 || len(sum.PropFails) > 0 {
			return exitFail
		}
		return exitPass
	}
	code = printSweepReplay(stdout, sum, *cfgPath, func(*engine.Result) string { return upgradeExtra(*upgradeFrom) })
	if *stopOnFail {
		if sum.FirstFailureRun > 0 {
			fmt.Fprintf(stdout, "stopped at the first failure: seed %d, run %d of the seed list\n", seeds[sum.FirstFailureRun-1], sum.FirstFailureRun)
		} else {
			fmt.Fprintf(stdout, "no failure in %s\n", plural(len(results), "run", "runs"))
		}
	}
	if !*quiet {
		fmt.Fprintf(stderr, "%d seeds in %.1fs (%.1f seeds/s)\n", len(results), sum.WallSec, float64(len(results))/sum.WallSec)
	}
	if err != nil {
		return exitUsage
	}
	return code
}

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("worker", stderr)
	cfgPath := fs.String("c", "", "config file")
	wasm := fs.String("wasm", "", "comma-separated module files, one per node")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	cfg, err := engine.LoadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return exitUsage
	}
	sim, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{Wasm: strings.Split(*wasm, ",")})
	if err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return exitUsage
	}
	if err := worker.Serve(ctx, sim, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return exitUsage
	}
	return exitPass
}

// firstFailureRun is the 1-based position in seeds of the first seed whose result
// failed (0: none).
func firstFailureRun(seeds []uint64, results []*engine.Result) int {
	failed := map[uint64]bool{}
	for _, r := range results {
		if r.Failed() {
			failed[r.Seed] = true
		}
	}
	for i, s := range seeds {
		if failed[s] {
			return i + 1
		}
	}
	return 0
}
