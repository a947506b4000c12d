package engine

import (
	"reflect"
	"strings"
	"testing"
)

// TestSwarmKnobsCoverRates: every rate (_per_sec) and disk-fault probability of the
// faults section is some kind's knob, so a kind added with its knob but without naming
// it in the table is caught; crash_mid_op, the share of crashes during a disk op, is the
// one that shapes a kind rather than turning one on.
func TestSwarmKnobsCoverRates(t *testing.T) {
	named := map[string]bool{}
	for _, k := range swarmKnobs() {
		if named[k.name] {
			t.Fatalf("knob %s is named by two kinds", k.name)
		}
		named[k.name] = true
	}
	ft := reflect.TypeFor[FaultConfig]()
	for i := 0; i < ft.NumField(); i++ {
		f := ft.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		rate := strings.HasSuffix(name, "_per_sec")
		prob := f.Type == reflect.TypeFor[DiskFault]() || f.Type == reflect.TypeFor[*DiskFault]()
		if (rate || prob) && name != "crash_mid_op" && !named[name] {
			t.Errorf("faults.%s is a rate or probability, but no kind of the table names it as its knob (kindSpec.knob): swarm would leave it alone", name)
		}
	}
	if !named["clock_skew_ppm"] || !named["fsync_eio"] || !named["crash_per_sec"] {
		t.Fatalf("knobs %v", swarmKnobNames())
	}
}

// TestSwarmApply: a draw sets each kind of knob (rate, integer, disk-fault probability)
// in a copy of the config, keeps a disk fault's aim, and leaves the config as it was.
func TestSwarmApply(t *testing.T) {
	cfg := &Config{Faults: FaultConfig{CrashPerSec: 1, ClockSkewPPM: 100, PausePerSec: 2,
		FsyncEIO: DiskFault{P: 0.1, Paths: []string{"/wal/*"}}, CrashMidOp: &DiskFault{P: 0.5}}}
	d := SwarmDraw{"crash_per_sec": 0.25, "clock_skew_ppm": 7, "fsync_eio": 0.05}
	c := d.apply(cfg)
	if c.Faults.CrashPerSec != 0.25 || c.Faults.ClockSkewPPM != 7 || c.Faults.FsyncEIO.P != 0.05 || c.Faults.PausePerSec != 2 {
		t.Fatalf("applied: %+v", c.Faults)
	}
	if !reflect.DeepEqual(c.Faults.FsyncEIO.Paths, []string{"/wal/*"}) {
		t.Fatalf("the aim of fsync_eio was lost: %+v", c.Faults.FsyncEIO)
	}
	if cfg.Faults.CrashPerSec != 1 || cfg.Faults.ClockSkewPPM != 100 || cfg.Faults.FsyncEIO.P != 0.1 || c.Faults.CrashMidOp == cfg.Faults.CrashMidOp {
		t.Fatalf("the config changed: %+v", cfg.Faults)
	}
	if got, want := d.String(), "crash 0.25/s, clock_skew 7ppm, fsync_eio 0.05"; got != want {
		t.Fatalf("String: %q, want %q", got, want)
	}
	if got := (SwarmDraw{"crash_per_sec": 0, "pause_per_sec": 1.5}).String(); got != "crash off, pause 1.5/s" {
		t.Fatalf("String: %q", got)
	}
	// Integer knobs draw whole values of at least 1.
	for seed := uint64(1); seed <= 50; seed++ {
		if v := drawSwarm(cfg, seed)["clock_skew_ppm"]; v != float64(int64(v)) || (v != 0 && v < 1) {
			t.Fatalf("seed %d: clock_skew_ppm %v", seed, v)
		}
	}
	for _, bad := range []SwarmDraw{{"crash_per_sex": 1}, {"crash_per_sec": -1}} {
		if err := bad.validate(); err == nil {
			t.Fatalf("%v: no error", bad)
		}
	}
}
