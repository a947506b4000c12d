package ci

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/seedfall/seedfall/engine"
)

// CrashSearch is what one seed's crash-state search (`seedfall crashes
// -own-faults=false`, docs/crashes.md) found: every crash point of the config's first
// node over the seed's workload without its own random faults, each distinct crash
// state there run with a restart and a recheck crash.
type CrashSearch struct {
	// Test is the simulation test searched, in a sweep of several ("" otherwise).
	Test string `json:"test,omitempty"`
	Seed uint64 `json:"seed"`
	// States is how many distinct crash states the probe found; Ran how many ran (fewer
	// when a budget left some out: Complete is then false).
	States   int  `json:"states"`
	Ran      int  `json:"ran"`
	Complete bool `json:"complete"`
	// Findings are the distinct failures (by signature), each at the first state, in op
	// order, that showed it.
	Findings []CrashFinding `json:"findings"`
	// Skipped, when set, says why the search did not run: a power loss is not in the
	// config's fault model (no crash_per_sec), so a state that loses what was not synced
	// would be no bug of the system as the config describes it.
	Skipped string `json:"skipped,omitempty"`
}

// CrashFinding is one distinct failure of a crash-state search: a call site at which a
// single crash (and the recheck after it) fails the workload.
type CrashFinding struct {
	// Site is the call site of the disk op the crash came in (file:line); Failing of the
	// site's States fail with this failure.
	Site    string `json:"site"`
	Failing int    `json:"failing"`
	States  int    `json:"states"`
	// Where is the crash: "disk op #9 of server#1, state torn at 1/2".
	Where string `json:"where"`
	// Result is the failing state's run, with a trace excerpt; its Failure carries the
	// signature, so one bug found by the sweep and by the search is one signature.
	Result engine.Result `json:"result"`
	// Plan is the state's fault plan (the crash and its recheck), replayed exactly by
	// `seedfall replay -seed SEED -faults`.
	Plan []engine.Fault `json:"plan"`
}

// searchHit is a search finding in a group: the seed searched and what it found.
type searchHit struct {
	seed uint64
	CrashFinding
}

// searchDue says whether this run searches crash states: on every event, when the
// input crash-seeds names seeds, on the sweep's first shard only (a shard of the deep
// workflow's matrix would search the same seeds again).
func (r *runner) searchDue() bool {
	return r.in.CrashSeeds != "" && r.in.Shard.Index <= 1
}

// searchBudget is how many states each search runs: the input crash-budget on pushes
// and pull requests, every state on deep, scheduled and manual runs.
func (r *runner) searchBudget(mode string) int {
	if mode == modeDeep || r.ev.Name == "schedule" || r.ev.Name == "workflow_dispatch" {
		return 0
	}
	return r.in.CrashBudget
}

// search runs the crash-state search on the crash-seeds. A search that cannot run is a
// warning: the sweep's verdict stands.
func (r *runner) search(ctx context.Context, mode string) []*CrashSearch {
	if !r.searchDue() {
		return nil
	}
	seeds, err := parseSeeds(r.in.CrashSeeds)
	if err != nil {
		r.action.Warningf("seedfall: crash states: %v", err)
		return nil
	}
	budget := r.searchBudget(mode)
	targets := []TestTarget{{Config: r.in.Config}}
	if len(r.in.Tests) > 0 {
		targets = r.in.Tests
	}
	var out []*CrashSearch
	for _, t := range targets {
		of, dir := "", filepath.Join(r.in.Out, "crashes")
		if t.Name != "" {
			of, dir = t.Name+": ", filepath.Join(dir, t.Name)
		}
	seeds:
		for _, seed := range seeds {
			what := "every crash state"
			if budget > 0 {
				what = fmt.Sprintf("up to %d crash states", budget)
			}
			r.printf("seedfall ci: %s%s of seed %d (the config's first node, its workload without random faults)", of, what, seed)
			s, err := r.eng.Crashes(ctx, t.Config, seed, dir, budget)
			if err != nil {
				r.action.Warningf("seedfall: %scrash states of seed %d: %v", of, seed, err)
				continue
			}
			if s.Skipped != "" {
				r.printf("seedfall ci: %sno crash-state search: %s", of, s.Skipped)
				break seeds
			}
			s.Seed, s.Test = seed, t.Name
			for i := range s.Findings {
				if t.Name != "" {
					tagTest(&s.Findings[i].Result, t.Name)
				}
			}
			r.printf("seedfall ci: %sseed %d: %d of %d crash states ran, %d distinct failures", of, seed, s.Ran, s.States, len(s.Findings))
			out = append(out, s)
		}
	}
	return out
}

// mergeSearch adds the searches' findings to the sweep's groups: a finding whose
// signature the sweep also failed with joins that group (one bug, one signature), any
// other becomes a group of its own, after the sweep's.
func mergeSearch(groups []*group, searches []*CrashSearch) []*group {
	bySig := map[string]*group{}
	for _, g := range groups {
		bySig[g.sig] = g
	}
	for _, s := range searches {
		for _, f := range s.Findings {
			sig := resultSignature(&f.Result)
			if sig == "" {
				continue // not a failure: nothing to report
			}
			g := bySig[sig]
			if g == nil {
				g = &group{sig: sig}
				bySig[sig] = g
				groups = append(groups, g)
			}
			g.found = append(g.found, searchHit{seed: s.Seed, CrashFinding: f})
		}
	}
	return groups
}

// resultSignature is the signature of r's failure, as the sweep's grouping gives it.
func resultSignature(r *engine.Result) string {
	if !r.Failed() {
		return ""
	}
	if r.Failure != nil && r.Failure.Signature != "" {
		return r.Failure.Signature
	}
	return engine.Signature(r)
}

// searchedFully are the seeds whose search ran every state this run: a signature it
// found before and not now is fixed only then (a budget may simply not have reached it).
func searchedFully(searches []*CrashSearch) map[seedKey]bool {
	out := map[seedKey]bool{}
	for _, s := range searches {
		if s.Complete {
			out[seedKey{s.Test, s.Seed}] = true
		}
	}
	return out
}

// searchLine sums the searches up for the report: "crash-state search of seed 1: 200 of
// 1149 states (budget), 1 distinct failure".
func searchLine(searches []*CrashSearch) string {
	if len(searches) == 0 {
		return ""
	}
	var seeds []uint64
	ran, states, findings := 0, 0, 0
	for _, s := range searches {
		seeds = append(seeds, s.Seed)
		ran += s.Ran
		states += s.States
		findings += len(s.Findings)
	}
	slices.Sort(seeds)
	of := fmt.Sprintf("%d states", ran)
	if ran < states {
		of = fmt.Sprintf("%d of %d states (budget)", ran, states)
	}
	which := "seed"
	if len(seeds) > 1 {
		which = "seeds"
	}
	return fmt.Sprintf("crash-state search of %s %s: %s, %s", which, seedList(seeds, 10), of,
		plural(findings, "distinct failure", "distinct failures"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
