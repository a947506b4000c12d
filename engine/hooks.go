package engine

import (
	"github.com/seedfall/seedfall/engine/internal/build"
	"github.com/seedfall/seedfall/internal/enginehook"
)

// What seedfall's own commands need from the engine and an embedder does not; they
// reach it through internal/engineapi. The explorer (internal/explore) needs fault plans
// drawn from the config's rates for a window of virtual time, and the renumbering of
// faults pinned to disk ops after a plan was edited: both are the functions the engine
// itself uses (a run without a plan, cause's re-randomized futures, shrink), so an
// edited plan means what the engine means by it. Worker processes need the built
// modules, the CLI the build counts, the coverage profile and the mutation operators'
// names for checking its flags before a run. seedfall crashes needs the probe's crash
// points, and the CLI and the Action the upgrade-from revision.
func init() {
	enginehook.GeneratePlan = func(s *Sim, seed uint64, from int64) *FaultPlan { return s.generatePlan(seed, from) }
	enginehook.GeneratePlanSwarm = func(s *Sim, sw SwarmDraw, seed uint64, from int64) *FaultPlan {
		return s.generatePlanSwarm(sw, seed, from)
	}
	enginehook.DrawSwarm = func(s *Sim, seed uint64) SwarmDraw { return s.drawSwarmFor(seed) }
	enginehook.RenumberFaults = renumber
	enginehook.WasmPaths = func(s *Sim) []string { return s.wasmPaths }
	enginehook.WriteCoverageProfile = writeCoverageProfile
	enginehook.BuildCounts = build.Counts
	enginehook.MutationNames = mutationNames
	enginehook.CheckMutation = checkMutation
	enginehook.CrashPoints = (*Sim).crashPoints
	enginehook.ValidateSwarm = SwarmDraw.validate
	enginehook.SetUpgradeFrom = (*Config).setUpgradeFrom
}

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
