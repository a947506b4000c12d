// Package engineapi is the part of the engine that seedfall's own commands, workers and
// explorer use and an embedder does not: plan generation and renumbering, the built
// modules and build counts, the coverage profile, the mutation operators' names, the
// upgrade-from revision, the crash-state probe of seedfall crashes and its plans, and
// the provenance helpers that saving and replaying plans need. Keeping them here keeps
// engine's public API to what an embedder needs (engine/api_test.go counts it).
//
// The functions that need the engine's insides are methods of engine.Commands, typed and
// unlisted in the engine's API; this package is their only caller.
package engineapi

import (
	"github.com/seedfall/seedfall/engine"
)

// GeneratePlan draws the faults the config's rates give for virtual times in
// (from, horizon], from the plan stream of seed: the same draw as a run of that seed
// without a plan (from 0) or as cause's re-randomized future after moment from. It is a
// pure function of the config, seed and from.
func GeneratePlan(s *engine.Sim, seed uint64, from int64) *engine.FaultPlan {
	return engine.Commands.GeneratePlan(s, seed, from)
}

// GeneratePlanSwarm is GeneratePlan at the rates of a given swarm draw (nil: the
// config's own): an explorer that keeps a run's swarm, or draws another, generates
// faults for it. The plan records the draw.
func GeneratePlanSwarm(s *engine.Sim, sw engine.SwarmDraw, seed uint64, from int64) *engine.FaultPlan {
	return engine.Commands.GeneratePlanSwarm(s, sw, seed, from)
}

// DrawSwarm is the swarm draw of seed for s's config (nil when the config does not ask
// for swarm): which fault kinds are on and at what rates (docs/faults.md, swarm).
func DrawSwarm(s *engine.Sim, seed uint64) engine.SwarmDraw {
	return engine.Commands.DrawSwarm(s, seed)
}

// RenumberFaults returns fs with the incarnation of each fault pinned to a disk op made
// consistent with the crashes before it: a node's k-th life comes after k-1 crashes
// that restart it. Shrink does this after dropping faults; an explorer after adding,
// dropping or moving them.
func RenumberFaults(fs []engine.Fault) []engine.Fault {
	return engine.Commands.RenumberFaults(fs)
}

// WasmPaths are s's built modules, one per node in AllNodes order, then the old build of
// each node with an upgrade: what a worker process is given (PrepareOptions.Wasm) so it
// need not build them again.
func WasmPaths(s *engine.Sim) []string {
	return engine.Commands.WasmPaths(s)
}

// WriteCoverageProfile writes dir/profile.out (engine.CoverageProfileName): the
// coverage data in dir as `go tool covdata textfmt` prints it, with every file named by
// its absolute path on this machine, so that `go tool cover -func` and `-html` read it
// from any directory. A file that a node's patches edit is named by a copy of the
// patched source, written under dir/src/. It returns the profile's path.
func WriteCoverageProfile(dir string, cfg *engine.Config) (string, error) {
	return engine.Commands.WriteCoverageProfile(dir, cfg)
}

// BuildCounts returns how many node builds in this process ran go build and how many
// found their output unchanged.
func BuildCounts() (ran, skipped int64) { return engine.Commands.BuildCounts() }

// MutationNames lists the OS-level mutation operators (engine.MutFsyncNoop, …).
func MutationNames() []string { return engine.Commands.MutationNames() }

// CheckMutation returns an error naming the known operators when m is not one of them
// (or a call-site mutation, engine.MutSitePrefix followed by a location). "" is no
// mutation. Run makes the same check; the CLI makes it first, to fail before building.
func CheckMutation(m string) error { return engine.Commands.CheckMutation(m) }

// SetUpgradeFrom makes rev, a git revision of the repository the config is in, the old
// build of every node with an "upgrade" option, keeping each node's mode: the Action's
// input upgrade-from and the -upgrade-from flag of replay and run, which check a change
// against the data its base revision writes. It returns the names of those nodes, in
// config order. A config without any node with an upgrade is an error: which nodes
// should change builds is the config's choice, not the revision's.
func SetUpgradeFrom(c *engine.Config, rev string) ([]string, error) {
	return engine.Commands.SetUpgradeFrom(c, rev)
}

// ValidateSwarm checks a swarm draw read from a plan: known knobs, values not negative.
func ValidateSwarm(d engine.SwarmDraw) error {
	return engine.Commands.ValidateSwarm(d)
}
