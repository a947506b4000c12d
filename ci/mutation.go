package ci

import (
	"context"

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
