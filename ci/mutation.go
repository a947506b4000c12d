package ci

import (
	"context"
	"path/filepath"

	"github.com/seedfall/seedfall/engine"
)

// mutationDue says whether this run does durability mutation testing.
func (r *runner) mutationDue(mode string) bool {
	switch r.in.Mutation {
	case mutationAlways:
		return true
	case mutationDeep:
		return mode == modeDeep || r.ev.Name == "schedule" || r.ev.Name == "workflow_dispatch"
	}
	return false
}

// mutate runs mutation testing when it is due and the sweep passed (a mutant of a
// failing system proves nothing). Problems are warnings: the sweep's verdict stands.
func (r *runner) mutate(ctx context.Context, mode string, results []engine.Result) *Mutation {
	if !r.mutationDue(mode) {
		return nil
	}
	for _, res := range results {
		if res.Failed() {
			r.action.Noticef("seedfall: skipped mutation testing: it needs a sweep that passes, and seed %d failed", res.Seed)
			return nil
		}
	}
	seeds, err := parseSeeds(r.in.MutationSeeds)
	if err != nil {
		r.action.Warningf("seedfall: mutation testing: %v", err)
		return nil
	}
	r.printf("seedfall ci: mutation testing, up to %d seeds per mutant", len(seeds))
	m, err := r.eng.Mutate(ctx, r.in.Config, seeds)
	if err != nil {
		r.action.Warningf("seedfall: mutation testing: %v", err)
		return nil
	}
	m.Run = r.env.RunID
	r.printf("seedfall ci: mutation score %s", m.Score)
	return m
}

// blindMutants are the mutants that the baseline's mutation run killed and that this
// run's did not: the checks went blind to that bug class.
func blindMutants(before, now *Mutation) map[string]bool {
	out := map[string]bool{}
	if before == nil || now == nil {
		return out
	}
	killed := map[string]bool{}
	for _, m := range before.Mutants {
		if m.Killed {
			killed[m.key()] = true
		}
	}
	for _, m := range now.Mutants {
		if killed[m.key()] && !m.Killed && m.Outcome != "n/a" {
			out[m.key()] = true
		}
	}
	return out
}

// CrashSite is a call site at which `seedfall crashes` found failing crash states.
type CrashSite struct {
	Seed    uint64 `json:"seed"`
	Site    string `json:"site"`
	Failing int    `json:"failing"`
	States  int    `json:"states"`
	Reason  string `json:"reason"`
	Replay  string `json:"replay"`
}

// crashes runs the crash-state search on the crash-seeds in deep runs (as mutationDue
// decides for mutation=deep) and annotates each vulnerable site as an error; it returns
// how many there are. A search that cannot run is a warning.
func (r *runner) crashes(ctx context.Context, mode string) int {
	if r.in.CrashSeeds == "" || !(mode == modeDeep || r.ev.Name == "schedule" || r.ev.Name == "workflow_dispatch") {
		return 0
	}
	seeds, err := parseSeeds(r.in.CrashSeeds)
	if err != nil {
		r.action.Warningf("seedfall: crash states: %v", err)
		return 0
	}
	n := 0
	for _, seed := range seeds {
		r.printf("seedfall ci: every crash state of seed %d", seed)
		sites, err := r.eng.Crashes(ctx, r.in.Config, seed, filepath.Join(r.in.Out, "crashes"))
		if err != nil {
			r.action.Warningf("seedfall: crash states of seed %d: %v", seed, err)
			continue
		}
		for _, s := range sites {
			n++
			r.action.Errorf("seedfall: crash-state vulnerability at %s (seed %d): %d of %d states fail: %s; replay: %s", s.Site, seed, s.Failing, s.States, s.Reason, s.Replay)
		}
		r.printf("seedfall ci: seed %d: %d vulnerable call sites", seed, len(sites))
	}
	return n
}
