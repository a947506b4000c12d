package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
)

// Interleave is a node's "interleave" field: build the node with a Go runtime whose
// scheduler lets seedfall choose, from a seeded stream of the incarnation's own, which
// ready goroutine runs next (docs/interleave.md). In the config it is true, false or an
// object, {"trace": true}.
type Interleave struct {
	// On builds the node with the interleaving runtime.
	On bool `json:"-"`
	// Trace writes a trace line for every choice ("n1#1 interleave 2 of 3"). Off by
	// default: a busy node makes thousands.
	Trace bool `json:"trace,omitempty"`
}

// IsZero makes an interleave that is off disappear from a marshaled config.
func (il Interleave) IsZero() bool { return !il.On }

// MarshalJSON writes true, false or the object form.
func (il Interleave) MarshalJSON() ([]byte, error) {
	if !il.On || !il.Trace {
		return json.Marshal(il.On)
	}
	type plain Interleave
	return json.Marshal(plain(il))
}

// UnmarshalJSON reads true, false or an object ({"trace": true}, which turns it on).
func (il *Interleave) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		type plain Interleave
		var v plain
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return badInterleave(b)
		}
		*il = Interleave(v)
		il.On = true
		return nil
	}
	var on bool
	if err := json.Unmarshal(b, &on); err != nil {
		return badInterleave(b)
	}
	*il = Interleave{On: on}
	return nil
}

// badInterleave is an *json.UnmarshalTypeError so that the decoder fills in the field's
// path, which ParseConfig puts in the message.
func badInterleave(b []byte) error {
	v := string(b)
	if len(v) > 80 {
		v = v[:77] + "..."
	}
	return &json.UnmarshalTypeError{Value: v, Type: reflect.TypeFor[Interleave]()}
}

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
