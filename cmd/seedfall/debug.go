package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
)

func cmdShrink(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("shrink", stderr)
	cfgPath := fs.String("c", "seedfall.json", "config `file`")
	tf := addTestFlags(fs)
	seed := fs.Uint64("seed", 0, "the failing seed (required)")
	faults := fs.String("faults", "", "start from this fault plan `file` instead of the seed's own")
	out := fs.String("o", "", "save the minimal plan to `file` (default CONFIG.seed-N.faults.json next to the config: seedfall.seed-2.faults.json for seedfall.json)")
	budget := fs.Duration("budget", 5*time.Minute, "wall-clock budget")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel runs")
	jsonOut := fs.Bool("json", false, "print JSON")
	upgradeFrom := upgradeFromFlag(fs)
	emit := fs.Bool("emit-test", false, "with -test: also write the minimal plan as a Go test of the test's package (its faults as directed faults: simtest.Schedule) and run it on the seed")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if *emit && *tf.pkg == "" {
		fmt.Fprintln(stderr, "seedfall shrink: -emit-test writes a test of a simulation test's package: give -test and -run")
		return exitUsage
	}
	if code := tf.resolve(ctx, "shrink", cfgPath, stderr); code != 0 {
		return code
	}
	if !flagSet(fs, "seed") {
		fmt.Fprintln(stderr, "seedfall shrink: -seed is required")
		return exitUsage
	}
	var plan *engine.FaultPlan
	if *faults != "" {
		var err error
		if plan, err = cli.LoadPlan(*faults); err != nil {
			fmt.Fprintf(stderr, "seedfall shrink: %v\n", err)
			return exitUsage
		}
	}
	sim, code := loadAndPrepareFrom(ctx, *cfgPath, *upgradeFrom, stderr, true)
	if sim == nil {
		return code
	}
	defer sim.Close()
	if plan != nil {
		for _, w := range engineapi.PlanWarnings(*faults, plan.Provenance, sim.Provenance(*cfgPath)) {
			fmt.Fprintf(stderr, "seedfall shrink: %s\n", w)
		}
	}
	// The runs happen in worker processes, as a sweep's do: a guest that spins without
	// host calls costs a worker, never this process.
	pool, err := cli.NewPool(sim, *workers, "")
	if err != nil {
		fmt.Fprintf(stderr, "seedfall shrink: %v\n", err)
		return exitUsage
	}
	defer pool.Close()
	res, err := sim.Shrink(ctx, *seed, engine.ShrinkOptions{Plan: plan, Workers: *workers, Budget: *budget, Run: pool.Run})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall shrink: %v\n", err)
		return exitUsage
	}
	planFile := *out
	if planFile == "" {
		planFile = cli.DefaultPlanPath(*cfgPath, *seed)
	}
	res.Plan.Provenance = sim.Provenance(*cfgPath)
	if err := cli.SavePlan(planFile, res.Plan); err != nil {
		fmt.Fprintf(stderr, "seedfall shrink: save plan: %v\n", err)
		return exitUsage
	}
	before := cli.FaultsBefore(res.Minimal)
	replay := cli.ReplayCommand(*cfgPath, *seed, "-faults "+planFile, upgradeExtra(*upgradeFrom))
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(cli.NewShrinkReport(res, planFile, replay))
		return exitFail
	}
	fmt.Fprintf(stdout, "faults before the failure (%d):\n", len(before))
	for _, l := range cli.FaultLines(before) {
		fmt.Fprintf(stdout, "  %s\n", l)
	}
	fmt.Fprintf(stdout, "FAIL %s\n\n", res.Minimal.Failure.Reason)
	note := ""
	if n := countDirected(before); n > 0 {
		note = fmt.Sprintf(" (%d of them the test's own, which shrink keeps)", n)
	}
	if res.Exhausted {
		note += " (budget exhausted: the plan is smaller, maybe not minimal)"
	}
	fmt.Fprintf(stdout, "shrunk %d -> %d faults in %d runs, %.1fs%s\n", res.Before, len(before), res.Runs, time.Duration(res.WallNS).Seconds(), note)
	if res.Plan.Swarm != nil {
		off := ""
		if len(res.KindsOff) > 0 {
			off = fmt.Sprintf(" (turned off: %v)", res.KindsOff)
		}
		fmt.Fprintf(stdout, "swarm: %s%s\n", res.Plan.Swarm, off)
	}
	if res.Replays {
		fmt.Fprintf(stdout, "minimal plan saved to %s; it replays exactly:\n  %s\n", planFile, replay)
	} else {
		fmt.Fprintf(stdout, "WARNING: minimal plan saved to %s did not replay to an identical trace\n", planFile)
	}
	if *emit {
		if _, err := emitTest(ctx, *tf.ref, *seed, res.Plan, res.Minimal.Failure, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "seedfall shrink: -emit-test: %v\n", err)
			return exitUsage
		}
	}
	return exitFail
}

// causeJSON is cause's -json output.
type causeJSON struct {
	*engine.CauseResult
	Bars []string `json:"bars"`
}

func cmdCause(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cause", stderr)
	cfgPath := fs.String("c", "seedfall.json", "config `file`")
	tf := addTestFlags(fs)
	seed := fs.Uint64("seed", 0, "the failing seed (required)")
	faults := fs.String("faults", "", "explain the run of this fault plan `file`")
	moments := fs.Int("moments", 20, "evenly spaced moments (a moment before and after each fault is added)")
	futures := fs.Int("futures", 20, "alternate futures per moment")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel runs")
	jsonOut := fs.Bool("json", false, "print the curve as JSON")
	upgradeFrom := upgradeFromFlag(fs)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if code := tf.resolve(ctx, "cause", cfgPath, stderr); code != 0 {
		return code
	}
	if !flagSet(fs, "seed") {
		fmt.Fprintln(stderr, "seedfall cause: -seed is required")
		return exitUsage
	}
	var plan *engine.FaultPlan
	if *faults != "" {
		var err error
		if plan, err = cli.LoadPlan(*faults); err != nil {
			fmt.Fprintf(stderr, "seedfall cause: %v\n", err)
			return exitUsage
		}
	}
	sim, code := loadAndPrepareFrom(ctx, *cfgPath, *upgradeFrom, stderr, true)
	if sim == nil {
		return code
	}
	defer sim.Close()
	if plan != nil {
		for _, w := range engineapi.PlanWarnings(*faults, plan.Provenance, sim.Provenance(*cfgPath)) {
			fmt.Fprintf(stderr, "seedfall cause: %s\n", w)
		}
	}
	pool, err := cli.NewPool(sim, *workers, "") // as shrink's: runs in worker processes
	if err != nil {
		fmt.Fprintf(stderr, "seedfall cause: %v\n", err)
		return exitUsage
	}
	defer pool.Close()
	tty := cli.IsTerminal(stderr)
	res, err := sim.Cause(ctx, *seed, engine.CauseOptions{Plan: plan, Moments: *moments, Futures: *futures, Workers: *workers, Run: pool.Run,
		Progress: func(done, total int) {
			if tty && (done%20 == 0 || done == total) {
				fmt.Fprintf(stderr, "\r\033[K%d/%d futures", done, total)
				if done == total {
					fmt.Fprintln(stderr)
				}
			}
		}})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall cause: %v\n", err)
		return exitUsage
	}
	bars := cli.CauseBars(res)
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(causeJSON{res, bars})
		return exitFail
	}
	name := filepath.Base(filepath.Dir(sim.Config().Path))
	fmt.Fprintf(stdout, "# %s, seed %d: %d alternate futures in %.0fs\n", name, *seed, res.Futures, time.Duration(res.WallNS).Seconds())
	fmt.Fprintf(stdout, "# FAIL at %s: %s\n", time.Duration(res.Failure.AtNS).String(), res.Failure.Reason)
	for _, b := range bars {
		fmt.Fprintln(stdout, b)
	}
	if res.Jump != nil {
		fmt.Fprintf(stdout, "biggest jump: %s\n", res.Jump.Summary)
	} else {
		fmt.Fprintln(stdout, "no jump: P(fail) never rises (the failure may not depend on the faults)")
	}
	// The seed fails (cause refuses a passing one), so cause exits as replay and
	// shrink do on it: 1, a failure was found.
	return exitFail
}

// countDirected counts the faults the workload asked for (engine/directed.go).
func countDirected(fs []engine.Fault) int {
	n := 0
	for _, f := range fs {
		if f.Directed {
			n++
		}
	}
	return n
}
