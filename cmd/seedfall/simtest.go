package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
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
		start := time.Now()
		d, err := simtestcfg.Derive(ctx, p, progress)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall test: %v\n", err)
			return exitUsage
		}
		if timings() {
			kept := ""
			if len(d) > 0 && d[0].Kept {
				kept = " (the description of this build was kept: nothing compiled or run)"
			}
			fmt.Fprintf(stderr, "%s: test binary built and described in %.2fs%s\n", p.Pkg, time.Since(start).Seconds(), kept)
		}
		derived = append(derived, d...)
	}
	worst := exitPass
	// A sweep with -json prints go test -json's events (test2json.go); every sweep keeps
	// its results for the closing table.
	sweeping := !flagSet(fs, "seed")
	var events *test2json
	var pkgOrder []string
	if *jsonOut && sweeping {
		events = newTest2JSON(stdout)
		defer func() { events.endPackages(pkgOrder) }()
	}
	var rows []testRow
	tmp, err := os.MkdirTemp("", "seedfall-test-")
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	defer os.RemoveAll(tmp)
	for i, d := range derived {
		if events != nil {
			if !slices.Contains(pkgOrder, d.Ref.Pkg) {
				pkgOrder = append(pkgOrder, d.Ref.Pkg)
			}
			events.beginTest(d.Ref.Pkg, d.Ref.Name)
		} else if !*jsonOut {
			fmt.Fprintf(stdout, "=== %s (%s)\n", d.Ref.Name, d.Ref.Pkg)
		}
		var progress func(string)
		if !*quiet {
			progress = func(s string) { fmt.Fprintln(stderr, s) }
		}
		start := time.Now()
		if events != nil {
			var why strings.Builder
			code := preflight(ctx, d, progress, timings(), &why)
			if code != 0 {
				events.endTest(d.Ref.Pkg, d.Ref.Name, nil, why.String(), exitFail, time.Since(start))
				fmt.Fprint(stderr, why.String())
				return code
			}
		} else if code := preflight(ctx, d, progress, timings(), stderr); code != 0 {
			return code
		}
		var code int
		if sweeping {
			resultsPath := *out
			if resultsPath == "" {
				resultsPath = filepath.Join(tmp, fmt.Sprintf("%d.jsonl", i))
			}
			a := []string{"-c", d.Path, "-seeds", *seedSpec, "-workers", strconv.Itoa(*workers), "-out", resultsPath}
			a = appendIf(a, *check, "-check")
			a = appendIf(a, *quiet || events != nil, "-q")
			a = appendIf(a, *stopOnFail, "-stop-on-fail")
			var text strings.Builder
			w := stdout
			if events != nil {
				w = &text
			}
			code = cmdRun(ctx, a, w, stderr)
			results, rerr := readResultsFile(resultsPath)
			if rerr != nil && code != exitUsage {
				fmt.Fprintf(stderr, "seedfall test: %v\n", rerr)
				code = exitUsage
			}
			rows = append(rows, newTestRow(d, results, time.Since(start)))
			if events != nil {
				events.endTest(d.Ref.Pkg, d.Ref.Name, results, text.String(), code, time.Since(start))
			}
		} else {
			a := []string{"-c", d.Path, "-seed", strconv.FormatUint(*seed, 10)}
			a = appendIf(a, *faults != "", "-faults", *faults)
			a = appendIf(a, *check, "-check")
			a = appendIf(a, *quiet, "-q")
			a = appendIf(a, *jsonOut, "-json")
			code = cmdReplay(ctx, a, stdout, stderr)
		}
		worst = max(worst, code)
		if code == exitUsage {
			return code
		}
	}
	if len(rows) > 1 && events == nil {
		printTestTable(stdout, rows)
	}
	return worst
}

// testRow is one simulation test's line of the table `seedfall test` ends with.
type testRow struct {
	name, pkg               string
	seeds, failed, distinct int
	elapsed                 time.Duration
}

func newTestRow(d simtestcfg.Derived, results []engine.Result, el time.Duration) testRow {
	row := testRow{name: d.Ref.Name, pkg: d.Ref.Pkg, seeds: len(results), elapsed: el}
	sigs := map[string]bool{}
	for _, r := range results {
		if r.Failed() {
			row.failed++
			sig := string(r.Verdict)
			if r.Failure != nil {
				sig = r.Failure.Signature
			}
			sigs[sig] = true
		}
	}
	row.distinct = len(sigs)
	return row
}

// printTestTable prints the closing table of a run of several simulation tests.
func printTestTable(w io.Writer, rows []testRow) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "test\tpackage\tseeds\tfailed\tdistinct failures\ttime\t")
	var seeds, failed int
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t\n", r.name, r.pkg, r.seeds, r.failed, r.distinct, r.elapsed.Round(100*time.Millisecond))
		seeds += r.seeds
		failed += r.failed
	}
	tw.Flush()
	verdict := "ok"
	if failed > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s %d tests, %d seeds, %d failed\n", verdict, len(rows), seeds, failed)
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
func preflight(ctx context.Context, d simtestcfg.Derived, progress func(string), timings bool, stderr io.Writer) int {
	cfg, err := engine.LoadConfig(d.Path)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	// A test whose preflight passed with this very build (its config, every node's wasm,
	// seedfall and Go) is not run again: a -seed replay, a second sweep, shrink and
	// cause start at once. Which build it is needs the builds, not their compilation.
	built, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{BuildOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	key, err := preflightKey(d.Path, built)
	built.Close()
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	marker := d.Path + ".preflight"
	if old, err := os.ReadFile(marker); err == nil && string(old) == key {
		if timings {
			fmt.Fprintf(stderr, "preflight: passed before with this build (%s), not run again (built in %.2fs, nothing compiled)\n", marker, built.BuildTime.Seconds())
		}
		return 0
	}
	s, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	defer s.Close()
	if timings {
		fmt.Fprintf(stderr, "preflight: built in %.2fs, compiled in %.2fs\n", s.BuildTime.Seconds(), s.CompileTime.Seconds())
	}
	start := time.Now()
	if progress != nil {
		progress("preflight: one fault-free run of " + d.Ref.Name)
	}
	report, done := runProgress(stderr, "preflight of "+d.Ref.Name)
	r := s.Run(ctx, 1, engine.RunOptions{Plan: &engine.FaultPlan{}, Trace: true, Progress: report})
	done()
	if timings {
		fmt.Fprintf(stderr, "preflight: %.2fs for %s of virtual time (%d host calls, %d switches)\n",
			time.Since(start).Seconds(), time.Duration(r.EndNS), r.Stats.HostCalls, r.Stats.Switches)
	}
	// A node that exits after the test's own (directed) faults is what the test looks
	// for, not its mistake: the seeds go on and report it.
	directed := r.Failure != nil && slices.ContainsFunc(r.Faults, func(f engine.Fault) bool {
		return f.Directed && f.AtNS <= r.Failure.AtNS
	})
	if r.Failure != nil && ((r.Failure.Kind == engine.KindNodeExit && !directed) || simtestMistake(r.Failure.Reason)) {
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
	if err := os.WriteFile(marker, []byte(key), 0o644); err != nil {
		fmt.Fprintf(stderr, "seedfall test: %v\n", err)
		return exitUsage
	}
	return 0
}

// simtestMistake reports whether a failure's reason is package simtest's word on the
// test's own code ("simtest: Crash(\"nope\"): no such node"), said by a node or, after
// its label, by the workload.
func simtestMistake(reason string) bool {
	_, rest, _ := strings.Cut(reason, ": ")
	return strings.HasPrefix(reason, "simtest: ") || strings.HasPrefix(rest, "simtest: ")
}

// runProgress returns a RunOptions.Progress that shows on w how far a long run got,
// once it has taken more than progressAfter: redrawn in place on a terminal, a line
// every progressEvery otherwise. done ends the line it drew.
func runProgress(w io.Writer, what string) (report func(engine.RunProgress), done func()) {
	tty := cli.IsTerminal(w)
	var mu sync.Mutex
	drawn, printed := false, false
	var last time.Duration
	report = func(p engine.RunProgress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Elapsed < progressAfter || (!tty && printed && p.Elapsed-last < progressEvery) {
			return
		}
		last, printed = p.Elapsed, true
		line := fmt.Sprintf("%s: %s of wall time, virtual time %s", what, p.Elapsed.Round(time.Second), time.Duration(p.VirtualNS).Round(time.Millisecond))
		if tty {
			fmt.Fprintf(w, "\r\033[K%s", line)
			drawn = true
		} else {
			fmt.Fprintln(w, line)
		}
	}
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		if drawn {
			fmt.Fprintln(w)
			drawn = false
		}
	}
	return report, done
}

// progressAfter is how long a run goes before its progress shows; progressEvery is
// how often a line is printed where it cannot be redrawn (a log, CI).
var progressAfter, progressEvery = 3 * time.Second, 10 * time.Second

// preflightKey names what a preflight's verdict depends on: the test's config and the
// Sim's build (seedfall's version, the Go toolchain, every node's wasm).
func preflightKey(cfgPath string, s *engine.Sim) (string, error) {
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return "", err
	}
	p := s.Provenance("")
	build, err := json.Marshal(struct {
		Seedfall, Go string
		Wasm         map[string]string
	}{p.Seedfall, p.Go, p.Wasm})
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", len(data))
	h.Write(data)
	h.Write(build)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// testFlags are -test and -run of the commands that take a simulation test where they
// take a config (replay, shrink, cause, crashes, explore).
type testFlags struct {
	pkg, run *string
	// ref is the test resolve found (Ref.Name empty without -test).
	ref *cli.TestRef
}

func addTestFlags(fs *flag.FlagSet) testFlags {
	return testFlags{
		pkg: fs.String("test", "", "a simulation test's `package` instead of -c (with -run naming one test)"),
		run: fs.String("run", "", "with -test: the test, as a `regexp` matching its name alone"),
		ref: new(cli.TestRef),
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
	*tf.ref = d[0].Ref
	return 0
}
