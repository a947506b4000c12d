package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/netsim"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// This file is the incarnation's side of the WASI host's contract (wasi.Proc) and of
// the network's (netsim.Owner): what a host call may ask of the world. The disk-op
// hooks are in diskop.go.

var _ wasi.Proc = (*incarnation)(nil)

// HostCall counts a host call, marks progress for the watchdog, stops a guest the host
// is killing, and enters the call in the profile, if any (then HostReturn leaves it).
func (inc *incarnation) HostCall(mod api.Module, name string) bool {
	inc.w.stats.HostCalls++
	inc.w.steps.Add(1) // progress, for the watchdog
	if inc.killed {
		panic(sys.NewExitError(exitCrashed))
	}
	if p := inc.w.opt.prof; p != nil {
		p.enter(inc, mod, name)
		return true
	}
	return false
}

// HostReturn leaves a profiled host call.
func (inc *incarnation) HostReturn() { inc.w.opt.prof.leave(inc) }

// Args is the guest's argv: the node's name, then its configured args.
func (inc *incarnation) Args() []string {
	return append([]string{inc.node.name}, inc.node.cfg.Args...)
}

// Environ is the guest's environment, sorted: seedfall's variables, then the node's env.
func (inc *incarnation) Environ() []string {
	env := map[string]string{
		"PWD":                  "/",
		"HOME":                 "/",
		"SEEDFALL_NODE":        inc.node.name,
		"SEEDFALL_INCARNATION": fmt.Sprint(inc.n),
		"SEEDFALL_SEED":        fmt.Sprint(inc.w.seed),
		"SEEDFALL":             "1",
	}
	if inc.w.sim.antithesis {
		env["ANTITHESIS_SDK_LOCAL_OUTPUT"] = fmt.Sprintf("/.seedfall/antithesis-%d.jsonl", inc.n)
	}
	for k, v := range inc.node.cfg.Env {
		env[k] = v
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + env[k]
	}
	return out
}

// Now is global virtual time.
func (inc *incarnation) Now() int64 { return inc.w.now }

// Clock is the node's clock, realtime or monotonic.
func (inc *incarnation) Clock(realtime bool) int64 { return inc.node.clockNS(inc.w.now, realtime) }

// TimerDeadline is the virtual time a timer of the node's clock set now for timeout fires.
func (inc *incarnation) TimerDeadline(timeout int64) int64 {
	return inc.node.timerDeadline(inc.w.now, timeout)
}

// Advance moves the clock on by a tick (see advance).
func (inc *incarnation) Advance() { inc.advance(tick) }

// Yield is sched_yield: a tick, then a scheduling point.
func (inc *incarnation) Yield() {
	inc.w.now += tick
	inc.yieldNow()
}

// MaybePreempt is a seeded scheduling point (see maybePreempt).
func (inc *incarnation) MaybePreempt() { inc.maybePreempt() }

// Block parks the incarnation until a socket it may wait on changes (Wake) or, with
// deadline >= 0, until that virtual time.
func (inc *incarnation) Block(deadline int64) {
	w := inc.w
	inc.state = incBlocked
	inc.wakeGen++
	gen := inc.wakeGen
	inc.deadline = deadline
	if deadline >= 0 {
		w.schedule(deadline, func() {
			if inc.state == incBlocked && inc.wakeGen == gen {
				w.makeRunnable(inc)
			}
		})
	}
	inc.park()
}

// RandUint64 draws from the guest's own random stream.
func (inc *incarnation) RandUint64() uint64 { return inc.rand.Uint64() }

// Disk is the node's file system.
func (inc *incarnation) Disk() *disk.FS { return inc.node.disk }

// MmapLimit is the config's mmap_limit_mib in bytes.
func (inc *incarnation) MmapLimit() int64 { return int64(inc.w.cfg.MmapLimitMiB) << 20 }

// CrashStream is the random stream of the crash during the current disk op.
func (inc *incarnation) CrashStream() disk.Chooser { return inc.crashStream() }

// InflightWrite records the write about to begin, for the crash-state probe only.
func (inc *incarnation) InflightWrite(ino disk.Ino, off int64, data []byte) {
	if inc.w.opt.probe != nil {
		inc.inflight = &inflightWrite{ino: ino, off: off, data: data}
	}
}

// MaybeApply applies fn, or not, by a draw from the crash's stream.
func (inc *incarnation) MaybeApply(fn func()) { inc.maybeApply(fn) }

// TornWrites is faults.torn_writes.
func (inc *incarnation) TornWrites() bool { return inc.w.cfg.Faults.TornWrites }

// OSyncWrite counts an O_SYNC write; under osync-ignored it is not made durable.
func (inc *incarnation) OSyncWrite() bool {
	inc.w.stats.OSyncWrites++
	return inc.w.opt.mutation != MutOSyncIgnored
}

// CountReplace counts a rename over an existing file.
func (inc *incarnation) CountReplace() { inc.w.stats.Replacing++ }

// SyncFaults decides whether an fsync fails with EIO (syncShouldFail) and whether a
// call-site mutation skips it, and counts it.
func (inc *incarnation) SyncFaults(op wasi.DiskOp, match, path string, dir, dataOnly bool) (fail, skip bool) {
	fail = inc.syncShouldFail(op.N, match, path)
	site := inc.syncSite(path, dir)
	st := &inc.w.stats
	switch {
	case dir:
		st.DirSyncs++
	case dataOnly:
		st.Fdatasyncs++
	default:
		st.Fsyncs++
	}
	return fail, inc.w.opt.mutation == MutSitePrefix+site && !fail
}

// Listen opens a listener of this incarnation.
func (inc *incarnation) Listen(port int) (*netsim.Sock, netsim.Errno) {
	return inc.w.net.Listen(inc, port)
}

// Dial starts a connection from this incarnation.
func (inc *incarnation) Dial(addr string) (*netsim.Sock, netsim.Errno) {
	return inc.w.net.Dial(inc, addr)
}

// Host is the node's network identity.
func (inc *incarnation) Host() *netsim.Host { return inc.node.host }

// Label names the incarnation in the trace ("server#2").
func (inc *incarnation) Label() string { return inc.label }

// Done reports whether the incarnation stopped.
func (inc *incarnation) Done() bool { return inc.state == incDone }

// Wake makes the incarnation runnable if it is blocked.
func (inc *incarnation) Wake() { inc.w.wake(inc) }

// Where is the " at file:line" suffix of the current host call, or "".
func (inc *incarnation) Where() string { return at(inc) }

// Tracef traces a line under the incarnation's label.
func (inc *incarnation) Tracef(format string, args ...any) { inc.w.tracef(inc.label, format, args...) }

// Output is the guest's stdout or stderr (see output).
func (inc *incarnation) Output(fd int, data []byte) { inc.output(fd, data) }

// TestHostClock is virtual time, or with PrepareOptions.UnsafeHostClock the host's wall
// clock: a deliberate hole in determinism, for testing -check. No real guest imports it.
func (inc *incarnation) TestHostClock() int64 {
	if inc.w.sim.unsafeHostClock {
		return time.Now().UnixNano()
	}
	return inc.w.now
}

var propKinds = [...]PropertyKind{
	wasi.AssertAlways: PropAlways, wasi.AssertSometimes: PropSometimes,
	wasi.AssertReachable: PropReachable, wasi.AssertUnreachable: PropUnreachable,
}

// Assert records one evaluation of a property.
func (inc *incarnation) Assert(kind int, cond bool, msg, details string) {
	inc.w.assertHit(inc, propKinds[kind], cond, msg, details)
}

// SetupComplete is seedfall.setup_complete (sdk_lifecycle.go).
func (inc *incarnation) SetupComplete(details string) { inc.w.setupComplete(inc, details) }

// FailureContext is seedfall.failure_context: the end of the line the guest prints next
// is context, which the failure's signature leaves out (signatureKey).
func (inc *incarnation) FailureContext(text string) { inc.failContext = strings.TrimSpace(text) }

// StopFaults is seedfall.stop_faults (sdk_lifecycle.go).
func (inc *incarnation) StopFaults(ns int64) { inc.w.stopFaults(inc, ns) }

// OpCall records the call of a history operation at the current virtual time.
func (inc *incarnation) OpCall(client int, input []byte) int {
	w := inc.w
	w.history = append(w.history, histOp{client: client, input: json.RawMessage(input), call: w.now})
	return len(w.history) - 1
}

// OpPending reports whether id is a call not yet returned.
func (inc *incarnation) OpPending(id int) bool {
	w := inc.w
	return id < len(w.history) && !w.history[id].returned
}

// OpReturn records the return of call id at the current virtual time.
func (inc *incarnation) OpReturn(id int, output []byte) {
	op := &inc.w.history[id]
	op.output = json.RawMessage(output)
	op.ret = inc.w.now
	op.returned = true
}

// assertHit records one evaluation of a property; a violated always or a reached
// unreachable fails the run.
func (w *world) assertHit(inc *incarnation, kind PropertyKind, cond bool, msg, details string) {
	p := w.props[msg]
	if p == nil {
		p = &PropertyHit{Name: msg, Kind: kind, Held: kind == PropAlways || kind == PropUnreachable}
		w.props[msg] = p
	}
	p.Reached = true
	p.Count++
	switch kind {
	case PropAlways:
		if !cond {
			p.Held = false
		}
	case PropSometimes:
		if cond {
			p.Held = true
		}
	case PropReachable:
		p.Held = true
	case PropUnreachable:
		p.Held = false
	}
	violated := (kind == PropAlways && !cond) || kind == PropUnreachable
	if violated {
		d := ""
		if details != "" && details != "null" && details != "{}" {
			d = " " + details
		}
		w.tracef(inc.label, "%s violated: %s%s", kind, msg, d)
		w.fail(FailureKind(kind), inc.label, fmt.Sprintf("%s violated: %s%s", kind, msg, d))
		if w.running == inc {
			inc.yieldNow()
		}
	}
}

// histOp is one operation of the workload's linearizability history.
type histOp struct {
	client   int
	input    json.RawMessage
	output   json.RawMessage
	call     int64
	ret      int64
	returned bool
}

// output captures a guest's stdout/stderr into the trace, one line at a time.
func (inc *incarnation) output(fd int, data []byte) {
	limit := inc.w.cfg.OutputLimitKiB * 1024
	if inc.outBytes >= limit {
		inc.outBytes += len(data)
		return
	}
	inc.outBytes += len(data)
	if inc.outBytes >= limit {
		data = data[:max(0, len(data)-(inc.outBytes-limit))]
	}
	b := &inc.out[fd]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n') // not string(data): that copies the rest per line
		if i < 0 {
			b.Write(data)
			break
		}
		b.Write(data[:i])
		inc.emitLine(b.String())
		b.Reset()
		data = data[i+1:]
	}
	if inc.outBytes >= limit {
		inc.w.tracef(inc.label, "output limit of %d KiB reached; further output is counted and dropped", inc.w.cfg.OutputLimitKiB)
	}
}

func (inc *incarnation) emitLine(line string) {
	if strings.TrimSpace(line) != "" {
		inc.lastLine = strings.TrimSpace(line)
	}
	inc.panics.line(line)
	inc.w.addLine(fmt.Sprintf("%12s %s | %s", formatDuration(inc.w.now), inc.label, line))
}

func (inc *incarnation) flushOutput() {
	for i := 1; i <= 2; i++ {
		if inc.out[i].Len() > 0 {
			inc.emitLine(inc.out[i].String())
			inc.out[i].Reset()
		}
	}
}
