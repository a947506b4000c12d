package engineapi

import (
	"context"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/crashstate"
)

// CrashStatesOptions choose what the crash-state probe looks at (seedfall crashes,
// docs/crashes.md): the node, the range of its disk ops, the distinct states kept per op,
// and the plan to run in place of the seed's own.
type CrashStatesOptions = crashstate.Options[*engine.FaultPlan]

// CrashPoint is one disk op of the node and the distinct crash states found before it.
type CrashPoint = crashstate.Point[engine.Fault]

// CrashState is one distinct crash state at a point.
type CrashState = crashstate.State

// CrashPoints runs seed once and returns the crash points of the node's disk ops with
// their distinct states, and the run's result (whose Faults are the seed's own plan).
// Before each disk op of the chosen node the probe copies the node's disk, crashes the
// copy in each candidate state of a bounded family, and keeps the distinct durable
// images.
func CrashPoints(ctx context.Context, s *engine.Sim, seed uint64, opt CrashStatesOptions) ([]CrashPoint, *engine.Result, error) {
	return engine.Commands.CrashPoints(ctx, s, seed, opt)
}

// CrashStatePlan is the plan that replays state st at point p: the seed's own faults
// applied before the op, and the crash, restarting after restartNS. When recheckNS > 0 a
// second power loss follows recheckNS after the restart (restarting after restartNS), in
// one fixed state, every pending op lost (crash_state [0]): many recovery bugs (a torn
// tail written past, a repair not synced) lose data only at the restart after the one
// that recovered, and losing what was never synced is what any correct system survives.
func CrashStatePlan(seed uint64, p CrashPoint, st CrashState, restartNS, recheckNS int64) *engine.FaultPlan {
	plan := &engine.FaultPlan{Seed: seed, Faults: append([]engine.Fault{}, p.Before...)}
	plan.Faults = append(plan.Faults, engine.Fault{AtNS: p.AtNS, Kind: engine.FaultCrash, Node: p.Node,
		DiskOp: p.DiskOp, Incarnation: p.Incarnation, RestartNS: restartNS, Where: p.Where,
		CrashState: append([]int{}, st.State...)})
	if recheckNS > 0 {
		plan.Faults = append(plan.Faults, engine.Fault{AtNS: p.AtNS + restartNS + recheckNS, Kind: engine.FaultCrash, Node: p.Node, RestartNS: restartNS, CrashState: []int{0}})
	}
	return plan
}
