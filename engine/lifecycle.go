package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// exitCrashed is the exit code a node's instance is stopped with when the host kills it.
const exitCrashed = 137

// start launches a new incarnation of n.
func (w *world) start(n *node) {
	n.lives++
	w.stats.Incarnations++
	inc := &incarnation{
		w: w, node: n, n: n.lives, label: fmt.Sprintf("%s#%d", n.name, n.lives),
		resume: make(chan struct{}), deadline: -1,
		rand:  streamRand(w.seedForGuest(), fmt.Sprintf("guest/%s/%d", n.name, n.lives)),
		sched: interleaveStream(w.seedForGuest(), n, n.lives),
	}
	inc.host = wasi.NewProcess(inc)
	n.inc = inc
	// The machine is up (again): segments held since a power loss go on their way.
	w.net.PowerOn(n.host)
	n.crashNextOp, n.crashSkip = false, 0
	n.midPlanned = nil
	armPinned(inc, n.armed)
	if w.sim.antithesis {
		n.ensureAntithesisDir()
	}
	if b := n.selectBuild(inc.n, n.nextBuild); b != "" {
		n.nextBuild = ""
		w.tracef(inc.label, "start (build %s)", b)
	} else {
		w.tracef(inc.label, "start")
	}
	w.makeRunnable(inc)
	go inc.main()
}

func (w *world) seedForGuest() uint64 {
	if w.reseeded {
		return w.opt.futureSeed
	}
	return w.seed
}

// main is the goroutine of one incarnation: it waits for the token, then runs the guest.
func (inc *incarnation) main() {
	w := inc.w
	<-inc.resume
	if inc.killed {
		inc.finish(exitCrashed, "")
		w.yield <- struct{}{}
		return
	}
	ctx := wasi.WithProcess(context.Background(), inc.host)
	if alloc := inc.node.alloc; alloc != nil {
		ctx = experimental.WithMemoryAllocator(ctx, alloc)
	}
	prof := w.opt.prof
	if prof != nil {
		prof.instantiating(inc)
	}
	mod, err := w.sim.rt.InstantiateModule(ctx, inc.node.module, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err == nil {
		inc.mod = mod
		if prof != nil {
			prof.running(inc)
		}
		start := mod.ExportedFunction("_start")
		if start == nil {
			err = fmt.Errorf("module has no _start")
		} else {
			_, err = start.Call(ctx)
		}
	}
	code, msg := uint32(0), ""
	if err != nil {
		if ee, ok := err.(*sys.ExitError); ok {
			code = ee.ExitCode()
		} else {
			code, msg = 2, err.Error()
		}
	}
	if prof != nil {
		prof.exited(inc)
	}
	if mod != nil {
		inc.host.WritebackMaps(mod.Memory())
		inc.collectCoverage(mod.Memory())
		mod.Close(context.Background())
	}
	if prof != nil {
		prof.closed()
	}
	inc.finish(code, msg)
	w.yield <- struct{}{}
}

func (inc *incarnation) finish(code uint32, msg string) {
	inc.flushOutput()
	inc.exited = true
	inc.code = code
	inc.errMsg = msg
	inc.state = incDone
}

// afterExit handles an incarnation that stopped: crash, own exit, or end of run.
func (w *world) afterExit(inc *incarnation) {
	n := inc.node
	if n.inc == inc {
		n.inc = nil
	}
	// What the node's peers see depends on how it died (docs/faults.md, "Two kinds of
	// node death"): a power loss (crash) sends nothing, so their connections go
	// half-open; a process death (kill fault, own exit or panic) is closed by the
	// kernel: FIN, or RST where data was unread. When the run is over, or the workload
	// (whose exit ends it) stopped, nobody is left to look: the old reset-everything
	// path keeps those traces as they were.
	switch socks := inc.host.Sockets(); {
	case inc.crash:
		w.net.PowerLoss(n.host, inc, socks)
	case w.done || n.workload:
		w.net.NodeDown(inc, socks)
	default:
		w.net.ProcessExit(socks)
	}
	w.collectAntithesis(inc)
	if inc.procKill {
		return // finished by the kill fault's handler
	}
	if inc.crash {
		if n.pendingMid != nil && !w.done {
			// Crashed during a disk op: finish the crash here.
			f, rng := *n.pendingMid, n.pendingRng
			n.pendingMid, n.pendingRng = nil, nil
			w.crashed(n, f, rng)
		}
		return // an idle crash is finished by its fault handler
	}
	if w.done {
		return
	}
	detail := ""
	if inc.errMsg != "" {
		detail = ": " + inc.errMsg
	}
	if !(inc.code != 0 && !inc.killed && n.cfg.failStop()) {
		w.tracef(inc.label, "exited with code %d%s", inc.code, detail)
	}
	if n.workload {
		w.done = true
		if inc.code == 0 && !inc.killed {
			w.verdict = VerdictPass
			return
		}
		reason := inc.lastLine
		if pr := inc.panicReason(); pr != "" {
			reason = pr
		} else if tr := inc.trapReason(); tr != "" {
			reason = tr
		}
		if reason == "" {
			reason = fmt.Sprintf("workload exited with code %d%s", inc.code, detail)
		}
		w.fail(KindWorkloadExit, inc.label, reason)
		if c := inc.failContext; c != "" && reason == inc.lastLine && strings.HasSuffix(reason, c) && w.failure.Kind == KindWorkloadExit {
			w.failure.Context = c
		}
		return
	}
	if inc.code != 0 && !inc.killed && n.cfg.failStop() {
		w.failStopExit(inc, detail)
		return
	}
	if inc.code != 0 && !inc.killed {
		reason := fmt.Sprintf("%s crashed: exit_code(%d)", inc.label, inc.code)
		if pr := inc.panicReason(); pr != "" {
			reason += ": " + pr
		} else if tr := inc.trapReason(); tr != "" {
			reason += ": " + tr // the wasm stack is in the trace's exit line
		} else {
			if inc.lastLine != "" {
				reason += ": " + inc.lastLine
			}
			if inc.errMsg != "" {
				reason += ": " + inc.errMsg
			}
		}
		w.fail(KindNodeExit, inc.label, reason)
	}
}

// death is how the host stops an incarnation.
type death int

const (
	deathRunEnd  death = iota // the run is over
	deathPower                // a crash fault: the machine loses power
	deathProcess              // a kill fault: the process dies, the machine lives on
)

// kill stops a live incarnation from the scheduler goroutine and waits for it.
func (w *world) kill(inc *incarnation, how death) {
	if inc == nil || inc.state == incDone {
		return
	}
	inc.killed = true
	inc.crash = how == deathPower
	inc.procKill = how == deathProcess
	// Remove it from the runnable set, then let it run into its exit.
	for i, r := range w.runnable {
		if r == inc {
			w.runnable = append(w.runnable[:i], w.runnable[i+1:]...)
			break
		}
	}
	inc.state = incRunning
	inc.resume <- struct{}{}
	<-w.yield
	inc.state = incDone
	w.afterExit(inc)
}

// shutdown stops every live incarnation at the end of the run.
func (w *world) shutdown() {
	w.done = true
	for _, n := range w.nodes {
		if n.inc != nil {
			w.kill(n.inc, deathRunEnd)
		}
	}
}
