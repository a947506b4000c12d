package engine_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// TestGeneratePlan: the plan GeneratePlan draws from time 0 is the seed's own (a run
// with it is the run without a plan, trace for trace), and from a later moment it draws
// only faults after that moment, the same ones each time.
func TestGeneratePlan(t *testing.T) {
	s := kvlogSim(t, "seedfall.json")
	ctx := context.Background()
	for _, seed := range []uint64{2, 3} {
		p := engineapi.GeneratePlan(s, seed, 0)
		if len(p.Faults) == 0 {
			t.Fatalf("seed %d: no faults drawn", seed)
		}
		own := s.Run(ctx, seed, engine.RunOptions{})
		given := s.Run(ctx, seed, engine.RunOptions{Plan: p})
		if own.TraceHash != given.TraceHash {
			t.Errorf("seed %d: the run with GeneratePlan's plan differs from the seed's own run", seed)
		}
		const from = 2_000_000_000
		later := engineapi.GeneratePlan(s, seed, from)
		for _, f := range later.Faults {
			if f.AtNS <= from {
				t.Errorf("seed %d: fault %s drawn from %d is not after it", seed, f, int64(from))
			}
		}
		if !reflect.DeepEqual(later, engineapi.GeneratePlan(s, seed, from)) {
			t.Errorf("seed %d: two draws differ", seed)
		}
	}
}

// TestRenumberFaults: a crash pinned to a disk op belongs to the life after the
// restarting crashes before it.
func TestRenumberFaults(t *testing.T) {
	fs := engineapi.RenumberFaults([]engine.Fault{
		{AtNS: 1, Kind: engine.FaultCrash, Node: "a", RestartNS: 5},
		{AtNS: 2, Kind: engine.FaultCrash, Node: "b", RestartNS: 5},
		{AtNS: 3, Kind: engine.FaultCrash, Node: "a", DiskOp: 9, Incarnation: 1, RestartNS: 5},
		{AtNS: 4, Kind: engine.FaultFsyncEIO, Node: "a", DiskOp: 2, Incarnation: 7},
	})
	if fs[2].Incarnation != 2 || fs[3].Incarnation != 3 {
		t.Errorf("incarnations %d and %d, want 2 and 3", fs[2].Incarnation, fs[3].Incarnation)
	}
}
