package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/internal/duration"
)

// Duration is a time.Duration that reads and writes JSON as text ("250ms", "1.5s"; a
// number is nanoseconds). Convert with time.Duration(d) and Duration(t).
type Duration = duration.Duration

// Config describes a simulated world: the nodes, the workload and how hostile the world is.
// It is read from seedfall.json.
type Config struct {
	// Nodes are the long-running processes of the system under test.
	Nodes []NodeConfig `json:"nodes"`
	// Workload is the node that drives the system and checks it; its exit ends the run
	// (0 = pass).
	Workload NodeConfig `json:"workload"`
	// Faults says how hostile the world is.
	Faults FaultConfig `json:"faults"`
	// Schedule are faults the test states, applied in every run at their times (or disk
	// ops), as the workload's own (directed.go): a fixed scenario, such as the one
	// `seedfall shrink -emit-test` writes from a shrunk plan (simtest.Schedule). Each is
	// a fault of a plan.
	Schedule []Fault `json:"schedule,omitempty"`
	// Net sizes the simulated sockets' buffers.
	Net NetConfig `json:"net"`
	// StrictDirs makes a create, rename, unlink or mkdir survive a crash only once its
	// parent directory has been fsynced.
	StrictDirs bool `json:"strict_dirs,omitempty"`
	// Horizon is the virtual time at which a run stops. A run whose workload has not
	// finished by then is a liveness failure, or counted as "horizon" when
	// liveness.horizon is "count". Default 60s.
	Horizon Duration `json:"horizon,omitempty"`
	// Liveness says what a workload that never finishes means (see LivenessConfig).
	Liveness LivenessConfig `json:"liveness,omitempty"`
	// Watchdog is how long a guest may run without a host call; a run that exceeds it
	// (a guest spinning) is counted as "watchdog". It counts wall-clock time and the
	// process's CPU time, and both must run out. Default 60s.
	Watchdog Duration `json:"watchdog,omitempty"`
	// MemoryLimitMiB caps each guest's linear memory. Default 512.
	MemoryLimitMiB int `json:"memory_limit_mib,omitempty"`
	// MmapLimitMiB caps what each incarnation maps with mmap in all: a mapping is guest
	// memory (docs/overlay.md). Default half of memory_limit_mib.
	MmapLimitMiB int `json:"mmap_limit_mib,omitempty"`
	// OutputLimitKiB caps the stdout+stderr one node incarnation may write to the trace;
	// beyond it, output is counted and dropped. Default 1024.
	OutputLimitKiB int `json:"output_limit_kib,omitempty"`
	// DiskLimitMiB is the capacity of each node's simulated disk; a write beyond it
	// fails with ENOSPC. Default 256.
	DiskLimitMiB int `json:"disk_limit_mib,omitempty"`
	// FileLimitMiB is the largest size of one file; a write or truncate beyond it fails
	// with EFBIG. Default 1024.
	FileLimitMiB int `json:"file_limit_mib,omitempty"`
	// Linearizability, when set, checks the workload's recorded history with Porcupine.
	Linearizability *LinConfig `json:"linearizability,omitempty"`
	// Mutate lists durability mutation operators for `seedfall mutate` (default: all).
	Mutate []string `json:"mutate,omitempty"`
	// Coverage, when set, builds the nodes with Go's coverage instrumentation and
	// collects the counters of every incarnation (Result.Coverage).
	Coverage *CoverageConfig `json:"coverage,omitempty"`

	// Path is the file the config was read from; Dir is its directory. Packages are
	// resolved against Dir.
	Path string `json:"-"`
	Dir  string `json:"-"`
}

// NodeConfig is one node (or the workload).
type NodeConfig struct {
	Name string `json:"name"`
	// Pkg is the Go package to build, relative to the config's directory ("./server").
	// A directory of another module ("../raft/client") is built in that module.
	Pkg string `json:"pkg"`
	// Test builds Pkg's test binary (go test -c) instead of a main package: the nodes
	// of a simulation test (package simtest, `seedfall test`) are instances of it.
	Test bool              `json:"test,omitempty"`
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	// NetOverlay builds the node with seedfall's wasip1 net package, so unmodified
	// net.Listen, net.Dial and net/http use the simulated network.
	NetOverlay bool `json:"net_overlay,omitempty"`
	// Interleave builds the node with a Go runtime in which seedfall chooses, by seed,
	// which ready goroutine runs next (docs/interleave.md): true, or an object such as
	// {"trace": true, "file_ops": true}.
	Interleave Interleave `json:"interleave,omitzero"`
	// Patches are unified diffs (relative to the config's directory) applied to the
	// node's dependencies at build time through the build overlay.
	Patches []string `json:"patches,omitempty"`
	// Tags are extra build tags.
	Tags []string `json:"tags,omitempty"`
	// OnExit says what the node's own exit with a non-zero code (or a panic) means:
	// "fail" (the default) fails the run; "restart" declares the node fail-stop, like a
	// server that exits on an fsync error on purpose: it is restarted after
	// faults.restart_delay over its disk as it is (an exit loses nothing of the page
	// cache), and only a restart loop fails the run. Not for the workload.
	OnExit string `json:"on_exit,omitempty"`
	// MaxRestarts and RestartWindow are a fail-stop node's restart budget: the run fails
	// when the node exits on its own more than MaxRestarts times within RestartWindow
	// (defaults 10 and 10s), or still exits again and again when the horizon comes.
	MaxRestarts   int      `json:"max_restarts,omitempty"`
	RestartWindow Duration `json:"restart_window,omitempty"`
	// Upgrade, when set, runs the node's first incarnation on another build (the old
	// one) and later incarnations on this one, over the disk the old build left
	// (upgrade.go). Not for the workload.
	Upgrade *UpgradeConfig `json:"upgrade,omitempty"`
}

// On-exit policies of a node.
const (
	OnExitFail    = "fail"
	OnExitRestart = "restart"
)

// Defaults of a fail-stop node's restart budget.
const (
	defaultMaxRestarts   = 10
	defaultRestartWindow = Duration(10 * time.Second)
)

// failStop reports whether the node restarts after its own non-zero exit.
func (n *NodeConfig) failStop() bool { return n.OnExit == OnExitRestart }

// FaultConfig says how hostile the world is. Rates are per second of virtual time.
type FaultConfig struct {
	// CrashPerSec is the rate of crashes across the nodes (not the workload).
	CrashPerSec float64 `json:"crash_per_sec,omitempty"`
	// CrashMidOp is the share of crashes that happen in the middle of a disk op
	// (default 0.5 when crashes are on), optionally aimed at some paths and op kinds: a
	// mid-op crash then fires in the node's next matching disk op. In JSON, a number
	// (0.5) or an object ({"p": 0.5, "paths": ["/data/wal/*"], "ops": ["write"]}).
	CrashMidOp *DiskFault `json:"crash_mid_op,omitempty"`
	// CrashPlacement says which of the node's matching disk ops a mid-op crash lands in.
	// "spread" (the default): each crash first skips a number of matching ops drawn for
	// it (skip_ops in the plan: none for half the crashes, 1 to 63 log-uniform for the
	// others), so that it lands on any op of a request, the second or the fifth as well
	// as the first, whatever the node did before. "next_op" (the default before
	// seedfall's fault draws changed, issue 47): the first one after the crash's time,
	// which on a node that idles between requests is almost always the first op of a
	// request; it replays a seed drawn before the change as it ran then.
	CrashPlacement string `json:"crash_placement,omitempty"`
	// KillPerSec is the rate of process deaths (kill faults) across the nodes: the
	// process dies on a live machine, so its page cache survives and its kernel closes
	// its sockets. Crashes (CrashPerSec) are power losses.
	KillPerSec float64 `json:"kill_per_sec,omitempty"`
	// RestartDelay is the mean delay before a crashed or killed node restarts (default 250ms).
	RestartDelay Duration `json:"restart_delay,omitempty"`
	// TornWrites lets a crash keep a torn prefix of a pending write.
	TornWrites bool `json:"torn_writes,omitempty"`
	// TearUnit is the sector size of torn writes, in bytes: a write is torn only at file
	// offsets that are multiples of it (a sector is written whole or not at all), also
	// when a crash interrupts it. 1 tears at any byte. Default 512.
	TearUnit int `json:"tear_unit,omitempty"`
	// FsyncEIO is the probability that an fsync fails with EIO (Linux semantics),
	// optionally only for some paths and sync kinds. In JSON, a number (0.05) or an
	// object ({"p": 0.05, "paths": ["/data/wal/*"], "ops": ["fsync"]}).
	FsyncEIO DiskFault `json:"fsync_eio,omitzero"`
	// The device faults (docs/faults.md, "Device faults"), each a probability per call
	// it applies to (a file read, a write, or for slow_io a write or fsync), aimable like
	// FsyncEIO. 0: off, and the run draws exactly as without the knob.
	ReadEIO          DiskFault `json:"read_eio,omitzero"`          // per read: a latent sector error
	Corrupt          DiskFault `json:"corrupt,omitzero"`           // per write: a sector of it is corrupted at the next crash
	CorruptRead      DiskFault `json:"corrupt_read,omitzero"`      // per read: wrong bytes in one sector
	MisdirectedWrite DiskFault `json:"misdirected_write,omitzero"` // per write: lands elsewhere in the file
	LostWrite        DiskFault `json:"lost_write,omitzero"`        // per write: acknowledged, never stored
	WriteEIO         DiskFault `json:"write_eio,omitzero"`         // per write: EIO, nothing written
	SlowIO           DiskFault `json:"slow_io,omitzero"`           // per write or fsync: a latency spike
	// SlowIOLatency is the largest extra latency of a slow_io spike (default 200ms);
	// each spike draws uniformly up to it.
	SlowIOLatency Duration `json:"slow_io_latency,omitempty"`
	// PartitionPerSec is the rate of network partitions; PartitionDuration their mean length
	// (default 1s); OneWayShare the share that are one-way.
	PartitionPerSec   float64  `json:"partition_per_sec,omitempty"`
	PartitionDuration Duration `json:"partition_duration,omitempty"`
	OneWayShare       float64  `json:"one_way_share,omitempty"`
	// SplitPerSec is the rate of group partitions (splits): the nodes, the workload
	// included, fall into two or more groups (for three or more nodes one a strict
	// majority) cut off from each other for about PartitionDuration.
	SplitPerSec float64 `json:"split_per_sec,omitempty"`
	// Latency is the base one-way link latency (default 1ms); Jitter the extra random part
	// (default 1ms).
	Latency Duration `json:"latency,omitempty"`
	Jitter  Duration `json:"jitter,omitempty"`
	// LatencySpikePerSec adds latency spikes of up to LatencySpike for about a second.
	LatencySpikePerSec float64  `json:"latency_spike_per_sec,omitempty"`
	LatencySpike       Duration `json:"latency_spike,omitempty"`
	// ResetPerSec is the rate of connection resets.
	ResetPerSec float64 `json:"reset_per_sec,omitempty"`
	// PausePerSec is the rate of process pauses, of mean length PauseDuration (default 500ms).
	PausePerSec   float64  `json:"pause_per_sec,omitempty"`
	PauseDuration Duration `json:"pause_duration,omitempty"`
	// ClockJumpPerSec is the rate of wall-clock jumps of up to ClockJump (default 5s),
	// forward or back.
	ClockJumpPerSec float64  `json:"clock_jump_per_sec,omitempty"`
	ClockJump       Duration `json:"clock_jump,omitempty"`
	// ClockSkewPPM gives each node a clock drift drawn from ±ClockSkewPPM.
	ClockSkewPPM int64 `json:"clock_skew_ppm,omitempty"`
	// StartOn is when the generated faults start: "time" (the default) at StartAfter,
	// or "setup_complete" when the workload says its setup is done (sim.SetupComplete
	// or the Antithesis SDK's lifecycle.SetupComplete), StartAfter later.
	StartOn string `json:"start_on,omitempty"`
	// StartAfter delays the first fault (default 50ms), so nodes can start.
	StartAfter Duration `json:"start_after,omitempty"`
	// Swarm draws, per seed, which fault kinds are on and their rates, each up to the
	// value above (swarm testing, swarm.go): every kind whose knob is set is on with
	// probability 1/2, at a value drawn from (0, the knob's value]. The draw is traced
	// ("swarm: crash 0.31/s, partition off, ...") and recorded in the result and in a
	// saved plan.
	Swarm bool `json:"swarm,omitempty"`
	// MaxFaults caps the faults in one generated plan (default 64 when absent; an
	// explicit 0 means no generated faults).
	MaxFaults *int `json:"max_faults,omitempty"`
}

// defaultMaxFaults is the cap on a generated plan when the config does not set one.
const defaultMaxFaults = 64

// maxFaults is the cap on a generated plan: MaxFaults, or the default when it is unset
// (a Config built in code rather than parsed).
func (f *FaultConfig) maxFaults() int {
	if f.MaxFaults == nil {
		return defaultMaxFaults
	}
	return *f.MaxFaults
}

// NetConfig sizes each simulated TCP socket's buffers, as net.ipv4.tcp_wmem and
// tcp_rmem do on Linux. A writer whose send buffer is full blocks (EAGAIN on the
// non-blocking fds Go uses) until the peer reads.
type NetConfig struct {
	// SendBufferKiB bounds what a socket holds of what was written and not yet delivered
	// into the peer's receive buffer (default 256).
	SendBufferKiB int `json:"send_buffer_kib,omitempty"`
	// RecvBufferKiB bounds what a socket holds unread plus what is on its way to it: the
	// window it offers its peer (default 256).
	RecvBufferKiB int `json:"recv_buffer_kib,omitempty"`
}

// LinConfig names the Porcupine model the workload's history is checked against.
type LinConfig struct {
	Model string `json:"model"` // "register" or "kv"
	// Steps is the checker's budget: model steps of the search per partition (default
	// 10,000,000). A history that needs more is "unknown", on every host alike.
	Steps int64 `json:"steps,omitempty"`
	// Timeout is a wall-clock safety net (default 60s). Its outcome depends on the host,
	// so it never reaches the trace: it is reported apart, as unknown.
	Timeout Duration `json:"timeout,omitempty"`
}

// Bounds of the disk knobs. A disk is held in host memory, so its capacity is bounded
// too (the footprint counts allocated pages, unsynced data twice; see
// disk.Options.MaxBytes).
const (
	maxDiskLimitMiB = 16 << 10
	maxTearUnit     = 1 << 20
	defaultTearUnit = 512
)

var nodeName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// LoadConfig reads and validates a config file. Errors name the file and the field.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	cfg.Path = abs
	cfg.Dir = filepath.Dir(abs)
	return cfg, nil
}

// ParseConfig decodes and validates a config. Unknown fields are errors.
func ParseConfig(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cfg Config
	if err := dec.Decode(&cfg); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" && te.Type != nil {
			// go1.27's encoding/json leaves Field empty in an error that an UnmarshalJSON
			// method returns (go1.26 filled it in): find the field the way go1.26 named it.
			var raw any
			if json.Unmarshal(data, &raw) == nil {
				te.Field = typeErrorField(raw, reflect.TypeOf(cfg), te.Type, "")
			}
		}
		switch {
		case errors.As(err, &se):
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			return nil, fmt.Errorf("line %d: invalid JSON: %v", line, err)
		case errors.As(err, &te) && te.Type == reflect.TypeFor[DiskFault]():
			return nil, fmt.Errorf("field %s: want a probability such as 0.05 or an object such as {\"p\": 0.05, \"paths\": [\"/data/wal/*\"], \"ops\": [\"fsync\"]} (fields p, paths, ops), got %s", te.Field, te.Value)
		case errors.As(err, &te) && te.Type == reflect.TypeFor[Interleave]():
			return nil, fmt.Errorf("field %s: want true, false or an object such as {\"trace\": true} (fields trace and file_ops), got %s", te.Field, te.Value)
		case errors.As(err, &te) && te.Type == reflect.TypeFor[Duration]():
			return nil, fmt.Errorf("field %s: want a duration such as \"250ms\", got %s", te.Field, te.Value)
		case errors.As(err, &te):
			return nil, fmt.Errorf("field %s: want %s, got JSON %s", te.Field, te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			var raw any
			if json.Unmarshal(data, &raw) == nil {
				if path := unknownField(raw, reflect.TypeOf(cfg), ""); path != "" {
					return nil, fmt.Errorf("field %s: unknown field (see the README for the fields a config takes)", path)
				}
			}
			return nil, fmt.Errorf("%s (see the README for the fields a config takes)", strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil, fmt.Errorf("invalid config: %w", err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the config object")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &cfg, nil
}

func (c *Config) validate() error {
	if len(c.Nodes) == 0 && c.Workload.Pkg == "" {
		return errors.New("field nodes: at least one node or a workload is required")
	}
	if c.Workload.Pkg == "" {
		return errors.New("field workload.pkg: the workload's package is required (e.g. \"./client\")")
	}
	if c.Workload.Name == "" {
		c.Workload.Name = "client"
	}
	seen := map[string]bool{}
	check := func(field string, n NodeConfig) error {
		if !nodeName.MatchString(n.Name) {
			return fmt.Errorf("field %s.name: %q is not a node name (lower-case letters, digits and '-', starting with a letter)", field, n.Name)
		}
		if seen[n.Name] {
			return fmt.Errorf("field %s.name: duplicate node name %q", field, n.Name)
		}
		seen[n.Name] = true
		if n.Pkg == "" {
			return fmt.Errorf("field %s.pkg: the node's Go package is required (e.g. \"./server\")", field)
		}
		switch n.OnExit {
		case "", OnExitFail, OnExitRestart:
		default:
			return fmt.Errorf("field %s.on_exit: %q is not an exit policy (want \"fail\" or \"restart\")", field, n.OnExit)
		}
		if n.MaxRestarts < 0 {
			return fmt.Errorf("field %s.max_restarts: %d is negative", field, n.MaxRestarts)
		}
		if n.RestartWindow < 0 {
			return fmt.Errorf("field %s.restart_window: %s is negative", field, time.Duration(n.RestartWindow))
		}
		if (n.MaxRestarts != 0 || n.RestartWindow != 0) && !n.failStop() {
			return fmt.Errorf("field %s.max_restarts: a restart budget needs \"on_exit\": \"restart\"", field)
		}
		if n.Upgrade != nil {
			return n.Upgrade.validate(field + ".upgrade")
		}
		return nil
	}
	for i, n := range c.Nodes {
		if err := check(fmt.Sprintf("nodes[%d]", i), n); err != nil {
			return err
		}
	}
	if err := check("workload", c.Workload); err != nil {
		return err
	}
	if c.Workload.Upgrade != nil {
		return errors.New("field workload.upgrade: the workload never restarts, so it cannot change builds (upgrade is for nodes)")
	}
	if c.Workload.OnExit != "" || c.Workload.MaxRestarts != 0 || c.Workload.RestartWindow != 0 {
		return errors.New("field workload.on_exit: the workload's exit ends the run (on_exit, max_restarts and restart_window are for nodes)")
	}
	for i, sf := range c.Schedule {
		if err := sf.Validate(); err != nil {
			return fmt.Errorf("field schedule[%d]: %v", i, err)
		}
		if !seen[sf.Node] {
			return fmt.Errorf("field schedule[%d].node: %q is not a node of the config", i, sf.Node)
		}
	}
	f := c.Faults
	for _, r := range []struct {
		name string
		v    float64
	}{
		{"crash_per_sec", f.CrashPerSec}, {"kill_per_sec", f.KillPerSec}, {"partition_per_sec", f.PartitionPerSec}, {"split_per_sec", f.SplitPerSec},
		{"reset_per_sec", f.ResetPerSec}, {"pause_per_sec", f.PausePerSec},
		{"clock_jump_per_sec", f.ClockJumpPerSec}, {"latency_spike_per_sec", f.LatencySpikePerSec},
	} {
		if r.v < 0 || r.v > 1000 {
			return fmt.Errorf("field faults.%s: %v is out of range (0 to 1000 per second)", r.name, r.v)
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"one_way_share", f.OneWayShare}} {
		if p.v < 0 || p.v > 1 {
			return fmt.Errorf("field faults.%s: %v is not a probability (0 to 1)", p.name, p.v)
		}
	}
	if err := validateStartOn(f.StartOn); err != nil {
		return err
	}
	if err := f.FsyncEIO.Validate("faults.fsync_eio", syncOpKinds); err != nil {
		return err
	}
	for _, d := range f.deviceFaults() {
		if err := d.knob.Validate("faults."+string(d.kind), d.ops); err != nil {
			return err
		}
	}
	if f.CrashMidOp != nil {
		if err := f.CrashMidOp.Validate("faults.crash_mid_op", diskOpKinds); err != nil {
			return err
		}
	}
	switch f.CrashPlacement {
	case "", PlacementNextOp, PlacementSpread:
	default:
		return fmt.Errorf("field faults.crash_placement: %q is not a placement (%q or %q)", f.CrashPlacement, PlacementNextOp, PlacementSpread)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{
		{"horizon", c.Horizon}, {"watchdog", c.Watchdog}, {"faults.restart_delay", f.RestartDelay},
		{"faults.partition_duration", f.PartitionDuration}, {"faults.latency", f.Latency},
		{"faults.jitter", f.Jitter}, {"faults.pause_duration", f.PauseDuration},
		{"faults.clock_jump", f.ClockJump}, {"faults.start_after", f.StartAfter},
		{"faults.latency_spike", f.LatencySpike}, {"faults.slow_io_latency", f.SlowIOLatency},
	} {
		if d.v < 0 {
			return fmt.Errorf("field %s: %s is negative", d.name, time.Duration(d.v))
		}
	}
	if f.ClockSkewPPM < 0 || f.ClockSkewPPM > 100000 {
		return fmt.Errorf("field faults.clock_skew_ppm: %d is out of range (0 to 100000)", f.ClockSkewPPM)
	}
	if f.MaxFaults != nil && *f.MaxFaults < 0 {
		return fmt.Errorf("field faults.max_faults: %d is negative", *f.MaxFaults)
	}
	if c.MemoryLimitMiB < 0 || c.MemoryLimitMiB > 4096 {
		return fmt.Errorf("field memory_limit_mib: %d is out of range (1 to 4096)", c.MemoryLimitMiB)
	}
	if mem := c.MemoryLimitMiB; c.MmapLimitMiB < 0 || (mem > 0 && c.MmapLimitMiB > mem) || (mem == 0 && c.MmapLimitMiB > 512) {
		if mem == 0 {
			mem = 512
		}
		return fmt.Errorf("field mmap_limit_mib: %d is out of range (1 to memory_limit_mib, %d): mappings live in guest memory", c.MmapLimitMiB, mem)
	}
	if c.OutputLimitKiB < 0 {
		return fmt.Errorf("field output_limit_kib: %d is negative", c.OutputLimitKiB)
	}
	for _, b := range []struct {
		name string
		v    int
	}{{"net.send_buffer_kib", c.Net.SendBufferKiB}, {"net.recv_buffer_kib", c.Net.RecvBufferKiB}} {
		if b.v < 0 || b.v > 65536 {
			return fmt.Errorf("field %s: %d is out of range (1 to 65536 KiB)", b.name, b.v)
		}
	}
	if c.DiskLimitMiB < 0 || c.DiskLimitMiB > maxDiskLimitMiB {
		return fmt.Errorf("field disk_limit_mib: %d is out of range (1 to %d)", c.DiskLimitMiB, maxDiskLimitMiB)
	}
	if c.FileLimitMiB < 0 || c.FileLimitMiB > maxDiskLimitMiB {
		return fmt.Errorf("field file_limit_mib: %d is out of range (1 to %d)", c.FileLimitMiB, maxDiskLimitMiB)
	}
	if u := f.TearUnit; u < 0 || u > maxTearUnit || u&(u-1) != 0 {
		return fmt.Errorf("field faults.tear_unit: %d is not a power of two from 1 to %d bytes", u, maxTearUnit)
	}
	if c.Linearizability != nil {
		switch c.Linearizability.Model {
		case "register", "kv":
		default:
			return fmt.Errorf("field linearizability.model: %q is not a model (want \"register\" or \"kv\")", c.Linearizability.Model)
		}
		if c.Linearizability.Steps < 0 || c.Linearizability.Timeout < 0 {
			return errors.New("field linearizability.steps and timeout must not be negative")
		}
	}
	if err := c.Liveness.validate(c.Horizon); err != nil {
		return err
	}
	for i, m := range c.Mutate {
		if !knownMutation(m) {
			return fmt.Errorf("field mutate[%d]: %q is not a mutation operator (want one of %s)", i, m, strings.Join(mutationNames(), ", "))
		}
	}
	if c.Coverage != nil {
		for i, n := range c.Nodes {
			if n.Upgrade != nil {
				return fmt.Errorf("field nodes[%d].upgrade: coverage of a node that changes builds is not supported (drop \"coverage\" or \"upgrade\")", i)
			}
		}
		return c.Coverage.validate()
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.Horizon == 0 {
		c.Horizon = Duration(60 * time.Second)
	}
	if c.Watchdog == 0 {
		c.Watchdog = Duration(60 * time.Second)
	}
	if c.MemoryLimitMiB == 0 {
		c.MemoryLimitMiB = 512
	}
	if c.MmapLimitMiB == 0 {
		c.MmapLimitMiB = c.MemoryLimitMiB / 2
	}
	if c.OutputLimitKiB == 0 {
		c.OutputLimitKiB = 1024
	}
	if c.Net.SendBufferKiB == 0 {
		c.Net.SendBufferKiB = 256
	}
	if c.Net.RecvBufferKiB == 0 {
		c.Net.RecvBufferKiB = 256
	}
	if c.DiskLimitMiB == 0 {
		c.DiskLimitMiB = 256
	}
	if c.FileLimitMiB == 0 {
		c.FileLimitMiB = 1024
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.failStop() {
			if n.MaxRestarts == 0 {
				n.MaxRestarts = defaultMaxRestarts
			}
			if n.RestartWindow == 0 {
				n.RestartWindow = defaultRestartWindow
			}
		}
	}
	f := &c.Faults
	if f.TearUnit == 0 {
		f.TearUnit = defaultTearUnit
	}
	if f.CrashMidOp == nil {
		f.CrashMidOp = &DiskFault{P: 0.5}
	}
	if f.CrashPlacement == "" {
		f.CrashPlacement = PlacementSpread
	}
	if f.RestartDelay == 0 {
		f.RestartDelay = Duration(250 * time.Millisecond)
	}
	if f.PartitionDuration == 0 {
		f.PartitionDuration = Duration(time.Second)
	}
	if f.Latency == 0 {
		f.Latency = Duration(time.Millisecond)
	}
	if f.Jitter == 0 {
		f.Jitter = Duration(time.Millisecond)
	}
	if f.PauseDuration == 0 {
		f.PauseDuration = Duration(500 * time.Millisecond)
	}
	if f.ClockJump == 0 {
		f.ClockJump = Duration(5 * time.Second)
	}
	if f.LatencySpike == 0 {
		f.LatencySpike = Duration(100 * time.Millisecond)
	}
	if f.StartAfter == 0 {
		f.StartAfter = Duration(50 * time.Millisecond)
	}
	if f.MaxFaults == nil {
		m := defaultMaxFaults
		f.MaxFaults = &m
	}
	if c.Linearizability != nil && c.Linearizability.Timeout == 0 {
		c.Linearizability.Timeout = Duration(60 * time.Second)
	}
	if c.Linearizability != nil && c.Linearizability.Steps == 0 {
		c.Linearizability.Steps = 10_000_000
	}
}

// AllNodes returns the nodes followed by the workload.
func (c *Config) AllNodes() []NodeConfig {
	return append(append([]NodeConfig(nil), c.Nodes...), c.Workload)
}

// unknownField walks decoded JSON against the type it was decoded into and returns the
// path of the first field the type does not have ("nodes[0].argz"), or "".
func unknownField(v any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return ""
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			ft, ok := jsonField(t, k)
			p := k
			if path != "" {
				p = path + "." + k
			}
			if !ok {
				return p
			}
			if q := unknownField(x[k], ft, p); q != "" {
				return q
			}
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return ""
		}
		for i, e := range x {
			if q := unknownField(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); q != "" {
				return q
			}
		}
	}
	return ""
}

// typeErrorField is the path, dotted as encoding/json names a field in an
// UnmarshalTypeError (no slice indexes: "nodes.interleave"), of the first value in v
// that is decoded into type bad and does not decode; "" if none.
func typeErrorField(v any, t reflect.Type, bad reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == bad {
		raw, err := json.Marshal(v)
		if err == nil && json.Unmarshal(raw, reflect.New(bad).Interface()) != nil {
			return path
		}
		return ""
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return ""
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			ft, ok := jsonField(t, k)
			if !ok {
				continue
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			if q := typeErrorField(x[k], ft, bad, p); q != "" {
				return q
			}
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return ""
		}
		for _, e := range x {
			if q := typeErrorField(e, t.Elem(), bad, path); q != "" {
				return q
			}
		}
	}
	return ""
}

// jsonField finds the struct field that JSON key k decodes into (as encoding/json
// does: by tag, else by name, case-insensitively).
func jsonField(t reflect.Type, k string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, k) {
			return f.Type, true
		}
	}
	return nil, false
}
