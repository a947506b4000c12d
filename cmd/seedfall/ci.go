package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/ci"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/simtestcfg"
)

// ciEngine adapts the engine to the ci flow: sweeps run in worker processes, the first
// failing seed of each signature is replayed for a trace excerpt, and shrinking honours
// the budget.
type ciEngine struct {
	stderr io.Writer
	mu     sync.Mutex
	sims   map[string]*engine.Sim
	// upgradeFrom is the commit input upgrade-from names, per config path.
	upgradeFrom map[string]string
}

func (e *ciEngine) sim(ctx context.Context, path string) (*engine.Sim, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.sims[path]; s != nil {
		return s, nil
	}
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if rev := e.upgradeFrom[path]; rev != "" {
		if _, err := engineapi.SetUpgradeFrom(cfg, rev); err != nil {
			return nil, err
		}
	}
	s, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{Progress: func(l string) { fmt.Fprintln(e.stderr, l) }})
	if err != nil {
		return nil, err
	}
	if e.sims == nil {
		e.sims = map[string]*engine.Sim{}
	}
	e.sims[path] = s
	return s, nil
}

// UpgradeFrom makes commit the old build of the config's upgrading nodes and builds
// them now, so that a revision that does not build fails before the sweep.
func (e *ciEngine) UpgradeFrom(ctx context.Context, path, commit string) ([]ci.UpgradeNode, error) {
	e.mu.Lock()
	if e.sims[path] != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("%s: upgrade-from given after the config was prepared", path)
	}
	if e.upgradeFrom == nil {
		e.upgradeFrom = map[string]string{}
	}
	e.upgradeFrom[path] = commit
	e.mu.Unlock()
	s, err := e.sim(ctx, path)
	if err != nil {
		return nil, err
	}
	return upgradeNodes(s.Config()), nil
}

// upgradeNodes are cfg's nodes with an "upgrade" option, with their modes.
func upgradeNodes(cfg *engine.Config) []ci.UpgradeNode {
	var out []ci.UpgradeNode
	for _, n := range cfg.Nodes {
		if n.Upgrade != nil {
			mode := n.Upgrade.Mode
			if mode == "" {
				mode = engine.UpgradeOnce
			}
			out = append(out, ci.UpgradeNode{Name: n.Name, Mode: mode})
		}
	}
	return out
}

// traceExcerpt is how many trace lines before the failure a report shows.
const traceExcerpt = 40

func (e *ciEngine) Sweep(ctx context.Context, path string, seeds []uint64) ([]engine.Result, error) {
	s, err := e.sim(ctx, path)
	if err != nil {
		return nil, err
	}
	rs, err := cli.Sweep(ctx, cli.SweepSpec{Sim: s, Seeds: seeds, Progress: e.stderr})
	if err != nil {
		return nil, err
	}
	out := make([]engine.Result, len(rs))
	seen := map[string]bool{}
	prov := s.Provenance(path)
	for i, r := range rs {
		r.Provenance = prov
		out[i] = *r
		if r.Verdict != engine.VerdictFail || r.Failure == nil || seen[r.Failure.Signature] {
			continue
		}
		seen[r.Failure.Signature] = true
		again := s.Run(ctx, r.Seed, engine.RunOptions{Trace: true})
		if again.TraceHash == r.TraceHash {
			out[i].Trace = again.Trace[max(0, len(again.Trace)-traceExcerpt):]
		}
	}
	return out, nil
}

func (e *ciEngine) Shrink(ctx context.Context, path string, r engine.Result, budget time.Duration) (ci.Shrunk, error) {
	s, err := e.sim(ctx, path)
	if err != nil {
		return ci.Shrunk{}, err
	}
	// Its runs happen in worker processes, as the sweep's do.
	pool, err := cli.NewPool(s, runtime.NumCPU(), "")
	if err != nil {
		return ci.Shrunk{}, err
	}
	defer pool.Close()
	res, err := s.Shrink(ctx, r.Seed, engine.ShrinkOptions{Budget: budget, Run: pool.Run, KeepSwarm: true})
	if err != nil {
		return ci.Shrunk{}, err
	}
	note := fmt.Sprintf("%d → %d faults in %d runs", res.Before, res.After, res.Runs)
	if res.Exhausted {
		note += " (budget reached: maybe not minimal)"
	}
	out := ci.Shrunk{Faults: res.Plan.Faults, Note: note}
	if res.Minimal != nil {
		// The report shows it beside the seed's own failure.
		out.Failure = res.Minimal.Failure
	}
	return out, nil
}

// Mutate runs `seedfall mutate` over seeds with the config's operators.
func (e *ciEngine) Mutate(ctx context.Context, path string, seeds []uint64) (*ci.Mutation, error) {
	s, err := e.sim(ctx, path)
	if err != nil {
		return nil, err
	}
	operators := engineapi.MutationNames()
	if len(s.Config().Mutate) > 0 {
		operators = s.Config().Mutate
	}
	rep, err := runMutants(ctx, s, path, seeds, operators, runtime.NumCPU(), e.stderr, func(mr mutantResult) { printMutant(e.stderr, mr) })
	if err != nil {
		return nil, err
	}
	m := &ci.Mutation{Score: rep.Score}
	for _, mr := range rep.Mutants {
		reason := mr.Reason
		if mr.Outcome == "n/a" {
			reason = mr.NotApplicable
		}
		m.Mutants = append(m.Mutants, ci.Mutant{Name: mr.Name, Site: mr.Site, Killed: mr.Killed, Seed: mr.Seed, Outcome: mr.Outcome, Reason: reason})
	}
	return m, nil
}

// Crashes runs `seedfall crashes -own-faults=false` on seed and returns its vulnerable
// sites. Without the seed's own faults the probe covers the whole workload even when the
// seed fails on its own (the deep sweep reports that failure already), and each
// annotated site is one where a single crash, and nothing else, fails the workload.
// Crashes runs the crash-state search of seed (`seedfall crashes -own-faults=false`,
// budget states at most) and returns its distinct failures, each replayed once for its
// trace excerpt, in op order.
func (e *ciEngine) Crashes(ctx context.Context, path string, seed uint64, outDir string, budget int) (*ci.CrashSearch, error) {
	s, err := e.sim(ctx, path)
	if err != nil {
		return nil, err
	}
	if s.Config().Faults.CrashPerSec <= 0 {
		return &ci.CrashSearch{Seed: seed, Skipped: "the config injects no power loss (faults.crash_per_sec is 0), and every crash state is one"}, nil
	}
	dir := filepath.Join(outDir, fmt.Sprintf("seed-%d", seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rep, err := cli.RunCrashes(ctx, cli.CrashesSpec{Sim: s, Config: path, Seed: seed, RecheckNS: -1,
		CrashStatesOptions: engineapi.CrashStatesOptions{NoOwnFaults: true},
		Workers:            runtime.NumCPU(), OutDir: dir, Progress: e.stderr, Budget: budget})
	if err != nil {
		return nil, err
	}
	out := &ci.CrashSearch{Seed: seed, States: rep.States, Ran: rep.Ran,
		Complete: rep.OverBudget == 0 && !rep.Partial && rep.Errors == 0}
	type found struct {
		site cli.Site
		f    cli.SiteFailure
	}
	var all []found
	for _, site := range rep.Sites {
		for _, f := range site.Failures {
			if f.Plan != "" {
				all = append(all, found{site, f})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.f.Incarnation, b.f.Incarnation), cmp.Compare(a.f.Op, b.f.Op))
	})
	seen := map[string]bool{}
	prov := s.Provenance(path)
	for _, x := range all {
		plan, err := cli.LoadPlan(x.f.Plan)
		if err != nil {
			return nil, err
		}
		r := s.Run(ctx, seed, engine.RunOptions{Plan: plan, Trace: true})
		if !r.Failed() || r.Failure == nil {
			continue
		}
		if r.Failure.Signature == "" {
			r.Failure.Signature = engine.Signature(r)
		}
		if seen[r.Failure.Signature] {
			continue
		}
		seen[r.Failure.Signature] = true
		r.Trace = r.Trace[max(0, len(r.Trace)-traceExcerpt):]
		r.Provenance = prov
		out.Findings = append(out.Findings, ci.CrashFinding{Site: x.site.Site, Failing: x.f.States, States: x.site.States,
			Where:  fmt.Sprintf("disk op #%d of %s#%d, state %s", x.f.Op, rep.Node, x.f.Incarnation, x.f.Kind),
			Result: *r, Plan: plan.Faults})
	}
	return out, nil
}

func (e *ciEngine) close() {
	for _, k := range sortedKeys(e.sims) {
		e.sims[k].Close()
	}
}

func cmdCI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	in, err := ci.ParseInputs(args, os.Getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		fmt.Fprintf(stderr, "seedfall ci: %v\n", err)
		return exitUsage
	}
	var test *simtestcfg.Package
	var several []simtestcfg.Package
	if in.Test != "" {
		// A simulation test: its package holds the sources (and the go.mod whose
		// release the build uses); its config is derived once the toolchain is set.
		found, err := simtestcfg.Find([]string{in.Test}, in.Run)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall ci: input test: %v\n", err)
			return exitUsage
		}
		var names []string
		for _, p := range found {
			names = append(names, p.Tests...)
		}
		if len(names) > 1 {
			// A sweep of several tests: one job, one report, one comment, one baseline.
			switch {
			case in.Mutation != "off":
				fmt.Fprintf(stderr, "seedfall ci: inputs test %s and run %q match %d simulation tests (%s): input mutation runs on one; set run to match one\n", in.Test, in.Run, len(names), strings.Join(names, ", "))
				return exitUsage
			case in.UpgradeFrom != "":
				fmt.Fprintf(stderr, "seedfall ci: inputs test %s and run %q match %d simulation tests (%s): input upgrade-from is for one; set run to match one\n", in.Test, in.Run, len(names), strings.Join(names, ", "))
				return exitUsage
			}
			several = found
		} else {
			test = &found[0]
		}
		in.Home = found[0].Dir
	}
	// The image's Go, or the release the repository pins (ci.GoToolchain): set before
	// anything runs the go command.
	anchor := in.Config
	if in.Home != "" {
		anchor = filepath.Join(in.Home, "seedfall.json") // where the test's config would be
	}
	tc, why, err := ci.GoToolchain(anchor, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall ci: %v\n", err)
		return exitUsage
	}
	if tc != "" {
		os.Setenv("GOTOOLCHAIN", tc)
	}
	fmt.Fprintf(stdout, "seedfall ci: %s\n", why)
	if test != nil {
		d, err := simtestcfg.Derive(ctx, *test, func(s string) { fmt.Fprintf(stdout, "seedfall ci: %s\n", s) })
		if err != nil {
			fmt.Fprintf(stderr, "seedfall ci: input test: %v\n", err)
			return exitUsage
		}
		in.Config, in.Name = d[0].Path, d[0].Ref.Command()
	}
	for _, p := range several {
		d, err := simtestcfg.Derive(ctx, p, func(s string) { fmt.Fprintf(stdout, "seedfall ci: %s\n", s) })
		if err != nil {
			fmt.Fprintf(stderr, "seedfall ci: input test: %v\n", err)
			return exitUsage
		}
		for _, t := range d {
			for _, o := range in.Tests {
				if o.Name == t.Ref.Name {
					fmt.Fprintf(stderr, "seedfall ci: input test %s: two simulation tests are named %s (%s and %s): their signatures would mix; narrow test or run\n", in.Test, t.Ref.Name, o.Command, t.Ref.Command())
					return exitUsage
				}
			}
			in.Tests = append(in.Tests, ci.TestTarget{Name: t.Ref.Name, Config: t.Path, Command: t.Ref.Command()})
		}
	}
	if len(in.Tests) > 0 {
		in.Config, in.Name = "", fmt.Sprintf("seedfall test %s (%d simulation tests)", in.Test, len(in.Tests))
		if in.Run != "" {
			in.Name = fmt.Sprintf("seedfall test %s -run '%s' (%d simulation tests)", in.Test, in.Run, len(in.Tests))
		}
	}
	eng := &ciEngine{stderr: stderr}
	defer eng.close()
	code, err := ci.Run(ctx, in, ci.EnvFromGetenv(os.Getenv), eng, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall ci: %v\n", err)
		return exitUsage
	}
	return code
}

func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", stderr)
	out := fs.String("o", "", "write the merged results to `file` (default: stdout)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "seedfall merge: name the shard result files, e.g. seedfall merge -o all.jsonl shard-*/results.jsonl")
		return exitUsage
	}
	results, err := ci.Merge(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "seedfall merge: %v\n", err)
		return exitUsage
	}
	w := stdout
	if *out != "" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			fmt.Fprintf(stderr, "seedfall merge: %v\n", err)
			return exitUsage
		}
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall merge: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		w = f
	}
	if err := ci.WriteResults(w, results); err != nil {
		fmt.Fprintf(stderr, "seedfall merge: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "merged %d results from %d files\n", len(results), fs.NArg())
	return exitPass
}

func cmdReport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", stderr)
	in := fs.String("in", "", "results `file` (JSON lines from seedfall run -out or merge); required")
	cfgPath := fs.String("c", "seedfall.json", "the config the results came from, shown in replay commands (default: the one the sweep recorded)")
	out := fs.String("out", ci.DefaultOut, "output `directory` for report.html, report.md, junit.xml and results.jsonl")
	baseline := fs.String("baseline", "", "baseline file to label signatures new/known/fixed")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	o := ci.ReportOptions{Results: *in, Baseline: *baseline, Out: *out}
	if flagSet(fs, "c") {
		if *cfgPath == "" {
			fmt.Fprintln(stderr, "seedfall report: -c: empty (want the config the results came from)")
			return exitUsage
		}
		o.Config = *cfgPath
	}
	code, err := ci.Report(o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall report: %v\n", err)
		return exitUsage
	}
	return code
}
