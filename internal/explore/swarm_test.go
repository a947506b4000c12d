package explore

import (
	"reflect"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestSwarmOperators: with swarm, explore adds reswarm, which runs the parent's seed
// under a new draw and a plan generated at it; add-fault and new-future draw at the
// parent's draw; derived runs keep it. Without swarm the operators are the same as
// before (the negative control: an exploration without swarm draws as it did).
func TestSwarmOperators(t *testing.T) {
	plain := &Env{Generate: func(uint64, int64) []engine.Fault { return nil }}
	if ops := plain.ops(); len(ops) != len(Ops) {
		t.Fatalf("without swarm: %d operators, want %d", len(ops), len(Ops))
	}
	var genAt []engine.SwarmDraw
	env := &Env{
		Generate: func(seed uint64, from int64) []engine.Fault {
			t.Fatal("Generate without the entry's draw")
			return nil
		},
		GenerateSwarm: func(sw engine.SwarmDraw, seed uint64, from int64) []engine.Fault {
			genAt = append(genAt, sw)
			return []engine.Fault{{AtNS: from + 1, Kind: engine.FaultPartition, Node: "server", Peers: []string{"client"}, DurationNS: 1e8}}
		},
		DrawSwarm: func(seed uint64) engine.SwarmDraw { return engine.SwarmDraw{"crash_per_sec": float64(seed%7) / 10} },
	}
	ops := env.ops()
	if len(ops) != len(Ops)+1 || ops[len(ops)-1].Name != "reswarm" {
		t.Fatalf("with swarm: operators %d, last %q", len(ops), ops[len(ops)-1].Name)
	}
	p := parent()
	p.Swarm = engine.SwarmDraw{"crash_per_sec": 0.5, "partition_per_sec": 0.2}
	seed, fs, sw, ok := reswarm(testRand(1), p, env)
	if !ok || seed != p.Seed || len(fs) != 1 || reflect.DeepEqual(sw, p.Swarm) || !reflect.DeepEqual(genAt[0], sw) {
		t.Fatalf("reswarm: seed %d, %d faults, draw %v (generated at %v)", seed, len(fs), sw, genAt)
	}
	if _, _, ok := addFault(testRand(2), p, env); !ok || !reflect.DeepEqual(genAt[1], p.Swarm) {
		t.Fatalf("add-fault drew at %v, want the parent's draw %v", genAt[1:], p.Swarm)
	}
	if _, _, ok := newFuture(testRand(3), p, env); !ok || !reflect.DeepEqual(genAt[2], p.Swarm) {
		t.Fatalf("new-future drew at %v, want the parent's draw %v", genAt[2:], p.Swarm)
	}
	// A run derived by another operator carries the parent's draw in its plan.
	st := &State{Features: map[string]int{}, OpStats: map[string]*OpStat{}, Corpus: []*Entry{p}, corpusRun: []int{1}}
	p.Features = []string{"f"}
	st.Features["f"] = 1
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		r := derive(testRand(100+i), st, env, 0.01)
		if r.Plan == nil {
			continue
		}
		seen[r.Op] = true
		if r.Op != "reswarm" && !reflect.DeepEqual(r.Plan.Swarm, p.Swarm) {
			t.Fatalf("%s: plan draw %v, want the parent's %v", r.Op, r.Plan.Swarm, p.Swarm)
		}
		if r.Op == "reswarm" && reflect.DeepEqual(r.Plan.Swarm, p.Swarm) {
			t.Fatalf("reswarm kept the parent's draw")
		}
	}
	if !seen["reswarm"] || !seen["drop-fault"] {
		t.Fatalf("operators used: %v", seen)
	}
}
