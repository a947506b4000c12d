package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// Device faults (docs/faults.md, "Device faults"): what a drive does wrong below the
// filesystem. Each kind strikes one call, a file read (read_eio, corrupt_read), a write
// (corrupt, misdirected_write, lost_write, write_eio) or a write or fsync (slow_io): the
// call pinned by a plan (disk_op or read_op of an incarnation), the node's next
// matching call after a fault armed by time, or one drawn at the knob's rate. Where in
// the file it strikes, and how, is drawn from the fault's own stream (deviceRand), so a
// plan that pins it replays it exactly and dropping another fault does not move it.

// devKey pins a device fault: the kind, and the disk op or (read) the file read.
type devKey struct {
	kind FaultKind
	read bool
	n    int64
}

// deviceKnob is one device fault knob: its kind, its config and the op kinds it may be
// aimed at.
type deviceKnob struct {
	kind FaultKind
	knob *DiskFault
	ops  []string
}

var (
	readOpKinds  = []string{"read"}
	writeOpKinds = []string{"write"}
	slowOpKinds  = []string{"write", "fsync", "fdatasync", "dir_fsync"}
)

// deviceFaults lists the device fault knobs in table order.
func (f *FaultConfig) deviceFaults() []deviceKnob {
	return []deviceKnob{
		{FaultReadEIO, &f.ReadEIO, readOpKinds},
		{FaultCorrupt, &f.Corrupt, writeOpKinds},
		{FaultCorruptRead, &f.CorruptRead, readOpKinds},
		{FaultMisdirected, &f.MisdirectedWrite, writeOpKinds},
		{FaultLostWrite, &f.LostWrite, writeOpKinds},
		{FaultWriteEIO, &f.WriteEIO, writeOpKinds},
		{FaultSlowIO, &f.SlowIO, slowOpKinds},
	}
}

// readKind reports whether k strikes reads (pinned by read_op).
func readKind(k FaultKind) bool { return k == FaultReadEIO || k == FaultCorruptRead }

// defaultSlowIOLatency is faults.slow_io_latency's default.
const defaultSlowIOLatency = 200 * time.Millisecond

// deviceKind is the fault-kind table entry of a device fault.
func deviceKind(k FaultKind, class string) *kindSpec {
	return &kindSpec{
		kind:   k,
		knob:   string(k), // the knob has the kind's name (faults.read_eio, ...)
		pinned: true,
		arm: func(inc *incarnation, f Fault) {
			if inc.devAt == nil {
				inc.devAt = map[devKey]Fault{}
			}
			key := devKey{kind: f.Kind, n: f.DiskOp}
			if readKind(f.Kind) {
				key = devKey{kind: f.Kind, read: true, n: f.ReadOp}
			}
			inc.devAt[key] = f
		},
		apply: func(w *world, n *node, f Fault) {
			if n.inc == nil {
				return
			}
			// Armed by time: the node's next matching call. It is recorded (and traced)
			// when it strikes, pinned to that call.
			if n.inc.devNext == nil {
				n.inc.devNext = map[FaultKind]Fault{}
			}
			n.inc.devNext[f.Kind] = f
		},
		detail: func(b *strings.Builder, f Fault) {
			switch {
			case f.DiskOp > 0:
				fmt.Fprintf(b, " at disk op #%d", f.DiskOp)
			case f.ReadOp > 0:
				fmt.Fprintf(b, " at read #%d", f.ReadOp)
			}
			if f.LatencyNS > 0 {
				fmt.Fprintf(b, " +%s", formatDuration(f.LatencyNS))
			}
		},
		check: func(f Fault) error {
			if f.LatencyNS < 0 {
				return fmt.Errorf("latency_ns must not be negative")
			}
			if f.LatencyNS > 0 && f.Kind != FaultSlowIO {
				return fmt.Errorf("latency_ns is for a slow_io, not a %s", f.Kind)
			}
			if f.MidOp {
				return fmt.Errorf("mid_op is for a crash, not a %s", f.Kind)
			}
			return nil
		},
		span: func(f Fault) int64 { return f.LatencyNS },
		simplify: func(f Fault) []Fault {
			if f.Kind != FaultSlowIO || f.LatencyNS <= int64(time.Millisecond) {
				return nil
			}
			g := f // a shorter stall
			g.LatencyNS = f.LatencyNS / 2
			return []Fault{g}
		},
		class: func(Fault) string { return class },
	}
}

// deviceHit decides whether device fault kind strikes this call (n: the disk op, or with
// read the file read, of the incarnation; match and path: what the knob's filters see).
// The knob's stream is drawn whenever the knob is on, so a replayed plan consumes it as
// the original run did; only a run without a plan outside a quiet period acts on it.
func (inc *incarnation) deviceHit(kind FaultKind, knob *DiskFault, read bool, n int64, match, path string) (Fault, bool) {
	w := inc.w
	hit := false
	var planned Fault
	if f, ok := inc.devAt[devKey{kind, read, n}]; ok {
		hit, planned = true, f
	} else if f, ok := inc.devNext[kind]; ok && (read == readKind(kind)) {
		hit, planned = true, f
		delete(inc.devNext, kind)
		planned.Where = ""
	}
	if knob.P > 0 {
		drawn := w.deviceStream(kind).Float64() < knob.P && knob.Matches(match, []string{path})
		if drawn && w.opt.plan == nil && !hit && w.now >= w.quietUntil {
			hit = true
		}
	}
	if !hit {
		return Fault{}, false
	}
	f := Fault{AtNS: w.now, Kind: kind, Node: inc.node.name, Incarnation: inc.n, LatencyNS: planned.LatencyNS}
	if read {
		f.ReadOp = n
	} else {
		f.DiskOp = n
	}
	return f, true
}

// deviceStream is the rate draw stream of a device fault knob, one per kind so that
// turning one on does not move the draws of another (or of fsync_eio).
func (w *world) deviceStream(kind FaultKind) *rand.Rand {
	if w.devRng == nil {
		w.devRng = map[FaultKind]*rand.Rand{}
	}
	r := w.devRng[kind]
	if r == nil {
		r = streamRand(w.seedForGuest(), "disk/"+string(kind))
		w.devRng[kind] = r
	}
	return r
}

// deviceRand is the stream of one device fault: where it strikes and how. It is keyed
// by the fault as the plan pins it.
func (w *world) deviceRand(f Fault) *rand.Rand {
	return streamRand(w.seedForGuest(), fmt.Sprintf("device/%s/%s/%d/%d/%d", f.Kind, f.Node, f.Incarnation, f.DiskOp, f.ReadOp))
}

// deviceOn reports whether any device fault may strike this incarnation: a knob is on
// or one is armed. When none is, the read and write paths do nothing new.
func (inc *incarnation) deviceOn() bool {
	if len(inc.devAt) > 0 || len(inc.devNext) > 0 {
		return true
	}
	w := inc.w
	if w.devKnobs == 0 {
		w.devKnobs = 1
		for _, d := range w.cfg.Faults.deviceFaults() {
			if d.knob.P > 0 {
				w.devKnobs = 2
			}
		}
	}
	return w.devKnobs == 2
}

// recordDevice records a device fault that struck and traces it.
func (inc *incarnation) recordDevice(f Fault, format string, args ...any) {
	w := inc.w
	w.applied = append(w.applied, f)
	w.tracef("fault", "%s %s: %s", f.Kind, inc.label, fmt.Sprintf(format, args...))
}

// pickSector draws a sector (unit bytes, aligned) that overlaps [off, off+n), n > 0.
func pickSector(r *rand.Rand, off, n, unit int64) int64 {
	first := off / unit * unit
	last := (off + n - 1) / unit * unit
	return first + unit*r.Int64N((last-first)/unit+1)
}

// mangle changes b as a bad device returns it: one flipped bit, or (zero) zeroes, and a
// flipped bit when b is already all zeros so the bytes always differ. It describes what
// it did.
func mangle(r *rand.Rand, b []byte) string {
	if r.IntN(2) == 0 {
		allZero := true
		for _, c := range b {
			allZero = allZero && c == 0
		}
		if !allZero {
			clear(b)
			return fmt.Sprintf("%d bytes zeroed", len(b))
		}
	}
	i := r.IntN(len(b))
	bit := r.IntN(8)
	b[i] ^= 1 << bit
	return fmt.Sprintf("bit %d of byte %d flipped", bit, i)
}

// ReadFaults applies read_eio and corrupt_read to a file read that returned total bytes
// at off into bufs: it returns how many bytes the read returns, or disk.EIO.
func (inc *incarnation) ReadFaults(ino disk.Ino, path string, off int64, bufs [][]byte, total int) (int, error) {
	inc.reads++ // always, so that read_op numbers do not depend on when a fault was armed
	if !inc.deviceOn() {
		return total, nil
	}
	n := inc.reads
	d := inc.node.disk
	unit := d.TearUnit()
	cfg := &inc.w.cfg.Faults
	if f, ok := inc.deviceHit(FaultReadEIO, &cfg.ReadEIO, true, n, "read", path); ok && total > 0 {
		s := pickSector(inc.w.deviceRand(f), off, int64(total), unit)
		if err := d.MarkBad(ino, s, unit); err == nil {
			f.Where = "read " + path
			inc.recordDevice(f, "read #%d %s @%d+%d: sectors @%d+%d unreadable until rewritten", n, path, off, total, s, unit)
			if s <= off {
				return 0, disk.EIO
			}
			total = int(s - off) // the bytes before the bad sector, as Linux's short read
		}
	}
	if f, ok := inc.deviceHit(FaultCorruptRead, &cfg.CorruptRead, true, n, "read", path); ok && total > 0 {
		r := inc.w.deviceRand(f)
		s := pickSector(r, off, int64(total), unit)
		lo, hi := max(s, off)-off, min(s+unit, off+int64(total))-off
		b := make([]byte, hi-lo)
		gatherAt(bufs, lo, b, false)
		what := mangle(r, b)
		gatherAt(bufs, lo, b, true)
		f.Where = "read " + path
		inc.recordDevice(f, "read #%d %s @%d+%d returns wrong bytes @%d+%d (%s; the disk is unchanged)", n, path, off, total, off+lo, hi-lo, what)
	}
	return total, nil
}

// gatherAt copies between b and the bytes of bufs (one read's iovecs, back to back)
// starting at byte lo: into bufs when put, else out of them.
func gatherAt(bufs [][]byte, lo int64, b []byte, put bool) {
	pos := int64(0)
	for _, buf := range bufs {
		end := pos + int64(len(buf))
		for len(b) > 0 && lo < end && lo >= pos {
			var k int
			if put {
				k = copy(buf[lo-pos:], b)
			} else {
				k = copy(b, buf[lo-pos:])
			}
			b = b[k:]
			lo += int64(k)
		}
		pos = end
	}
}

// WriteFaults decides the device faults of write op (n bytes at off of ino, at path):
// write_eio, then misdirected_write, lost_write and corrupt.
func (inc *incarnation) WriteFaults(op wasi.DiskOp, ino disk.Ino, path string, off int64, n int) wasi.WriteFault {
	wf := wasi.WriteFault{To: -1}
	if !inc.deviceOn() {
		return wf
	}
	cfg := &inc.w.cfg.Faults
	d := inc.node.disk
	unit := d.TearUnit()
	where := "write " + path
	if f, ok := inc.deviceHit(FaultWriteEIO, &cfg.WriteEIO, false, op.N, "write", path); ok {
		f.Where = where
		inc.recordDevice(f, "disk #%d write %s @%d+%d: EIO, nothing written", op.N, path, off, n)
		wf.EIO = true
	}
	mis, misOK := inc.deviceHit(FaultMisdirected, &cfg.MisdirectedWrite, false, op.N, "write", path)
	lost, lostOK := inc.deviceHit(FaultLostWrite, &cfg.LostWrite, false, op.N, "write", path)
	cor, corOK := inc.deviceHit(FaultCorrupt, &cfg.Corrupt, false, op.N, "write", path)
	if wf.EIO || n == 0 {
		return wf
	}
	at := off
	if misOK {
		size := int64(0)
		if st, err := d.Stat(ino); err == nil {
			size = st.Size
		}
		wf.To = misdirect(inc.w.deviceRand(mis), off, int64(n), size, unit)
		at = wf.To
		mis.Where = where
		inc.recordDevice(mis, "disk #%d write %s @%d+%d lands @%d instead (reported written)", op.N, path, off, n, wf.To)
	}
	if lostOK {
		wf.Lost = true
		lost.Where = where
		inc.recordDevice(lost, "disk #%d write %s @%d+%d is acknowledged and never stored (gone after the next crash)", op.N, path, at, n)
	}
	if corOK {
		cor.Where = where
		inc.node.corrupts = append(inc.node.corrupts, pendingCorrupt{f: cor, ino: ino, path: path, off: at, n: int64(n)})
		inc.recordDevice(cor, "disk #%d write %s @%d+%d: a sector of it is corrupted on the device at the next crash", op.N, path, at, n)
	}
	return wf
}

// misdirect draws where a misdirected write of n bytes meant for off lands: a
// unit-aligned offset other than off with the write inside the file's size, or, if there
// is none, the first aligned offset at or past the end (appended).
func misdirect(r *rand.Rand, off, n, size, unit int64) int64 {
	var count int64
	if size >= n {
		count = (size-n)/unit + 1
	}
	skip := int64(-1)
	if off%unit == 0 && off+n <= size {
		skip = off / unit
	}
	if k := count - min(1, max(0, skip+1)); k > 0 {
		i := r.Int64N(k)
		if skip >= 0 && i >= skip {
			i++
		}
		return i * unit
	}
	to := (size + unit - 1) / unit * unit
	if to == off {
		to += unit
	}
	return to
}

// SlowIO stalls the caller in disk op op (a write or fsync of path; match: its kind as
// filters see it) when slow_io strikes: the node is blocked in the call for the spike
// while virtual time and the other nodes go on.
func (inc *incarnation) SlowIO(op wasi.DiskOp, match, path string) {
	if !inc.deviceOn() {
		return
	}
	w := inc.w
	f, ok := inc.deviceHit(FaultSlowIO, &w.cfg.Faults.SlowIO, false, op.N, match, path)
	if !ok {
		return
	}
	if f.LatencyNS <= 0 {
		most := int64(w.cfg.Faults.SlowIOLatency)
		if most <= 0 {
			most = int64(defaultSlowIOLatency)
		}
		f.LatencyNS = 1 + w.deviceRand(f).Int64N(most)
	}
	f.Where = match + " " + path
	inc.recordDevice(f, "disk #%d %s %s stalls for %s", op.N, match, path, formatDuration(f.LatencyNS))
	end := w.now + f.LatencyNS
	for w.now < end {
		inc.Block(end)
	}
}

// pendingCorrupt is a write a corrupt fault struck: at the node's next crash one sector
// of the range it wrote changes on the device.
type pendingCorrupt struct {
	f      Fault
	ino    disk.Ino
	path   string
	off, n int64
}

// applyCorrupts corrupts, after a crash of n, one sector of each write a corrupt fault
// struck since the last crash, in the order they were struck.
func (w *world) applyCorrupts(n *node) {
	d := n.disk
	unit := d.TearUnit()
	for _, c := range n.corrupts {
		r := w.deviceRand(c.f)
		s := pickSector(r, c.off, c.n, unit)
		var what string
		k, err := d.Corrupt(c.ino, s, int(unit), func(b []byte) { what = mangle(r, b) })
		switch {
		case err != nil || k == 0:
			w.tracef("fault", "corrupt %s: %s @%d: nothing on the device to corrupt", n.name, c.path, s)
		default:
			w.tracef("fault", "corrupt %s: %s @%d+%d corrupted on the device (%s)", n.name, c.path, s, k, what)
		}
	}
	n.corrupts = nil
}
