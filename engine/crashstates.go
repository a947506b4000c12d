package engine

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/internal/crashstate"
)

// Systematic crash states (seedfall crashes, docs/crashes.md). One run of a seed, the
// probe, stops at no fault of its own: before each disk op of the chosen node it copies
// the node's disk, crashes the copy in each candidate state of a bounded family, and
// keeps the distinct durable images. Each kept state becomes a plan: the seed's own
// faults before the op, plus a crash pinned to the op whose CrashState states the
// choices, so that a replay reproduces it exactly. With NoOwnFaults the probe runs the
// seed with an empty plan, so a seed that fails on its own faults is still probed to
// the end of its workload, and each state's plan is the pinned crash alone.

// crashStatesOptions, crashPoint and crashState are internal/crashstate's types (named
// engineapi.CrashStatesOptions, CrashPoint and CrashState), so that they are not part
// of engine's public API.
type (
	crashStatesOptions = crashstate.Options[*FaultPlan]
	crashPoint         = crashstate.Point[Fault]
	crashState         = crashstate.State
)

// DefaultMaxStates is the distinct crash states kept per disk op by default.
const DefaultMaxStates = 8

// ExhaustivePending is the largest number of pending operations for which every subset
// of them is a candidate state (2^n); above it the candidates are ALICE's family.
const ExhaustivePending = 5

// tearSamples is how many tear points of one write are tried: the first, the middle and
// the last (all of them when there are this many or fewer).
const tearSamples = 3

// crashProbe collects crash points during a probe run.
type crashProbe struct {
	opt    crashStatesOptions
	torn   bool
	points []crashPoint
	// eqKey is the incarnation, the segments its host has sent and the faults applied
	// at the last op observed; eqSeen the images kept since that key last changed. A
	// state at a later op with the same key and one of those images is equivalent to
	// one already kept: same disk at the restart, and nobody was told anything since.
	eqKey  [3]int64
	eqSeen map[string]bool
}

// crashPoints runs seed once and returns the crash points of the node's disk ops with
// their distinct states, and the run's result (whose Faults are the seed's own plan:
// none with opt.NoOwnFaults).
func (s *Sim) crashPoints(ctx context.Context, seed uint64, opt crashStatesOptions) ([]crashPoint, *Result, error) {
	plan := opt.Plan
	if opt.NoOwnFaults {
		if plan != nil {
			return nil, nil, fmt.Errorf("crashes: a plan to probe and no own faults exclude each other")
		}
		plan = &FaultPlan{Seed: seed, Faults: []Fault{}}
	}
	if opt.Node == "" && len(s.cfg.Nodes) > 0 {
		opt.Node = s.cfg.Nodes[0].Name
	} else if !s.hasNode(opt.Node) {
		return nil, nil, fmt.Errorf("crashes: no node %q in the config", opt.Node)
	}
	if opt.MaxStates <= 0 {
		opt.MaxStates = DefaultMaxStates
	}
	p := &crashProbe{opt: opt, torn: s.cfg.Faults.TornWrites}
	ro := runOptions{wallBudget: time.Duration(s.cfg.Watchdog), probe: p, plan: plan}
	w := newWorld(s, seed, ro)
	r := w.runProfiled(ctx)
	return p.points, r, nil
}

func (s *Sim) hasNode(name string) bool {
	for _, n := range s.cfg.Nodes {
		if n.Name == name {
			return true
		}
	}
	return false
}

// inflightWrite is a write about to begin: what a crash during it may tear.
type inflightWrite struct {
	ino  disk.Ino
	off  int64
	data []byte
}

// observe is called before disk op n of inc runs; wr is the op when it is a write.
func (p *crashProbe) observe(inc *incarnation, n int64, what string, wr *inflightWrite) {
	if inc.node.name != p.opt.Node || (p.opt.FromOp > 0 && n < p.opt.FromOp) || (p.opt.ToOp > 0 && n > p.opt.ToOp) {
		return
	}
	fs := inc.node.disk
	pend := fs.Pending()
	pt := crashPoint{Node: inc.node.name, Incarnation: inc.n, DiskOp: n, AtNS: inc.w.now, Where: what, Pending: len(pend), Sent: inc.node.host.Sent,
		Before: append([]Fault{}, inc.w.applied...)}
	seen := map[string]bool{}
	if key := [3]int64{int64(inc.n), inc.node.host.Sent, int64(len(inc.w.applied))}; key != p.eqKey || p.eqSeen == nil {
		p.eqKey, p.eqSeen = key, map[string]bool{}
	}
	limit := 8 * p.opt.MaxStates // candidates tried per op, at most
	// try crashes a copy of the disk (after prep, if any, changes it) in candidate c and
	// keeps the state if its image is new; it reports whether the bound allows more.
	try := func(c candidate, inflight int, kind string, prep func(*disk.FS) error) bool {
		if len(pt.States)+pt.Equivalent >= p.opt.MaxStates || pt.Candidates >= limit {
			pt.Bounded = true
			return false
		}
		pt.Candidates++
		cl := fs.Clone()
		defer cl.Discard()
		if prep != nil && prep(cl) != nil {
			return true
		}
		d := &policyChooser{c: c}
		cl.Crash(d, p.torn)
		img := cl.DurableImage()
		if !seen[img] {
			seen[img] = true
			if !p.opt.PerOp && p.eqSeen[img] {
				pt.Equivalent++
				return true
			}
			p.eqSeen[img] = true
			// The first choice is the op in flight's: 0, nothing of it lands.
			pt.States = append(pt.States, crashState{Kind: kind, State: append([]int{inflight}, d.state...), Image: img})
		}
		return true
	}
	// A crash during a write: every pending op kept and the write landed up to one of
	// its tear points (the next op's states cover the rest of what it can leave). These
	// come first, so that no bound on the pending ops' family crowds them out.
	if wr != nil && p.torn {
		unit := fs.TearUnit()
		first := (wr.off/unit+1)*unit - wr.off
		cuts := 0
		if first < int64(len(wr.data)) {
			cuts = int((int64(len(wr.data))-1-first)/unit) + 1
		}
		for _, i := range tearPoints(cuts) {
			m := int(first + unit*int64(i))
			kind := fmt.Sprintf("all + in flight torn at %d/%d (%d of %d bytes)", i+1, cuts, m, len(wr.data))
			if !try(candidate{all: true}, i+1, kind, func(cl *disk.FS) error {
				_, err := cl.WriteAtPartial(wr.ino, wr.data, wr.off, m)
				return err
			}) {
				break
			}
		}
	}
	for c := range candidates(pend, p.torn) {
		if !try(c, 0, c.kind, nil) {
			break
		}
	}
	p.points = append(p.points, pt)
}

// candidate is one crash state described by which pending ops persist: those with a
// Seq up to upto but omit, and extra, and those in keep (Seqs start at 1: 0 is none).
type candidate struct {
	kind  string
	upto  uint64
	omit  uint64
	extra uint64
	keep  map[uint64]bool // a subset (at most ExhaustivePending ops)
	all   bool            // every pending op persists, including any added after the probe listed them
	tear  uint64          // the Seq of the op torn (0: none)
	cut   int             // which tear point, as an index among the write's tear points
}

// candidates yields the candidate states over the pending ops, by issue order: every
// subset when there are at most ExhaustivePending, else ALICE's family: the in-order
// prefixes, each prefix with the next write torn (tearSamples points), every single
// omission, and every single reordering (a prefix plus one later op), in that order.
// It makes each candidate only when asked: the family is quadratic in the pending ops
// (each with a set of them) and the probe stops after a few dozen.
func candidates(pend []disk.PendingOp, torn bool) iter.Seq[candidate] {
	return func(yield func(candidate) bool) {
		n := len(pend)
		// upto(k) keeps the first k pending ops: they are the ones whose Seq is at most
		// the k-th's (pend is by Seq).
		upto := func(k int) uint64 {
			if k == 0 {
				return 0
			}
			return pend[k-1].Seq
		}
		if !yield(candidate{kind: "all", upto: upto(n)}) || n == 0 {
			return
		}
		if !yield(candidate{kind: "none"}) {
			return
		}
		if n <= ExhaustivePending {
			for mask := 1; mask < 1<<n-1; mask++ {
				m := map[uint64]bool{}
				var names []string
				for i := range n {
					if mask&(1<<i) != 0 {
						m[pend[i].Seq] = true
						names = append(names, fmt.Sprint(i+1))
					}
				}
				if !yield(candidate{kind: "subset {" + strings.Join(names, ",") + "}", keep: m}) {
					return
				}
			}
		} else {
			for k := 1; k < n; k++ {
				if !yield(candidate{kind: fmt.Sprintf("prefix %d/%d", k, n), upto: upto(k)}) {
					return
				}
			}
		}
		if torn {
			for k := range n {
				op := pend[k]
				if op.Dir || op.Cuts == 0 {
					continue
				}
				for _, cut := range tearPoints(op.Cuts) {
					if !yield(candidate{kind: fmt.Sprintf("prefix %d/%d + torn #%d at %d/%d", k, n, k+1, cut+1, op.Cuts),
						upto: upto(k), tear: op.Seq, cut: cut}) {
						return
					}
				}
			}
		}
		if n > ExhaustivePending {
			for s := range n - 1 {
				if !yield(candidate{kind: fmt.Sprintf("omit #%d", s+1), upto: upto(n), omit: pend[s].Seq}) {
					return
				}
			}
			for k := range n {
				for q := k + 1; q < n; q++ {
					if !yield(candidate{kind: fmt.Sprintf("reorder #%d before #%d", q+1, k+1), upto: upto(k), extra: pend[q].Seq}) {
						return
					}
				}
			}
		}
	}
}

func (c candidate) kept(seq uint64) bool {
	return c.all || c.keep[seq] || (seq <= c.upto && seq != c.omit) || seq == c.extra
}

// tearPoints picks which of cuts tear points to try.
func tearPoints(cuts int) []int {
	if cuts <= tearSamples {
		out := make([]int, cuts)
		for i := range out {
			out[i] = i
		}
		return out
	}
	return []int{0, cuts / 2, cuts - 1}
}

// policyChooser makes a crash's choices from a candidate and records them.
type policyChooser struct {
	c     candidate
	state []int
}

func (p *policyChooser) IntN(n int) int { panic("crash states: a choice without a decision") }

func (p *policyChooser) Decide(d disk.Decision) int {
	v := 0
	switch d.Kind {
	case disk.NsPrefix:
		for _, s := range d.Seqs {
			if !p.c.kept(s) {
				break
			}
			v++
		}
	case disk.Truncate:
		if !p.c.kept(d.Seq) {
			v = 1
		}
	case disk.Write:
		switch {
		case d.Seq == p.c.tear && d.N == 3:
			v = 2
		case !p.c.kept(d.Seq):
			v = 1
		}
	case disk.TearCut:
		v = min(p.c.cut, d.N-1)
	default:
		panic(fmt.Sprintf("crash states: unexpected decision %d", d.Kind))
	}
	p.state = append(p.state, v)
	return v
}

// stateChooser replays an explicit crash state (Fault.CrashState): its first number is
// the op in flight's (0: nothing of it lands; i > 0: the i-th tear point of a write
// lands, a namespace op or fsync lands), the rest are the crash's choices, in order.
type stateChooser struct {
	state []int
	i     int
	bad   []string // choices that did not fit
	// unstated counts the choices past the end of the state (their ops lost).
	unstated int
}

func newStateChooser(state []int) *stateChooser { return &stateChooser{state: state, i: 1} }

func (s *stateChooser) IntN(n int) int { return s.Decide(disk.Decision{N: n}) }

func (s *stateChooser) Decide(d disk.Decision) int {
	in := 0
	if len(s.state) > 0 {
		in = s.state[0]
	}
	switch d.Kind {
	case disk.InflightCut:
		if in >= d.N {
			s.bad = append(s.bad, fmt.Sprintf("in-flight choice %d of %d", in, d.N))
			return 0
		}
		return in
	case disk.InflightApply:
		if in > 0 {
			return 0
		}
		return 1
	}
	if s.i >= len(s.state) {
		// A choice the state does not state: the op is lost (an idle crash's [0] loses
		// everything pending, as a power loss before any writeback does).
		s.i++
		s.unstated++
		switch d.Kind {
		case disk.Truncate, disk.Write:
			return 1
		}
		return 0
	}
	v := s.state[s.i]
	s.i++
	if v >= d.N {
		s.bad = append(s.bad, fmt.Sprintf("choice %d is %d of %d", s.i, v, d.N))
		return d.N - 1
	}
	return v
}

// misfit says, for the trace, where the state did not fit the disk ("" if it did).
func (s *stateChooser) misfit() string {
	if s.i < len(s.state) && len(s.state) > 0 {
		s.bad = append(s.bad, fmt.Sprintf("%d choices unused", len(s.state)-s.i))
	}
	out := ""
	if s.unstated > 0 {
		out = fmt.Sprintf(" (%d choices not stated: those ops lost)", s.unstated)
	}
	if len(s.bad) == 0 {
		return out
	}
	return out + " (state does not fit this disk: " + strings.Join(s.bad, "; ") + ")"
}

// formatState renders a crash state compactly: "[0 1 2 0]".
func formatState(st []int) string {
	return strings.ReplaceAll(fmt.Sprint(st), " ", ",")
}
