package engine

import (
	"cmp"
	"crypto/sha256"
	"hash"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/coverage"
	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/goloc"
	"github.com/seedfall/seedfall/engine/internal/netsim"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// runOptions are the knobs of one run.
type runOptions struct {
	plan       *FaultPlan // replay this plan instead of generating one
	keepTrace  bool
	mutation   string
	reseedAt   int64 // cause: from this virtual time on, re-randomize the future
	futureSeed uint64
	wallBudget time.Duration
	traceHook  func(line string) // replay streaming
	prof       *profiler         // nil: no profile (profile.go)
	onWatchdog func()            // RunOptions.OnWatchdog
	progress   func(RunProgress) // RunOptions.Progress
	probe      *crashProbe       // seedfall crashes: record crash points (crashstates.go)
}

// world is one simulated run: nodes, virtual clock, event queue, disks, network.
type world struct {
	sim  *Sim
	cfg  *Config
	seed uint64
	opt  runOptions

	now    int64
	seq    uint64
	events eventQueue

	rngSched, rngNet, rngDisk *rand.Rand
	devRng                    map[FaultKind]*rand.Rand // device fault knobs' streams (devfault.go)
	devKnobs                  int8                     // 0: not yet looked at, 1: every device knob off, 2: some on
	reseeded                  bool

	nodes  []*node
	byName map[string]*node
	// heldCuts are the links directed partitions cut until a heal (directed.go).
	heldCuts map[[2]string]heldCut
	runnable []*incarnation
	yield    chan struct{}
	running  *incarnation

	net *netsim.Network

	trace     []string
	traceN    int
	traceHash hash.Hash
	applied   []Fault
	// swarm is the run's swarm draw (nil: no swarm); cfg is then the config with its
	// values (swarm.go).
	swarm       SwarmDraw
	planned     []Fault
	faultGen    int
	props       map[string]*PropertyHit
	history     []histOp
	failure     *Failure
	verdict     Verdict
	done        bool
	stats       RunStats
	watchdogHit bool
	// quietGen numbers the quiet-period checks: a check of an older generation is stale.
	quietGen int
	// setupDone: the workload said its setup is complete; quietUntil: faults due before
	// this virtual time are dropped (the workload's quiet period). See sdk_lifecycle.go.
	setupDone  bool
	quietUntil int64
	// steps counts the world loop's iterations (events fired, switches), for the
	// watchdog's monitor; stuck says what it found when it closed stuckCh.
	steps     atomic.Int64
	nowSeen   atomic.Int64 // the virtual clock as the world loop last saw it, for Progress
	stuck     string
	stopWatch func()
	wallStart time.Time
	cpuStart  time.Duration // the process's CPU time at the start; 0 if unknown
	outDir    string
	syncSites map[string]bool
	cov       coverage.Acc // coverage of the system under test (config "coverage")
}

// node is one process of the system under test, across its incarnations.
type node struct {
	idx      int
	name     string
	cfg      NodeConfig
	workload bool
	module   wazero.CompiledModule
	alloc    experimental.MemoryAllocator // the module's guest memories; nil: wazero's
	loc      *goloc.Table                 // nil: no source locations
	// builds are the old and the new build of a node with an upgrade (upgrade.go);
	// module, alloc and loc are set from one of them as each incarnation starts.
	// nextBuild is the build a crash chose for the restart ("": follow the mode).
	builds    [2]nodeBuild
	nextBuild string
	disk      *disk.FS
	host      *netsim.Host
	inc       *incarnation // current incarnation, nil while down
	lives     int          // incarnations started so far
	pausedTo  int64
	// heldDown: the workload crashed or killed the node (a directed fault): it stays
	// down until the workload restarts it, whatever restart another fault scheduled.
	heldDown bool
	// clocks
	skewPPM  int64
	wallJump int64
	// skewSince is when the current skew took effect and skewOffset how far the node's
	// clocks were ahead of virtual time then: the skew applies to the time since, so
	// changing it mid-run never moves the monotonic clock back.
	skewSince  int64
	skewOffset int64
	// armed faults for disk ops, by incarnation
	armed []Fault
	// corrupts are the writes a corrupt fault struck, applied to the device at the
	// node's next crash (devfault.go).
	corrupts []pendingCorrupt
	// mid-op crash requested by a time-based fault for the current incarnation
	crashNextOp bool
	crashSkip   int64  // matching disk ops the armed mid-op crash still lets pass
	midPlanned  *Fault // the time-based fault that armed crashNextOp
	pendingMid  *Fault // a crash during a disk op that the scheduler must finish
	pendingRng  disk.Chooser
	// exits are the virtual times of a fail-stop node's own non-zero exits, and
	// lastExit describes the latest ("exited with code 1: open wal: ...").
	exits    []int64
	lastExit string
}

type incState int

const (
	incNew incState = iota
	incRunnable
	incRunning
	incBlocked
	incDone
)

// incarnation is one life of a node: one wasm instance.
type incarnation struct {
	w      *world
	node   *node
	n      int
	label  string
	state  incState
	resume chan struct{}
	killed bool // the host is stopping it: the next host call exits
	crash  bool // stopped by a crash fault: a power loss (as opposed to the end of the run)
	// procKill: stopped by a kill fault, a process death on a live machine (see kill).
	procKill bool
	// sdkWrote: the op in progress writes the Antithesis SDK's output file, which the
	// host reads for its setup-complete line when it ends (sdk_lifecycle.go).
	sdkWrote bool
	exited   bool
	code     uint32
	errMsg   string

	wakeGen  uint64
	deadline int64 // blocked: wake at this virtual time (-1: none)
	rand     *rand.Rand
	sched    *rand.Rand    // interleave's stream of goroutine choices; nil without
	host     *wasi.Process // fd table
	diskOps  int64
	crashAt  int64 // crash during this disk op number (0: none)
	eioAt    map[int64]bool
	// devAt are the device faults pinned to this incarnation's disk ops and reads;
	// devNext those armed by time for the next matching call; reads counts file reads
	// (devfault.go).
	devAt    map[devKey]Fault
	devNext  map[FaultKind]Fault
	reads    int64
	out      [3]strings.Builder // partial lines of fd 1 and 2
	outBytes int
	lastLine string
	// failContext is what the guest marked as the context of its failure line
	// (sim.FailureContext): it counts when the line ends with it.
	failContext string
	panics      panicScan // the Go runtime's panic report in the output, if any
	mod         api.Module

	opWhat       string
	inflight     *inflightWrite // the write about to begin (crash-state probe only)
	crashRng     disk.Chooser   // the stream of the crash during the current disk op
	failNextSync bool
	eioFault     *Fault
	cov          *incCoverage // where the guest's coverage counters are, if built with coverage
}

// Now, Schedule, Tracef and NetRand make the world the network's netsim.World.
func (w *world) Now() int64 { return w.now }

func (w *world) Schedule(at int64, fn func()) { w.schedule(at, fn) }

func (w *world) Tracef(who, format string, args ...any) { w.tracef(who, format, args...) }

func (w *world) NetRand() *rand.Rand { return w.rngNet }

// lookupHost maps the host of an address to a node: its name, or the IP the net
// overlay gave it.
func (w *world) lookupHost(host string) *netsim.Host {
	if n := w.byName[host]; n != nil {
		return n.host
	}
	if name, ok := w.sim.nodeIPs[host]; ok {
		return w.byName[name].host
	}
	return nil
}

func streamRand(seed uint64, name string) *rand.Rand {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}

func newWorld(s *Sim, seed uint64, opt runOptions) *world {
	w := &world{
		sim: s, cfg: s.cfg, seed: seed, opt: opt,
		rngSched:  streamRand(seed, "sched"),
		rngNet:    streamRand(seed, "net"),
		rngDisk:   streamRand(seed, "disk"),
		byName:    map[string]*node{},
		heldCuts:  map[[2]string]heldCut{},
		yield:     make(chan struct{}),
		traceHash: sha256.New(),
		props:     map[string]*PropertyHit{},
	}
	if sw := runSwarm(s.cfg, seed, opt.plan); sw != nil {
		w.swarm = sw
		w.cfg = sw.apply(s.cfg)
	}
	w.net = netsim.New(w, netsim.Config{
		Latency: int64(s.cfg.Faults.Latency), Jitter: int64(s.cfg.Faults.Jitter),
		SendBuf: s.cfg.Net.SendBufferKiB * 1024, RecvBuf: s.cfg.Net.RecvBufferKiB * 1024,
		Lookup: w.lookupHost,
	})
	mut := opt.mutation
	all := s.cfg.AllNodes()
	old := len(all) // index of the next old build in s.modules
	for i, nc := range all {
		n := &node{
			idx: i, name: nc.Name, cfg: nc, workload: i == len(s.cfg.Nodes),
			module: s.modules[i], alloc: s.allocs[i], loc: s.locs[i], host: &netsim.Host{Idx: i, Name: nc.Name},
		}
		if nc.Upgrade != nil {
			n.builds[0] = nodeBuild{s.modules[old], s.allocs[old], s.locs[old], s.wasmHashes[old][:7]}
			n.builds[1] = nodeBuild{s.modules[i], s.allocs[i], s.locs[i], s.wasmHashes[i][:7]}
			old++
		}
		n.disk = disk.New(disk.Options{
			StrictDirs:      s.cfg.StrictDirs,
			FsyncNoop:       mut == MutFsyncNoop,
			FdatasyncNoop:   mut == MutFdatasyncNoop,
			DirFsyncNoop:    mut == MutDirFsyncNoop,
			RenameNonAtomic: mut == MutRenameNonAtom,
			ReorderSync:     mut == MutReorderSync,
			MaxBytes:        int64(s.cfg.DiskLimitMiB) << 20,
			MaxFileBytes:    int64(s.cfg.FileLimitMiB) << 20,
			TearUnit:        int64(cmp.Or(s.cfg.Faults.TearUnit, defaultTearUnit)),
			// File times follow the node's wall clock, as Linux stamps them.
			Now: func() int64 { return n.clockNS(w.now, true) },
		})
		w.nodes = append(w.nodes, n)
		w.byName[n.name] = n
	}
	return w
}
