package simtest

import (
	"encoding/json"
	"time"
)

// Faults says how hostile the simulated world is: the fields, JSON names and meaning of
// a config's "faults" (engine.FaultConfig, docs/faults.md), with durations as
// time.Duration. The zero value injects nothing. TestFaultsMirrorConfig keeps the two
// in step.
type Faults struct {
	CrashPerSec        float64       `json:"crash_per_sec,omitempty"`
	CrashMidOp         *DiskFault    `json:"crash_mid_op,omitempty"`
	CrashPlacement     string        `json:"crash_placement,omitempty"`
	KillPerSec         float64       `json:"kill_per_sec,omitempty"`
	RestartDelay       time.Duration `json:"restart_delay,omitempty"`
	TornWrites         bool          `json:"torn_writes,omitempty"`
	TearUnit           int           `json:"tear_unit,omitempty"`
	FsyncEIO           DiskFault     `json:"fsync_eio,omitzero"`
	ReadEIO            DiskFault     `json:"read_eio,omitzero"`
	Corrupt            DiskFault     `json:"corrupt,omitzero"`
	CorruptRead        DiskFault     `json:"corrupt_read,omitzero"`
	MisdirectedWrite   DiskFault     `json:"misdirected_write,omitzero"`
	LostWrite          DiskFault     `json:"lost_write,omitzero"`
	WriteEIO           DiskFault     `json:"write_eio,omitzero"`
	SlowIO             DiskFault     `json:"slow_io,omitzero"`
	SlowIOLatency      time.Duration `json:"slow_io_latency,omitempty"`
	PartitionPerSec    float64       `json:"partition_per_sec,omitempty"`
	PartitionDuration  time.Duration `json:"partition_duration,omitempty"`
	OneWayShare        float64       `json:"one_way_share,omitempty"`
	SplitPerSec        float64       `json:"split_per_sec,omitempty"`
	Latency            time.Duration `json:"latency,omitempty"`
	Jitter             time.Duration `json:"jitter,omitempty"`
	LatencySpikePerSec float64       `json:"latency_spike_per_sec,omitempty"`
	LatencySpike       time.Duration `json:"latency_spike,omitempty"`
	ResetPerSec        float64       `json:"reset_per_sec,omitempty"`
	PausePerSec        float64       `json:"pause_per_sec,omitempty"`
	PauseDuration      time.Duration `json:"pause_duration,omitempty"`
	ClockJumpPerSec    float64       `json:"clock_jump_per_sec,omitempty"`
	ClockJump          time.Duration `json:"clock_jump,omitempty"`
	ClockSkewPPM       int64         `json:"clock_skew_ppm,omitempty"`
	StartOn            string        `json:"start_on,omitempty"`
	StartAfter         time.Duration `json:"start_after,omitempty"`
	Swarm              bool          `json:"swarm,omitempty"`
	MaxFaults          *int          `json:"max_faults,omitempty"`
}

// DiskFault is a probability, optionally aimed at some paths (globs) and op kinds: the
// config's object form {"p": 0.05, "paths": [...], "ops": [...]}.
type DiskFault struct {
	P     float64  `json:"p"`
	Paths []string `json:"paths,omitempty"`
	Ops   []string `json:"ops,omitempty"`
}

func (f Faults) apply(d *decl) {
	data, err := json.Marshal(f)
	if err != nil {
		d.errorf("faults: %v", err)
		return
	}
	if d.faults != nil {
		d.errorf("simtest.Faults given twice")
	}
	d.faults = data
}
