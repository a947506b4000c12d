package wasi

import (
	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/netsim"
)

// Proc is what the WASI host needs of the world, implemented by the engine's
// incarnation (one life of one node). The host functions decode the guest's arguments,
// keep the fd table, drive the disk (disk.FS) and the sockets (netsim.Sock), and encode
// the results; everything that shapes time, scheduling, faults and the trace goes
// through Proc.
//
// The contract:
//
//   - The host never reads the host's clock, never draws from a random source of its own
//     and never iterates a map: time is Now, Clock and Advance; randomness is RandUint64,
//     SchedPick and CrashStream; so a seed replays exactly.
//   - Every call that may block goes through the scheduler: Block parks the guest until a
//     socket it polls changes (Owner.Wake) or a deadline passes; Yield and MaybePreempt
//     are scheduling points; a host function never waits on anything else.
//   - Every host call starts with HostCall, which stops a guest the host killed.
//   - A mutating or syncing disk op is bracketed by BeginDiskOp and EndDiskOp; when the
//     returned DiskOp says Crash, the host applies what the crash lets land (CutPoint,
//     MaybeApply) and calls CrashNow, which does not return.
//   - The host traces only through Tracef, Output and the Proc's own hooks; it does not
//     decide verdicts (Assert and OpCall/OpReturn only record).
//   - Proc may park the calling goroutine (Advance, Yield, MaybePreempt, Block, the disk-op
//     hooks): the host must hold no state across such a call that another incarnation
//     could change, other than through the disk and sockets it reads again afterwards.
type Proc interface {
	netsim.Owner

	// HostCall is called on entry to every host function (name: its import name; mod:
	// the calling instance); it counts the call and stops the guest (panics with its
	// exit) if the host is killing it. It returns true when the call is profiled (replay
	// -profile): HostReturn is then called when the host function returns or unwinds.
	HostCall(mod api.Module, name string) bool
	HostReturn()

	// Args and Environ are the process's argv and environment, in a fixed order.
	Args() []string
	Environ() []string

	// Now is global virtual time (ns). Clock is the node's own clock, realtime or
	// monotonic, with its skew and jumps; TimerDeadline converts a timeout of the
	// node's clock into the virtual time it expires at.
	Now() int64
	Clock(realtime bool) int64
	TimerDeadline(timeout int64) int64
	// Advance moves virtual time on by one tick and lets due events fire (it may yield).
	Advance()
	// Yield is sched_yield: a tick, then a scheduling point; the guest stays runnable.
	Yield()
	// MaybePreempt is a seeded scheduling point after I/O: other nodes may run first.
	MaybePreempt()
	// Block parks the guest until Wake or, with deadline >= 0, until that virtual time.
	Block(deadline int64)
	// RandUint64 is the next value of the guest's random stream (random_get).
	RandUint64() uint64
	// SchedPick is seedfall.sched_pick: which of n >= 2 ready goroutines the guest's
	// runtime runs next, an index in [0, n), from the incarnation's interleave stream
	// (0, the runtime's FIFO choice, for a node without interleave).
	SchedPick(n uint32) uint32

	// Disk is the node's file system. It outlives the incarnation.
	Disk() *disk.FS
	// MmapLimit is how many bytes the incarnation may map in all (mmap_limit_mib); 0
	// means DefaultMmapLimit.
	MmapLimit() int64
	// BeginDiskOp numbers a mutating or syncing disk op of kind on paths (paths[0] is
	// traced) and decides whether the node crashes during it; match is the kind that
	// fault filters see (a directory's fsync is "dir_fsync"). detail is traced after
	// the path.
	BeginDiskOp(kind, match string, paths []string, detail string) DiskOp
	// EndDiskOp traces the completed op and moves time on.
	EndDiskOp()
	// CrashNow records op's crash (partial says what of it landed) and stops the guest.
	CrashNow(op DiskOp, partial string)
	// CrashStream is the random stream of the crash of the current op: what lands.
	CrashStream() disk.Chooser
	// MaybeApply applies a namespace op a crash interrupts, or not, by a CrashStream draw.
	MaybeApply(fn func())
	// InflightWrite tells the process, just before BeginDiskOp of a write, what the
	// write is: seedfall crashes tears it at each tear point on a copy of the disk.
	InflightWrite(ino disk.Ino, off int64, data []byte)
	// TornWrites reports whether a crash may land part of a write (faults.torn_writes).
	TornWrites() bool
	// SyncFaults decides for an fsync (op, on path; dir: of a directory) whether it fails
	// with EIO and whether a durability mutation skips it; it also counts it.
	SyncFaults(op DiskOp, match, path string, dir, dataOnly bool) (fail, skip bool)
	// ReadFaults applies the device faults of a file read that returned total bytes at
	// off of ino (at path) into bufs: it returns the count the read returns, or an error
	// (disk.EIO) it fails with.
	ReadFaults(ino disk.Ino, path string, off int64, bufs [][]byte, total int) (int, error)
	// WriteFaults decides the device faults of write op (n bytes at off of ino).
	WriteFaults(op DiskOp, ino disk.Ino, path string, off int64, n int) WriteFault
	// SlowIO stalls the caller in op (a write or fsync) when a slow_io spike strikes it.
	SlowIO(op DiskOp, match, path string)
	// OSyncWrite counts a write to an O_SYNC/O_DSYNC fd and reports whether it must be
	// made durable (a mutation may ignore O_SYNC).
	OSyncWrite() bool
	// CountReplace counts a rename over an existing file.
	CountReplace()

	// Listen and Dial open sockets owned by this incarnation.
	Listen(port int) (*netsim.Sock, netsim.Errno)
	Dial(addr string) (*netsim.Sock, netsim.Errno)

	// Tracef traces a line under the incarnation's label; Output is the guest's
	// stdout (fd 1) or stderr (fd 2).
	Tracef(format string, args ...any)
	Output(fd int, data []byte)

	// TestHostClock is seedfall.test_host_clock: virtual time, or the host's clock when
	// the sim deliberately allows it (testing -check).
	TestHostClock() int64
	// Assert records one evaluation of a property (kind: AssertAlways...).
	Assert(kind int, cond bool, msg, details string)
	// OpCall records the call of a linearizability-history operation and returns its
	// id; OpPending reports whether id is a call not yet returned; OpReturn records
	// its return.
	OpCall(client int, input []byte) int
	// SetupComplete and StopFaults are the workload's lifecycle calls: its setup is
	// done (details: JSON or ""); faults stop for ns (<= 0: the rest of the run).
	SetupComplete(details string)
	// FailureContext marks text, the end of the failure line the guest is about to
	// print, as where or how the failure was noticed rather than what failed.
	FailureContext(text string)
	StopFaults(ns int64)
	// DirectedFault is seedfall.fault: a fault the guest asks for now (req: JSON
	// {"kind", "node", "peers", "duration_ns"}). It returns "" when the fault took
	// effect, else why it was refused.
	DirectedFault(req []byte) string
	OpPending(id int) bool
	OpReturn(id int, output []byte)

	// CoverMeta and CoverCounters record what a guest built with coverage registers at
	// init: each instrumented package's meta-data (its blob's place in linear memory,
	// hash, path, ID, counter mode and granularity) and each counter array. The engine
	// reads the counters when the incarnation stops; they never reach the trace.
	CoverMeta(blob, blobLen uint32, hash [16]byte, path string, pkgID int32, mode, gran uint8)
	CoverCounters(addr, n uint32)
}

// DiskOp is one numbered mutating or syncing disk operation of an incarnation.
type DiskOp struct {
	N     int64
	What  string // kind, path, detail and location, as traced
	Crash bool   // the plan crashes the node during this op
}

// WriteFault is what the device does to one write (WriteFaults).
type WriteFault struct {
	EIO  bool  // fail with EIO, write nothing
	Lost bool  // acknowledge it, never store it (disk.FS.WriteAtLost)
	To   int64 // misdirected: the offset it lands at instead (-1: where asked)
}

// beginDiskOp is BeginDiskOp for an op with one path that faults see by its kind.
func (h *Process) beginDiskOp(kind, path, detail string) DiskOp {
	return h.p.BeginDiskOp(kind, kind, []string{path}, detail)
}

// namespaceOp is the one way a host call changes the namespace or a file's size as a
// disk op (create, mkdir, rmdir, unlink, link, rename, truncate), so that no call gets
// the crash protocol wrong: op was begun with BeginDiskOp; a crash planned for it lands
// the change or not (a draw from the crash's own stream) and stops the guest, which
// never returns from here; otherwise the change is made and the op ends.
func (h *Process) namespaceOp(op DiskOp, change func() error) error {
	if op.Crash {
		h.p.MaybeApply(func() { change() })
		h.p.CrashNow(op, "")
	}
	err := change()
	h.p.EndDiskOp()
	return err
}
