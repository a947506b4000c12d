package engine

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// profiler collects a CPU profile of a run: where the guests spend their time, by their
// Go stacks, and where the host spends it on their behalf. Run makes one when
// RunOptions.Profile is set and writes it there with WriteTo (pprof's format).
//
// Only one incarnation runs at a time (the world passes a single token), so the host's
// wall clock between two transitions is charged to whoever held the token:
//
//   - guest time, from a return to the guest (or its start) to its next host call, is
//     charged to the guest's Go stack at that host call. Code that ran on other
//     goroutines in between (the Go scheduler switches goroutines without a host call)
//     is charged to the goroutine that makes the call: an approximation, like a sampling
//     profiler that only samples at host calls;
//   - host time inside a host function, minus the time it was parked while other nodes
//     ran, is charged to a "[host] fd_write" frame on top of the guest stack that called;
//   - "[host] instantiate" is creating the incarnation's module instance, "[host] close"
//     closing it when it exits (its memory goes back to the pool);
//   - "[seedfall] world" is the scheduler: events, faults, network delivery, traces.
//
// Every stack has its node ("[node] server") as the root frame. The host clock is read
// only here and only ends up in the profile: it never shapes the run or its trace.
type profiler struct {
	mu    sync.Mutex
	sim   *Sim
	start time.Time
	mark  time.Time
	cur   profState

	samples map[profState]*[2]int64 // ns, count
	stacks  []profStack
	intern  map[string]int // node + PCs -> index in stacks
	incs    map[*incarnation]profState
	pcs     []uint64
}

type profKind uint8

const (
	profWorld profKind = iota
	profInstantiate
	profGuestPending // the guest runs; its stack is known at its next host call
	profGuest
	profHost
	profClose
)

type profState struct {
	kind  profKind
	node  int    // node index (AllNodes order); -1 for the world
	host  string // host function
	stack int    // index in stacks; -1: none
	inc   *incarnation
}

type profStack struct {
	node int
	pcs  []uint64
}

// newProfiler returns a profiler for runs of s.
func newProfiler(s *Sim) *profiler {
	return &profiler{sim: s, samples: map[profState]*[2]int64{}, intern: map[string]int{},
		incs: map[*incarnation]profState{}, cur: profState{kind: profWorld, node: -1, stack: -1}}
}

// charge ends the current interval at now and starts next.
func (p *profiler) charge(now time.Time, next profState) {
	if p.start.IsZero() {
		p.start, p.mark = now, now
	}
	if p.cur.kind != profGuestPending {
		k := p.cur
		k.inc = nil
		v := p.samples[k]
		if v == nil {
			v = new([2]int64)
			p.samples[k] = v
		}
		v[0] += int64(now.Sub(p.mark))
		v[1]++
		p.mark = now
	}
	p.cur = next
}

// begin: the run starts (the world holds the token).
func (p *profiler) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.start.IsZero() {
		p.start = now
	}
	p.mark, p.cur = now, p.world() // the time between two runs is nobody's
}

// end: the run is over.
func (p *profiler) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.charge(time.Now(), p.world())
}

func (p *profiler) world() profState { return profState{kind: profWorld, node: -1, stack: -1} }

// instantiating: inc got the token for the first time and creates its module.
func (p *profiler) instantiating(inc *incarnation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.charge(time.Now(), profState{kind: profInstantiate, node: inc.node.idx, stack: -1})
}

// running: inc's guest code runs (after instantiation, or back from a host call).
func (p *profiler) running(inc *incarnation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.charge(time.Now(), profState{kind: profGuestPending, node: inc.node.idx, stack: -1, inc: inc})
}

// enter: inc's guest calls host function name.
func (p *profiler) enter(inc *incarnation, mod api.Module, name string) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	stack := -1
	if t := inc.node.loc; t != nil {
		p.pcs = t.PCs(mod, p.pcs[:0])
		stack = p.stackID(inc.node.idx, p.pcs)
	}
	if p.cur.kind == profGuestPending && p.cur.inc == inc {
		// Charge the guest's run to the stack it called from.
		p.cur = profState{kind: profGuest, node: inc.node.idx, stack: stack}
	}
	p.charge(now, profState{kind: profHost, node: inc.node.idx, host: name, stack: stack})
	// The stack walk is the profiler's own cost: charged to nobody.
	p.mark = time.Now()
}

// leave: the host function returns (or unwinds) to inc's guest.
func (p *profiler) leave(inc *incarnation) { p.running(inc) }

// park: inc gives the token back to the scheduler from inside a host call.
func (p *profiler) park(inc *incarnation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.incs[inc] = p.cur
	p.charge(time.Now(), p.world())
}

// resume: inc has the token again, inside the host call it parked in.
func (p *profiler) resume(inc *incarnation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.incs[inc]
	delete(p.incs, inc)
	if !ok {
		st = profState{kind: profHost, node: inc.node.idx, host: "?", stack: -1}
	}
	p.charge(time.Now(), st)
}

// exited: inc's guest returned from _start or was stopped; its module is closed next.
func (p *profiler) exited(inc *incarnation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.incs, inc)
	if p.cur.kind == profGuestPending && p.cur.inc == inc {
		p.cur = profState{kind: profGuest, node: inc.node.idx, stack: -1}
	}
	p.charge(time.Now(), profState{kind: profClose, node: inc.node.idx, stack: -1})
}

// closed: inc's module is closed (its memory back in the pool); the world is next.
func (p *profiler) closed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.charge(time.Now(), p.world())
}

func (p *profiler) stackID(node int, pcs []uint64) int {
	key := make([]byte, 4, 4+8*len(pcs))
	binary.LittleEndian.PutUint32(key, uint32(node))
	for _, pc := range pcs {
		key = binary.LittleEndian.AppendUint64(key, pc)
	}
	if id, ok := p.intern[string(key)]; ok {
		return id
	}
	id := len(p.stacks)
	p.stacks = append(p.stacks, profStack{node: node, pcs: append([]uint64(nil), pcs...)})
	p.intern[string(key)] = id
	return id
}

// runProfiled is w.run with the profile's start and end around it.
func (w *world) runProfiled(ctx context.Context) *Result {
	if p := w.opt.prof; p != nil {
		p.begin()
		defer p.end()
	}
	return w.run(ctx)
}
