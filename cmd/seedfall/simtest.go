package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/simtestcfg"
)

// cmdTest runs the simulation tests (package simtest) of Go packages: for each test, a
// sweep of seeds as `seedfall run` does, or one seed as `seedfall replay` does.
func cmdTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("test", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: seedfall test [packages] [-run regexp] [-seeds 1-100 | -seed N [-faults plan.json]] [-check]")
		fs.PrintDefaults()
	}
	runRE := fs.String("run", "", "run only the simulation tests whose names match `regexp` (as go test -run)")
	seedSpec := fs.String("seeds", "1-100", "seeds to sweep: 1-1000, 7, 1-5,9")
	seed := fs.Uint64("seed", 0, "replay this one seed (and print its trace) instead of sweeping")
	faults := fs.String("faults", "", "with -seed: replay this fault plan `file`")
	check := fs.Bool("check", false, "run every seed twice and compare traces line by line")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel workers")
	quiet := fs.Bool("q", false, "no progress output (with -seed: no trace)")
	jsonOut := fs.Bool("json", false, "print JSON")
	stopOnFail := fs.Bool("stop-on-fail", false, "stop each test's sweep at its first failing seed")
	out := fs.String("out", "", "write results as JSON lines to `file` (one test only)")
	pkgs, code, stop := parseInterleaved(fs, args)
	if stop {
		return code
	}
	found, err := simtestcfg.Find(pkgs, *runRE)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	count := 0
	for _, p := range found {
		count += len(p.Tests)
	}
	if flagSet(fs, "seed") && count != 1 {
		fmt.Fprintf(stderr, "seedfall test: -seed replays one test; %d match (narrow it with -run)\n", count)
		return exitUsage
	}
	if *out != "" && count != 1 {
		fmt.Fprintf(stderr, "seedfall test: -out takes the results of one test; %d match (narrow it with -run)\n", count)
		return exitUsage
	}
	var derived []simtestcfg.Derived
	for _, p := range found {
		var progress func(string)
		if !*quiet {
			progress = func(s string) { fmt.Fprintln(stderr, s) }
		}
		d, err := simtestcfg.Derive(ctx, p, progress)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall test: %v\n", err)
			return exitUsage
		}
		derived = append(derived, d...)
	}
	worst := exitPass
	for _, d := range derived {
		if !*jsonOut {
			fmt.Fprintf(stdout, "=== %s (%s)\n", d.Ref.Name, d.Ref.Pkg)
		}
		if code := preflight(ctx, d, stderr); code != 0 {
			return code
		}
		var code int
		if flagSet(fs, "seed") {
			a := []string{"-c", d.Path, "-seed", strconv.FormatUint(*seed, 10)}
			a = appendIf(a, *faults != "", "-faults", *faults)
			a = appendIf(a, *check, "-check")
			a = appendIf(a, *quiet, "-q")
			a = appendIf(a, *jsonOut, "-json")
			code = cmdReplay(ctx, a, stdout, stderr)
		} else {
			a := []string{"-c", d.Path, "-seeds", *seedSpec, "-workers", strconv.Itoa(*workers)}
			a = appendIf(a, *check, "-check")
			a = appendIf(a, *quiet, "-q")
			a = appendIf(a, *jsonOut, "-json")
			a = appendIf(a, *stopOnFail, "-stop-on-fail")
			a = appendIf(a, *out != "", "-out", *out)
			code = cmdRun(ctx, a, stdout, stderr)
		}
		worst = max(worst, code)
		if code == exitUsage {
			return code
		}
	}
	return worst
}

func appendIf(a []string, cond bool, xs ...string) []string {
	if cond {
		return append(a, xs...)
	}
	return a
}

// parseInterleaved parses flags that may come before, between and after the package
// arguments, as go test takes them (seedfall test ./pkg -run '^TestX$' -seed 7).
func parseInterleaved(fs *flag.FlagSet, args []string) (pkgs []string, code int, stop bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitPass, true
			}
			return nil, exitUsage, true
		}
		args = fs.Args()
		if len(args) == 0 {
			return pkgs, 0, false
		}
		pkgs = append(pkgs, args[0])
		args = args[1:]
	}
}

// preflightTail is how many trace lines a failed preflight shows.
const preflightTail = 60

// preflight runs the test once with no faults: a node that exits on its own then (it
// panics at start, its store does not open on an empty disk) is the test's mistake, not
// a finding, and is refused with exit 2 before any seed runs.
func preflight(ctx context.Context, d simtestcfg.Derived, stderr io.Writer) int {
	cfg, err := engine.LoadConfig(d.Path)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	s, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	defer s.Close()
	r := s.Run(ctx, 1, engine.RunOptions{Plan: &engine.FaultPlan{}, Trace: true})
	if r.Failure != nil && (r.Failure.Kind == engine.KindNodeExit || strings.HasPrefix(r.Failure.Reason, "simtest: ")) {
		fmt.Fprintf(stderr, "seedfall test: %s: fails with no faults injected, so the test itself is wrong: %s\n  (go test %s -run '^%s$' runs it natively)\n",
			d.Ref.Name, r.Failure.Reason, d.Ref.Pkg, d.Ref.Name)
		// What the run did last: the node's own output and its last calls.
		tail := r.Trace
		if len(tail) > preflightTail {
			tail = tail[len(tail)-preflightTail:]
			fmt.Fprintf(stderr, "  the last %d of %d trace lines:\n", preflightTail, len(r.Trace))
		}
		for _, l := range tail {
			fmt.Fprintf(stderr, "    %s\n", l)
		}
		return exitUsage
	}
	if r.Error != "" {
		fmt.Fprintf(stderr, "seedfall test: %s: %s\n", d.Ref.Name, r.Error)
		return exitUsage
	}
	return 0
}

// testFlags are -test and -run of the commands that take a simulation test where they
// take a config (replay, shrink, cause, crashes, explore).
type testFlags struct{ pkg, run *string }

func addTestFlags(fs *flag.FlagSet) testFlags {
	return testFlags{
		pkg: fs.String("test", "", "a simulation test's `package` instead of -c (with -run naming one test)"),
		run: fs.String("run", "", "with -test: the test, as a `regexp` matching its name alone"),
	}
}

// resolve points cfgPath at the derived config of the one test -test and -run name.
func (tf testFlags) resolve(ctx context.Context, name string, cfgPath *string, stderr io.Writer) int {
	if *tf.pkg == "" {
		if *tf.run != "" {
			fmt.Fprintf(stderr, "seedfall %s: -run needs -test\n", name)
			return exitUsage
		}
		return 0
	}
	found, err := simtestcfg.Find([]string{*tf.pkg}, *tf.run)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall %s: %v\n", name, err)
		return exitUsage
	}
	var names []string
	for _, p := range found {
		names = append(names, p.Tests...)
	}
	if len(names) != 1 {
		fmt.Fprintf(stderr, "seedfall %s: -test %s -run %q matches %d simulation tests (%s); name one\n", name, *tf.pkg, *tf.run, len(names), strings.Join(names, ", "))
		return exitUsage
	}
	d, err := simtestcfg.Derive(ctx, found[0], nil)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall %s: %v\n", name, err)
		return exitUsage
	}
	*cfgPath = d[0].Path
	return 0
}
