package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/seedspec"
)

// mutantResult is one mutant's outcome. The JSON shape is documented in docs/mutate.md
// and is stable: fields are only ever added.
type mutantResult struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "os" or "call-site"
	Site string `json:"site,omitempty"`
	// Outcome is "killed" (a check failed), "survived" (every seed passed), "unknown"
	// (no check failed, but a seed could not be judged: watchdog, worker crash, tool
	// error; Reason says which) or "n/a".
	Outcome string `json:"outcome"`
	Killed  bool   `json:"killed"`
	Seed    uint64 `json:"seed,omitempty"`   // lowest killing seed
	Reason  string `json:"reason,omitempty"` // its failure
	Replay  string `json:"replay,omitempty"`
	Seeds   int    `json:"seeds_run"`
	// NotApplicable says why the mutant cannot change this system's behaviour (the
	// system never makes the call it mutates); such mutants do not count in the score.
	NotApplicable string `json:"not_applicable,omitempty"`
}

type mutateReport struct {
	Config  string         `json:"config"`
	Seeds   string         `json:"seeds"`
	Mutants []mutantResult `json:"mutants"`
	Killed  int            `json:"killed"`
	Total   int            `json:"total"`
	Score   string         `json:"score"`
}

// sweepUntilFail runs seeds in fixed chunks and stops after the first chunk with a
// failure of the checks, so the reported killing seed does not depend on timing. kill is
// the lowest such failure; unjudged is the lowest seed that could not be judged (a
// watchdog, a worker crash, a tool error), which never counts as a kill.
func sweepUntilFail(ctx context.Context, sp cli.SweepSpec, seeds []uint64) (kill, unjudged *engine.Result, run int, err error) {
	chunk := 4 * max(1, sp.Workers)
	for i := 0; i < len(seeds); i += chunk {
		sp.Seeds = seeds[i:min(i+chunk, len(seeds))]
		rs, err := cli.Sweep(ctx, sp)
		if err != nil {
			return nil, unjudged, run, err
		}
		run += len(rs)
		k, u := judge(rs)
		if unjudged == nil {
			unjudged = u
		}
		if k != nil {
			return k, unjudged, run, nil
		}
	}
	return nil, unjudged, run, nil
}

// judge returns the lowest seed whose checks failed and the lowest seed that could not
// be judged.
func judge(rs []*engine.Result) (kill, unjudged *engine.Result) {
	for _, r := range rs {
		switch {
		case r.Verdict == engine.VerdictFail && (kill == nil || r.Seed < kill.Seed):
			kill = r
		case r.Failed() && r.Verdict != engine.VerdictFail && (unjudged == nil || r.Seed < unjudged.Seed):
			unjudged = r
		}
	}
	return kill, unjudged
}

// mutantOutcome fills in a mutant's outcome from its sweep.
func mutantOutcome(mr *mutantResult, kill, unjudged *engine.Result, replay func(seed uint64) string) {
	switch {
	case kill != nil:
		mr.Outcome, mr.Killed, mr.Seed = "killed", true, kill.Seed
		if kill.Failure != nil {
			mr.Reason = kill.Failure.Reason
		}
		mr.Replay = replay(kill.Seed)
	case unjudged != nil:
		mr.Outcome, mr.Seed = "unknown", unjudged.Seed
		why := unjudged.Error
		if unjudged.Failure != nil {
			why = unjudged.Failure.Reason
		}
		mr.Reason = fmt.Sprintf("seed %d could not be judged (%s): %s", unjudged.Seed, unjudged.Verdict, why)
		mr.Replay = replay(unjudged.Seed)
	default:
		mr.Outcome = "survived"
	}
}

func cmdMutate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mutate", stderr)
	cfgPath := fs.String("c", "seedfall.json", "config `file`")
	seedSpec := fs.String("seeds", "1-200", "seeds per mutant")
	ops := fs.String("ops", "", "comma-separated operators (default: the config's \"mutate\" list, else all)")
	out := fs.String("out", "", "write the mutation report as JSON to `file`")
	jsonOut := fs.Bool("json", false, "print JSON")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel workers")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	seeds, err := seedspec.Parse(*seedSpec)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall mutate: -%v\n", err)
		return exitUsage
	}
	sim, code := loadAndPrepare(ctx, *cfgPath, stderr, true)
	if sim == nil {
		return code
	}
	defer sim.Close()
	operators := engineapi.MutationNames()
	if len(sim.Config().Mutate) > 0 {
		operators = sim.Config().Mutate
	}
	if *ops != "" {
		operators = strings.Split(*ops, ",")
		for _, o := range operators {
			if !slices.Contains(engineapi.MutationNames(), o) {
				fmt.Fprintf(stderr, "seedfall mutate: -ops: %q is not an operator (want %s)\n", o, strings.Join(engineapi.MutationNames(), ", "))
				return exitUsage
			}
		}
	}
	var progress func(mutantResult)
	if !*jsonOut {
		progress = func(mr mutantResult) { printMutant(stdout, mr) }
	}
	rep, err := runMutants(ctx, sim, *cfgPath, seeds, operators, *workers, stderr, progress)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall mutate: %v\n", err)
		return exitUsage
	}
	rep.Seeds = *seedSpec
	if *out != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "seedfall mutate: -out: %v\n", err)
			return exitUsage
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		fmt.Fprintf(stdout, "\nmutation score %s (%d seeds per mutant)\n", rep.Score, len(seeds))
		for _, m := range rep.Mutants {
			if m.Outcome == "unknown" {
				fmt.Fprintf(stdout, "unknown mutant %s: %s; it counts as not killed\n", m.Name, m.Reason)
			} else if m.Outcome == "survived" {
				if m.Kind == "call-site" {
					fmt.Fprintf(stdout, "surviving call-site mutant: the fsync at %s is either unnecessary or its loss is invisible to the workload\n", m.Site)
				} else {
					fmt.Fprintf(stdout, "surviving mutant %s: the checks cannot see this durability bug; strengthen the workload (read back acknowledged data after crashes)\n", m.Name)
				}
			}
		}
	}
	if rep.Killed < rep.Total {
		return exitFail
	}
	return exitPass
}

// runMutants is `seedfall mutate` without its output: the unmutated sweep must pass,
// then every applicable operator and fsync call site runs over seeds until a check
// fails. progress (may be nil) sees each mutant as it is decided; log gets the steps.
func runMutants(ctx context.Context, sim *engine.Sim, cfgPath string, seeds []uint64, operators []string, workers int, log io.Writer, progress func(mutantResult)) (mutateReport, error) {
	pool, err := cli.NewPool(sim, workers, "")
	if err != nil {
		return mutateReport{}, err
	}
	defer pool.Close()
	sp := cli.SweepSpec{Sim: sim, Workers: workers, Pool: pool}
	// First, the unmutated system must pass: a mutant of a failing system proves nothing.
	fmt.Fprintf(log, "unmutated sweep of %d seeds…\n", len(seeds))
	sp.Seeds = seeds
	base, err := cli.Sweep(ctx, sp)
	if err != nil {
		return mutateReport{}, err
	}
	for _, r := range base {
		if r.Failed() {
			return mutateReport{}, fmt.Errorf("the unmutated system already fails on seed %d (%s); mutation testing needs a passing sweep: fix the failure or use a passing config", r.Seed, r.Failure.Reason)
		}
	}
	rep := mutateReport{Config: cfgPath, Seeds: seedspec.Format(seeds)}
	var sites []string
	for _, r := range base {
		for _, s := range r.SyncSites {
			if !slices.Contains(sites, s) {
				sites = append(sites, s)
			}
		}
	}
	slices.Sort(sites)
	var use engine.RunStats
	for _, r := range base {
		use.Fsyncs += r.Stats.Fsyncs
		use.Fdatasyncs += r.Stats.Fdatasyncs
		use.DirSyncs += r.Stats.DirSyncs
		use.OSyncWrites += r.Stats.OSyncWrites
		use.Replacing += r.Stats.Replacing
	}
	strict := sim.Config().StrictDirs
	type mutant struct{ name, kind, site, mutation string }
	var ms []mutant
	for _, o := range operators {
		ms = append(ms, mutant{name: o, kind: "os", mutation: o})
	}
	for _, s := range sites {
		ms = append(ms, mutant{name: "fsync-noop@" + s, kind: "call-site", site: s, mutation: engine.MutSitePrefix + s})
	}
	for _, m := range ms {
		if why := notApplicable(m.mutation, use, strict); why != "" {
			mr := mutantResult{Name: m.name, Kind: m.kind, Site: m.site, Outcome: "n/a", NotApplicable: why}
			rep.Mutants = append(rep.Mutants, mr)
			if progress != nil {
				progress(mr)
			}
			continue
		}
		sp.Mutation = m.mutation
		kill, unjudged, n, err := sweepUntilFail(ctx, sp, seeds)
		if err != nil {
			return mutateReport{}, fmt.Errorf("%s: %w", m.name, err)
		}
		mr := mutantResult{Name: m.name, Kind: m.kind, Site: m.site, Seeds: n}
		mutantOutcome(&mr, kill, unjudged, func(seed uint64) string {
			return cli.ReplayCommand(cfgPath, seed, "-mutation '"+m.mutation+"'")
		})
		if mr.Killed {
			rep.Killed++
		}
		rep.Mutants = append(rep.Mutants, mr)
		if progress != nil {
			progress(mr)
		}
	}
	for _, m := range rep.Mutants {
		if m.NotApplicable == "" {
			rep.Total++
		}
	}
	rep.Score = fmt.Sprintf("%d/%d", rep.Killed, rep.Total)
	return rep, nil
}

// printMutant prints one decided mutant as `seedfall mutate` does.
func printMutant(w io.Writer, mr mutantResult) {
	switch mr.Outcome {
	case "n/a":
		fmt.Fprintf(w, "n/a       %-40s %s\n", mr.Name, mr.NotApplicable)
	case "killed":
		fmt.Fprintf(w, "killed    %-40s seed %d: %s\n", mr.Name, mr.Seed, oneLine(mr.Reason, 90))
	case "unknown":
		fmt.Fprintf(w, "UNKNOWN   %-40s %s\n", mr.Name, oneLine(mr.Reason, 120))
	default:
		fmt.Fprintf(w, "SURVIVED  %-40s %d seeds passed\n", mr.Name, mr.Seeds)
	}
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// notApplicable says why a mutation cannot change this system's behaviour, from what
// the unmutated sweep did ("" when it applies).
func notApplicable(mutation string, use engine.RunStats, strict bool) string {
	switch {
	case mutation == engine.MutFsyncNoop || mutation == engine.MutReorderSync:
		if use.Fsyncs+use.Fdatasyncs+use.DirSyncs == 0 {
			return "the system never calls fsync"
		}
	case mutation == engine.MutFdatasyncNoop:
		if use.Fdatasyncs == 0 {
			return "the system never calls fdatasync"
		}
	case mutation == engine.MutDirFsyncNoop:
		if !strict {
			return "directory fsync has no effect without strict_dirs (namespace operations are journaled)"
		}
		if use.DirSyncs == 0 {
			return "the system never fsyncs a directory"
		}
	case mutation == engine.MutOSyncIgnored:
		if use.OSyncWrites == 0 {
			return "the system never writes with O_SYNC or O_DSYNC"
		}
	case mutation == engine.MutRenameNonAtom:
		if use.Replacing == 0 {
			return "the system never renames over an existing file"
		}
	case strings.HasPrefix(mutation, engine.MutSitePrefix) && !strict:
		if strings.HasSuffix(mutation, " (dir)") {
			return "directory fsync has no effect without strict_dirs"
		}
	}
	return ""
}
