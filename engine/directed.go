package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Directed faults are the workload's own: it crashes (now, or during the node's next disk
// op), kills, restarts, partitions, heals or pauses a node at a moment its code chooses (sim.Crash and the rest; simtest's T),
// as gosim's and turmoil's tests do, where the random faults come from the plan. The
// seedfall.fault host call asks for one; the fault takes effect at once, in virtual
// time: the call schedules it now and yields, so the scheduler applies it before the
// workload runs on. It goes through the kind's own apply, so it is traced, counted and
// recorded in the run's faults like a random one, marked Directed, with these
// differences:
//
//   - a crash or a kill keeps the node down until the workload restarts it (FaultRestart),
//     whatever restart a random fault scheduled for it;
//   - a partition without a duration lasts until the workload heals it (FaultHeal);
//   - quiet periods (sim.StopFaults) do not drop it: the test asked for it;
//   - a plan replays without it: the workload asks again, at the same moment, so a
//     plan's directed faults are a record, not an instruction (installPlan), and shrink
//     never drops them (it could not: the workload would ask anyway).
//
// A request the run cannot honour (an unknown node, the workload as the target, a heal
// of a partition the workload did not make) is refused with an error for the caller,
// traced, and changes nothing.

// directedNote ends the text and trace line of a directed fault: the workload's request
// or the config's schedule, the test's own either way.
const directedNote = ", by the test"

// directedReq is the seedfall.fault request: JSON, in the shape of a Fault's fields.
type directedReq struct {
	Kind       FaultKind `json:"kind"`
	Node       string    `json:"node"`
	Peers      []string  `json:"peers,omitempty"`
	DurationNS int64     `json:"duration_ns,omitempty"`
	// MidOp: a crash during the node's next disk op, rather than now.
	MidOp bool `json:"mid_op,omitempty"`
}

// cutKey names the link between two nodes, either way round.
func cutKey(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// directedFault checks a request of inc and schedules its fault for now.
func (w *world) directedFault(inc *incarnation, data []byte) error {
	var r directedReq
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("bad request %q: %v", data, err)
	}
	n := w.byName[r.Node]
	if n == nil {
		return fmt.Errorf("%s %q: no such node (nodes: %s)", r.Kind, r.Node, w.nodeNames())
	}
	if r.DurationNS < 0 {
		return fmt.Errorf("%s %s: a negative duration", r.Kind, r.Node)
	}
	switch r.Kind {
	case FaultCrash, FaultKill, FaultRestart, FaultPause:
		if n.workload {
			return fmt.Errorf("%s %s: the workload's own life is the run: it cannot be crashed, killed, restarted or paused", r.Kind, r.Node)
		}
		if len(r.Peers) > 0 {
			return fmt.Errorf("%s %s: peers are for a partition or a heal", r.Kind, r.Node)
		}
		if r.Kind == FaultPause && r.DurationNS == 0 {
			return fmt.Errorf("pause %s: a pause needs a duration", r.Node)
		}
		if r.Kind != FaultPause && r.DurationNS != 0 {
			return fmt.Errorf("%s %s: a duration is for a pause or a partition (a crashed node restarts when the workload restarts it)", r.Kind, r.Node)
		}
	case FaultPartition, FaultHeal:
		if len(r.Peers) == 0 {
			return fmt.Errorf("%s %s: from which nodes? (no peers)", r.Kind, r.Node)
		}
		if r.Kind == FaultHeal && r.DurationNS != 0 {
			return fmt.Errorf("heal %s: a heal has no duration", r.Node)
		}
		for _, p := range r.Peers {
			if w.byName[p] == nil {
				return fmt.Errorf("%s %s from %q: no such node (nodes: %s)", r.Kind, r.Node, p, w.nodeNames())
			}
			if p == r.Node {
				return fmt.Errorf("%s %s from itself", r.Kind, r.Node)
			}
			_, cut := w.heldCuts[cutKey(r.Node, p)]
			switch {
			case r.Kind == FaultPartition && r.DurationNS == 0 && cut:
				return fmt.Errorf("partition %s from %s: the workload cut that link already (heal it first)", r.Node, p)
			case r.Kind == FaultHeal && !cut:
				return fmt.Errorf("heal %s from %s: the workload made no partition between them that is still in effect (a random partition, or one with a duration, heals on its own)", r.Node, p)
			}
		}
	default:
		return fmt.Errorf("%q is not a fault the workload can ask for (want crash, kill, restart, partition, heal or pause)", r.Kind)
	}
	if r.MidOp && r.Kind != FaultCrash {
		return fmt.Errorf("%s %s: mid_op is for a crash", r.Kind, r.Node)
	}
	f := Fault{Kind: r.Kind, Node: r.Node, Peers: r.Peers, DurationNS: r.DurationNS, MidOp: r.MidOp, Directed: true}
	w.schedule(w.now, func() {
		if w.done {
			return
		}
		f.AtNS = w.now
		specOf(f.Kind).apply(w, w.byName[f.Node], f)
	})
	return nil
}

// nodeNames lists the run's nodes for messages: "db, n2 and workload".
func (w *world) nodeNames() string {
	var names []string
	for _, n := range w.nodes {
		names = append(names, n.name)
	}
	slices.Sort(names)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// DirectedFault is seedfall.fault: it returns "" when the fault took effect, else why it
// was refused.
func (inc *incarnation) DirectedFault(req []byte) string {
	inc.Advance()
	if err := inc.w.directedFault(inc, req); err != nil {
		inc.w.tracef(inc.label, "directed fault refused: %v", err)
		return err.Error()
	}
	inc.yieldNow() // the scheduler applies it before this incarnation runs on
	return ""
}

// undirected is fs without the directed faults: what a replay of a plan applies itself.
func undirected(fs []Fault) []Fault {
	if !slices.ContainsFunc(fs, func(f Fault) bool { return f.Directed }) {
		return fs
	}
	var out []Fault
	for _, f := range fs {
		if !f.Directed {
			out = append(out, f)
		}
	}
	return out
}

// restartKind and healKind are the two kinds only a directed fault (or a plan that
// states one) produces.
func restartKind() *kindSpec {
	return &kindSpec{
		kind: FaultRestart,
		apply: func(w *world, n *node, f Fault) {
			n.heldDown = false
			if n.inc != nil {
				w.tracef("fault", "restart %s: it is up%s", n.inc.label, noteOf(f))
				return
			}
			w.applied = append(w.applied, f)
			w.tracef("fault", "restart %s%s", n.name, noteOf(f))
			w.start(n)
		},
		restarts: func(Fault) bool { return true },
	}
}

func healKind() *kindSpec {
	return &kindSpec{
		kind: FaultHeal,
		apply: func(w *world, n *node, f Fault) {
			healed := false
			for _, p := range f.Peers {
				k := cutKey(f.Node, p)
				cut, ok := w.heldCuts[k]
				if !ok {
					continue
				}
				delete(w.heldCuts, k)
				cut.apply(-1)
				healed = true
			}
			if !healed {
				w.tracef("fault", "%s: nothing to heal", f.text(faultUntimed))
				return
			}
			w.applied = append(w.applied, f)
			w.tracef("fault", "%s", f.text(faultUntimed))
		},
		detail: func(b *strings.Builder, f Fault) {
			fmt.Fprintf(b, " <-> %s", strings.Join(f.Peers, ","))
		},
		check: func(f Fault) error {
			if len(f.Peers) == 0 {
				return fmt.Errorf("a heal needs peers")
			}
			return nil
		},
	}
}

// noteOf is directedNote for a directed fault, "" for another.
func noteOf(f Fault) string {
	if f.Directed {
		return directedNote
	}
	return ""
}

// heldCut is one link a directed partition cut until a heal.
type heldCut struct {
	apply func(d int)
}
