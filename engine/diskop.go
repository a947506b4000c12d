package engine

import (
	"fmt"
	"math/rand/v2"

	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// BeginDiskOp numbers the op and decides whether the node crashes during it. Faults
// may be aimed at it by another kind name than the trace's (match: a directory's fsync
// is "dir_fsync"); an op with two paths (a rename or link) traces paths[0].
func (inc *incarnation) BeginDiskOp(kind, match string, paths []string, detail string) wasi.DiskOp {
	path := paths[0]
	if inc.w.reseedDue() {
		inc.yieldNow() // decide this op in the re-randomized future
	}
	inc.noteSDKWrite(kind, path)
	inc.diskOps++
	inc.w.stats.DiskOps++
	what := kind + " " + path
	if detail != "" {
		what += " " + detail
	}
	what += at(inc)
	op := wasi.DiskOp{N: inc.diskOps, What: what}
	if p := inc.w.opt.probe; p != nil {
		p.observe(inc, op.N, what, inc.inflight)
		inc.inflight = nil
	}
	inc.opWhat = what
	// A crash pinned to this op always fires; one armed by time fires in the first op
	// that crash_mid_op is aimed at (every op unless it lists paths or ops).
	if inc.crashAt == op.N {
		op.Crash = true
	} else if n := inc.node; n.crashNextOp && inc.w.cfg.Faults.CrashMidOp.Matches(match, paths) {
		if n.crashSkip > 0 {
			n.crashSkip-- // a spread crash lets this op pass (faults.crash_placement)
		} else {
			op.Crash = true
		}
	}
	return op
}

// EndDiskOp traces a completed op and moves time on.
func (inc *incarnation) EndDiskOp() {
	inc.w.tracef(inc.label, "disk #%d %s", inc.diskOps, inc.opWhat)
	inc.scanSDKSetup()
	inc.advance(tick)
	inc.maybePreempt()
}

// CrashNow records the crash fault of op (already partially applied) and stops the
// guest at once. The scheduler finishes the crash (disk loss, restart) in afterExit.
func (inc *incarnation) CrashNow(op wasi.DiskOp, partial string) {
	n := inc.node
	f := Fault{AtNS: inc.w.now, Kind: FaultCrash, Node: n.name, DiskOp: op.N, Incarnation: inc.n, Where: op.What}
	inc.crashStream() // key the crash's stream before midPlanned is cleared below
	if n.midPlanned != nil {
		f.RestartNS = n.midPlanned.RestartNS
		f.ArmedNS, f.SkipOps = n.midPlanned.AtNS, n.midPlanned.SkipOps
		f.Build = n.midPlanned.Build
		f.Directed = n.midPlanned.Directed
		n.heldDown = n.heldDown || (f.Directed && f.RestartNS == 0)
	} else {
		for _, a := range n.armed {
			if a.Kind == FaultCrash && a.Incarnation == inc.n && a.DiskOp == op.N {
				f.RestartNS = a.RestartNS
				f.ArmedNS, f.StreamNS, f.SkipOps = a.ArmedNS, a.StreamNS, a.SkipOps
				f.Build = a.Build
				f.CrashState = a.CrashState
				f.Directed = a.Directed
				n.heldDown = n.heldDown || (f.Directed && f.RestartNS == 0)
			}
		}
	}
	armed := ""
	if f.ArmedNS > 0 && f.SkipOps > 0 {
		// A spread crash (faults.crash_placement): say where it was armed, so the trace
		// tells why it landed here. The fired crash keeps both numbers (the plan saved
		// from the run pins it to its op), so that the plan's replay traces the same
		// line. A crash that never fires adds no line, so a seed whose mid-op crashes
		// all stay unfired traces as with next_op.
		armed = fmt.Sprintf(" [armed at %s, %d ops before]", formatDuration(f.ArmedNS), f.SkipOps)
		if f.AtNS < f.ArmedNS {
			// A plan pins the crash to its op, and on another build (or with other
			// faults) the op comes before the moment the recording run armed it: say so,
			// rather than a time after the one the line is traced at.
			armed = fmt.Sprintf(" [pinned to this op by the plan; armed at %s, %d ops before, in the run the plan was saved from]",
				formatDuration(f.ArmedNS), f.SkipOps)
		}
	}
	f.Build = inc.w.restartBuild(n, f)
	n.crashNextOp, n.crashSkip = false, 0
	n.midPlanned = nil
	n.pendingMid = &f
	n.pendingRng = inc.crashStream()
	inc.w.applied = append(inc.w.applied, f)
	if partial != "" {
		partial = " (" + partial + ")"
	}
	inc.w.tracef("fault", "crash %s during disk op #%d %s%s%s%s", inc.label, op.N, op.What, partial, armed, noteOf(f))
	inc.crash = true
	inc.killed = true
	panic(sys.NewExitError(exitCrashed))
}

// maybeApply applies a namespace op that a crash interrupts, or not, by a draw from the
// crash's own stream.
func (inc *incarnation) maybeApply(fn func()) {
	if disk.Pick(inc.crashStream(), disk.Decision{Kind: disk.InflightApply, N: 2}) == 0 {
		fn()
	}
}

// crashStream is the random stream of the crash planned for the current disk op: how
// much of the op lands and what the disk keeps. Each crash has its own stream, keyed by
// the fault as the plan states it, so dropping one fault (shrink) does not re-draw the
// tearing of every later crash.
func (inc *incarnation) crashStream() disk.Chooser {
	if inc.crashRng != nil {
		return inc.crashRng
	}
	n := inc.node
	if n.midPlanned == nil {
		for _, a := range n.armed {
			if a.Kind == FaultCrash && a.Incarnation == inc.n && a.DiskOp == inc.diskOps && len(a.CrashState) > 0 {
				inc.crashRng = newStateChooser(a.CrashState)
				return inc.crashRng
			}
		}
	}
	planAt := inc.w.now
	if n.midPlanned != nil {
		planAt = n.midPlanned.AtNS
	} else {
		for _, a := range n.armed {
			if a.Kind == FaultCrash && a.Incarnation == inc.n && a.DiskOp == inc.diskOps {
				// A crash that was armed by time keeps that time's stream; one pinned to
				// a disk op by hand is keyed by the op number, which survives renumbering.
				planAt = -a.DiskOp
				if a.ArmedNS > 0 {
					planAt = a.ArmedNS
				}
				if a.StreamNS > 0 {
					planAt = a.StreamNS
				}
			}
		}
	}
	inc.crashRng = inc.w.crashRand(n.name, planAt)
	return inc.crashRng
}

// crashRand is the stream of the crash of node planned at planAt.
func (w *world) crashRand(node string, planAt int64) *rand.Rand {
	return streamRand(w.seedForGuest()^uint64(planAt)*0x9E3779B97F4A7C15, "crash/"+node)
}

// syncShouldFail decides whether the fsync that is disk op n fails with EIO. kind and
// path say what it syncs, for an fsync_eio aimed at some paths or kinds.
func (inc *incarnation) syncShouldFail(n int64, kind, path string) bool {
	w := inc.w
	fail := false
	var f *Fault
	switch {
	case inc.eioAt[n]:
		fail = true
	case inc.failNextSync:
		fail = true
		inc.failNextSync = false
		f = inc.eioFault
	}
	if eio := &w.cfg.Faults.FsyncEIO; eio.P > 0 {
		// Always draw, so a replayed plan consumes the disk stream as the original run did,
		// and so that aiming the fault at some paths does not shift the draws of others.
		hit := w.rngDisk.Float64() < eio.P && eio.Matches(kind, []string{path})
		if hit && w.opt.plan == nil && !fail && w.now >= w.quietUntil {
			fail = true
		}
	}
	if fail {
		rec := Fault{AtNS: w.now, Kind: FaultFsyncEIO, Node: inc.node.name, DiskOp: n, Incarnation: inc.n}
		if f != nil {
			rec.Where = f.Where
		}
		w.applied = append(w.applied, rec)
	}
	return fail
}

// maybePreempt is a seeded scheduling point at I/O calls: other nodes may run first.
func (inc *incarnation) maybePreempt() {
	if inc.w.rngSched.IntN(8) == 0 {
		inc.yieldNow()
	}
}

func (inc *incarnation) String() string { return fmt.Sprintf("%s(state %d)", inc.label, inc.state) }

// syncSite names where an fsync of path (dir: a directory) comes from, for call-site
// mutants: the guest's source location when known, else the file it syncs.
func (inc *incarnation) syncSite(path string, dir bool) string {
	site := inc.location()
	if site == "" {
		site = "sync of " + path
	}
	if dir {
		site += " (dir)"
	}
	w := inc.w
	if w.syncSites == nil {
		w.syncSites = map[string]bool{}
	}
	w.syncSites[site] = true
	return site
}

// location is the guest source location of the current host call: file:line of the
// first frame outside the standard library and sim ("" when unknown, e.g. for calls the
// Go runtime makes on its own).
func (inc *incarnation) location() string {
	if inc.node.loc == nil || inc.mod == nil {
		return ""
	}
	l, ok := inc.node.loc.Locate(inc.mod)
	if !ok {
		return ""
	}
	return l.FileLine()
}

// at renders a location suffix for trace lines.
func at(inc *incarnation) string {
	if l := inc.location(); l != "" {
		return " at " + l
	}
	return ""
}
