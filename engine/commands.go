package engine

import (
	"context"

	"github.com/seedfall/seedfall/engine/internal/build"
)

// Commands is what seedfall's own commands, workers and explorer need from the engine
// and an embedder does not. Its methods are typed, so the compiler checks every call,
// and they belong to an unexported type, so `go doc` lists none of them in the engine's
// API (engine/api_test.go counts it). Only internal/engineapi calls them
// (TestCommandsOnlyFromEngineapi); everything else goes through that package, whose
// documentation says what each is for. No promise of compatibility holds for them.
//
// The explorer (internal/explore) needs fault plans drawn from the config's rates for a
// window of virtual time, and the renumbering of faults pinned to disk ops after a plan
// was edited: both are the functions the engine itself uses (a run without a plan,
// cause's re-randomized futures, shrink), so an edited plan means what the engine means
// by it. Worker processes need the built modules, the CLI the build counts, the coverage
// profile and the mutation operators' names for checking its flags before a run.
// seedfall crashes needs the probe's crash points, and the CLI and the Action the
// upgrade-from revision.
var Commands commands

type commands struct{}

// GeneratePlan is (*Sim).generatePlan.
func (commands) GeneratePlan(s *Sim, seed uint64, from int64) *FaultPlan {
	return s.generatePlan(seed, from)
}

// GeneratePlanSwarm is (*Sim).generatePlanSwarm.
func (commands) GeneratePlanSwarm(s *Sim, sw SwarmDraw, seed uint64, from int64) *FaultPlan {
	return s.generatePlanSwarm(sw, seed, from)
}

// DrawSwarm is seed's swarm draw for s's config (nil without swarm).
func (commands) DrawSwarm(s *Sim, seed uint64) SwarmDraw { return s.drawSwarmFor(seed) }

// RenumberFaults is renumber.
func (commands) RenumberFaults(fs []Fault) []Fault { return renumber(fs) }

// WasmPaths are s's built modules.
func (commands) WasmPaths(s *Sim) []string { return s.wasmPaths }

// WriteCoverageProfile is writeCoverageProfile.
func (commands) WriteCoverageProfile(dir string, cfg *Config) (string, error) {
	return writeCoverageProfile(dir, cfg)
}

// BuildCounts is how many node builds in this process ran go build and how many found
// their output unchanged.
func (commands) BuildCounts() (ran, skipped int64) { return build.Counts() }

// MutationNames lists the OS-level mutation operators.
func (commands) MutationNames() []string { return mutationNames() }

// CheckMutation is checkMutation.
func (commands) CheckMutation(m string) error { return checkMutation(m) }

// CrashPoints is (*Sim).crashPoints.
func (commands) CrashPoints(ctx context.Context, s *Sim, seed uint64, opt crashStatesOptions) ([]crashPoint, *Result, error) {
	return s.crashPoints(ctx, seed, opt)
}

// ValidateSwarm is SwarmDraw.validate.
func (commands) ValidateSwarm(d SwarmDraw) error { return d.validate() }

// SetUpgradeFrom is (*Config).setUpgradeFrom.
func (commands) SetUpgradeFrom(c *Config, rev string) ([]string, error) { return c.setUpgradeFrom(rev) }

// generatePlan draws the faults the config's rates give for virtual times in
// (from, horizon], from the plan stream of seed: the same draw as a run of that seed
// without a plan (from 0) or as cause's re-randomized future after moment from. It is a
// pure function of the config, seed and from.
// Under swarm it draws at the seed's own swarm draw (swarm.go), which the plan records.
func (s *Sim) generatePlan(seed uint64, from int64) *FaultPlan {
	return s.generatePlanSwarm(s.drawSwarmFor(seed), seed, from)
}

// generatePlanSwarm is generatePlan at the rates of a given swarm draw (nil: the
// config's own): an explorer that keeps a run's swarm, or draws another, generates
// faults for it. The plan records the draw.
func (s *Sim) generatePlanSwarm(sw SwarmDraw, seed uint64, from int64) *FaultPlan {
	cfg := s.cfg
	if sw != nil {
		cfg = sw.apply(cfg)
	}
	var nodes []*node
	for i, nc := range s.cfg.AllNodes() {
		nodes = append(nodes, &node{idx: i, name: nc.Name, cfg: nc, workload: i == len(s.cfg.Nodes)})
	}
	p := generatePlan(cfg, seed, from, nodes)
	p.Swarm = sw
	return p
}
