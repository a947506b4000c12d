package engine

import (
	"fmt"
	"math/rand/v2"

	"github.com/seedfall/seedfall/engine/internal/interleave"
)

// Interleave is a node's "interleave" field: build the node with a Go runtime whose
// scheduler lets seedfall choose, from a seeded stream of the incarnation's own, which
// ready goroutine runs next (docs/interleave.md). In the config it is true, false or an
// object, {"trace": true, "file_ops": true}. Its fields are On (build the node with the
// interleaving runtime), Trace (write a trace line for every choice) and FileOps (a
// scheduling point before every operation on an open file).
type Interleave = interleave.Option

// SchedPick is seedfall.sched_pick: the guest's runtime asks which of its n ready
// goroutines runs next. The answer comes from the incarnation's interleave stream, which
// nothing else draws from, so the rest of the run's randomness is the same with and
// without interleave, and a seed replays exactly.
func (inc *incarnation) SchedPick(n uint32) uint32 {
	if inc.sched == nil {
		return 0
	}
	w := inc.w
	i := uint32(inc.sched.IntN(int(n)))
	w.stats.InterleavePicks++
	if inc.node.cfg.Interleave.Trace {
		w.tracef(inc.label, "interleave %d of %d", i, n)
	}
	return i
}

// interleaveStream is the stream of an incarnation's goroutine choices, from seed (the
// run's, or cause's future seed after the moment it re-randomizes).
func interleaveStream(seed uint64, n *node, life int) *rand.Rand {
	if !n.cfg.Interleave.On {
		return nil
	}
	return streamRand(seed, fmt.Sprintf("interleave/%s/%d", n.name, life))
}

// reseedInterleave gives every live incarnation built with interleave a fresh stream from
// cause's future seed: its goroutines' future interleaving is re-randomized too.
func (w *world) reseedInterleave(fs uint64) {
	for _, n := range w.nodes {
		if inc := n.inc; inc != nil && inc.sched != nil {
			inc.sched = interleaveStream(fs, n, inc.n)
		}
	}
}
