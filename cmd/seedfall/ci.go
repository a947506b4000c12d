package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/seedfall/seedfall/ci"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/seedspec"
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
	var out []ci.UpgradeNode
	for _, n := range s.Config().Nodes {
		if n.Upgrade != nil {
			mode := n.Upgrade.Mode
			if mode == "" {
				mode = engine.UpgradeOnce
			}
			out = append(out, ci.UpgradeNode{Name: n.Name, Mode: mode})
		}
	}
	return out, nil
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
func (e *ciEngine) Crashes(ctx context.Context, path string, seed uint64, outDir string) ([]ci.CrashSite, error) {
	s, err := e.sim(ctx, path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(outDir, fmt.Sprintf("seed-%d", seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rep, err := cli.RunCrashes(ctx, cli.CrashesSpec{Sim: s, Config: path, Seed: seed, RecheckNS: -1,
		CrashStatesOptions: engineapi.CrashStatesOptions{NoOwnFaults: true},
		Workers:            runtime.NumCPU(), OutDir: dir, Progress: e.stderr})
	if err != nil {
		return nil, err
	}
	var out []ci.CrashSite
	for _, site := range rep.Sites {
		if site.Failing > 0 {
			out = append(out, ci.CrashSite{Seed: seed, Site: site.Site, Failing: site.Failing, States: site.States, Reason: site.Reason, Replay: site.Replay})
		}
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

// fileEngine serves results already on disk to the ci flow (seedfall report).
type fileEngine struct{ results []engine.Result }

func (f fileEngine) Sweep(_ context.Context, _ string, seeds []uint64) ([]engine.Result, error) {
	want := map[uint64]bool{}
	for _, s := range seeds {
		want[s] = true
	}
	var out []engine.Result
	for _, r := range f.results {
		if want[r.Seed] {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f fileEngine) Shrink(context.Context, string, engine.Result, time.Duration) (ci.Shrunk, error) {
	return ci.Shrunk{Note: "not shrunk: seedfall report renders results without rerunning them"}, nil
}

func (f fileEngine) Mutate(context.Context, string, []uint64) (*ci.Mutation, error) {
	return nil, errors.New("seedfall report renders results without rerunning them")
}

func (f fileEngine) UpgradeFrom(context.Context, string, string) ([]ci.UpgradeNode, error) {
	return nil, errors.New("seedfall report renders results without rerunning them")
}

func (f fileEngine) Crashes(context.Context, string, uint64, string) ([]ci.CrashSite, error) {
	return nil, errors.New("seedfall report renders results without rerunning them")
}

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", stderr)
	in := fs.String("in", "", "results `file` (JSON lines from seedfall run -out or merge); required")
	cfgPath := fs.String("c", "seedfall.json", "the config the results came from, shown in replay commands (default: the one the sweep recorded)")
	out := fs.String("out", "seedfall-report", "output `directory` for report.html, report.md and junit.xml")
	baseline := fs.String("baseline", "", "baseline file to label signatures new/known/fixed")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if *in == "" {
		fmt.Fprintln(stderr, "seedfall report: -in is required (a results file from seedfall run -out)")
		return exitUsage
	}
	results, err := ci.Merge([]string{*in})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall report: %v\n", err)
		return exitUsage
	}
	if len(results) == 0 {
		fmt.Fprintf(stderr, "seedfall report: %s holds no results\n", *in)
		return exitUsage
	}
	if err := checkSweepResults(*in, results, flagSet(fs, "c")); err != nil {
		fmt.Fprintf(stderr, "seedfall report: %v\n", err)
		return exitUsage
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Seed < results[j].Seed })
	if !flagSet(fs, "c") {
		// The sweep recorded the config it ran, as given on its command line, so that
		// the report's replay commands work from the same directory.
		// It is named from where the report is made, when the sweep recorded its
		// working directory and the config is there.
		cwd, _ := os.Getwd()
		for _, r := range results {
			if r.Provenance != nil && r.Provenance.Config != "" {
				*cfgPath = engineapi.ConfigFrom(r.Provenance, cwd)
				break
			}
		}
	}
	seeds := make([]uint64, len(results))
	for i, r := range results {
		seeds[i] = r.Seed
	}
	args2 := []string{"-c", *cfgPath, "-seeds", seedspec.Format(seeds), "-out", *out, "-shrink-budget", "0s", "-comment=false", "-fail-on", "any", "-mode", "push"}
	if *baseline != "" {
		args2 = append(args2, "-baseline", *baseline)
	}
	inputs, err := ci.ParseInputs(args2, func(string) string { return "" }, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall report: %v\n", err)
		return exitUsage
	}
	inputs.Rendering = *in
	code, err := ci.Run(ctx, inputs, ci.Env{}, fileEngine{results}, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall report: %v\n", err)
		return exitUsage
	}
	return code
}

// checkSweepResults refuses results that report cannot give a true replay command for:
// a `replay -json` result (it may have replayed a fault plan, which a report's seed
// commands would drop), and, unless -c names the config, a result that does not record
// the config its sweep ran.
func checkSweepResults(in string, results []engine.Result, configGiven bool) error {
	for _, r := range results {
		p := r.Provenance
		switch {
		case p != nil && p.Faults != "":
			return fmt.Errorf("%s: seed %d is a `seedfall replay -json` result of the plan %s, not a sweep's: report renders results of `seedfall run -out` (replay it with: %s)", in, r.Seed, p.Faults, cli.ReplayCommand(p.Config, r.Seed, "-faults "+p.Faults))
		case !configGiven && (p == nil || p.Config == ""):
			return fmt.Errorf("%s: seed %d does not record the config it ran (a `seedfall replay -json` result, or results from an older seedfall?): report renders results of `seedfall run -out`; name the config with -c to render these", in, r.Seed)
		}
	}
	return nil
}
