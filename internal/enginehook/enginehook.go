// Package enginehook is where the engine leaves the functions that seedfall's own
// commands need and an embedder does not, so that they are not part of engine's public
// API. engine fills every variable in its init; the variables are untyped because this
// package cannot import engine. Use them through internal/engineapi, which gives them
// their types.
package enginehook

var (
	// GeneratePlan is func(s *engine.Sim, seed uint64, from int64) *engine.FaultPlan.
	GeneratePlan any
	// GeneratePlanSwarm is func(s *engine.Sim, sw engine.SwarmDraw, seed uint64, from int64) *engine.FaultPlan.
	GeneratePlanSwarm any
	// DrawSwarm is func(s *engine.Sim, seed uint64) engine.SwarmDraw.
	DrawSwarm any
	// RenumberFaults is func([]engine.Fault) []engine.Fault.
	RenumberFaults any
	// WasmPaths is func(*engine.Sim) []string.
	WasmPaths any
	// WriteCoverageProfile is func(dir string, cfg *engine.Config) (string, error).
	WriteCoverageProfile any
	// BuildCounts returns how many node builds in this process ran go build and how many
	// found their output unchanged.
	BuildCounts func() (ran, skipped int64)
	// MutationNames lists the OS-level mutation operators.
	MutationNames func() []string
	// CrashPoints is func(*engine.Sim, context.Context, uint64,
	// crashstate.Options[*engine.FaultPlan]) ([]crashstate.Point[engine.Fault],
	// *engine.Result, error).
	CrashPoints any
	// ValidateSwarm is func(engine.SwarmDraw) error.
	ValidateSwarm any
	// SetUpgradeFrom is func(*engine.Config, string) ([]string, error).
	SetUpgradeFrom any
	// CheckMutation returns an error naming the known operators when m is not one.
	CheckMutation func(m string) error
)
