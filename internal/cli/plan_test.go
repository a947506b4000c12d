package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestDefaultPlanPath: shrink's default plan file is named by config and seed, so two
// configs of one folder never share it, and it is never the committed seed-N file.
func TestDefaultPlanPath(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		seed uint64
		want string
	}{
		{"examples/kvlog/seedfall.json", 2, "examples/kvlog/seedfall.seed-2.faults.json"},
		{"examples/kvlog/seedfall.fixed.json", 2, "examples/kvlog/seedfall.fixed.seed-2.faults.json"},
		{"tidwall.cover.json", 17, "tidwall.cover.seed-17.faults.json"},
	} {
		if got := DefaultPlanPath(tc.cfg, tc.seed); got != filepath.FromSlash(tc.want) {
			t.Errorf("DefaultPlanPath(%q, %d) = %q, want %q", tc.cfg, tc.seed, got, tc.want)
		}
	}
	if a, b := DefaultPlanPath("d/a.json", 1), DefaultPlanPath("d/b.json", 1); a == b {
		t.Errorf("two configs share the plan file %s", a)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "seedfall.json")
	if got := FreePlanPath(cfg, 3); got != DefaultPlanPath(cfg, 3) {
		t.Errorf("FreePlanPath with nothing there = %s", got)
	}
	os.WriteFile(DefaultPlanPath(cfg, 3), []byte("{}"), 0o644)
	if got, want := FreePlanPath(cfg, 3), filepath.Join(dir, "seedfall.seed-3.2.faults.json"); got != want {
		t.Errorf("FreePlanPath with the default taken = %s, want %s", got, want)
	}
}

// TestSavePlanRecordsConfigRelativeToPlan: a saved plan names its config relative to
// the plan's own folder, whatever path the command was given, and the caller's
// provenance (shared with results files) is left as it was.
func TestSavePlanRecordsConfigRelativeToPlan(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sys", "seedfall.json") // absolute, as an MCP server or a script gives it
	for _, tc := range []struct{ plan, want string }{
		{filepath.Join(dir, "sys", "p.json"), "seedfall.json"},
		{filepath.Join(dir, "sys", "plans", "p.json"), "../seedfall.json"},
		{filepath.Join(dir, "other", "p.json"), "../sys/seedfall.json"},
	} {
		os.MkdirAll(filepath.Dir(tc.plan), 0o755)
		prov := &engine.Provenance{Config: cfg, Seedfall: "v1", Go: "go1.26"}
		if err := SavePlan(tc.plan, &engine.FaultPlan{Seed: 1, Provenance: prov}); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(tc.plan)
		var got engine.FaultPlan
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if got.Provenance == nil || got.Provenance.Config != tc.want {
			t.Errorf("%s records config %+v, want %q", tc.plan, got.Provenance, tc.want)
		}
		if prov.Config != cfg {
			t.Errorf("SavePlan changed the caller's provenance to %q", prov.Config)
		}
	}
}

// TestParsePlanSwarm: a plan's swarm draw is read back as saved; an unknown knob or a
// negative value is an error naming the file and the knob.
func TestParsePlanSwarm(t *testing.T) {
	p, err := ParsePlan("p.json", []byte(`{"seed":3,"faults":[],"swarm":{"crash_per_sec":0.25,"partition_per_sec":0}}`))
	if err != nil || p.Swarm["crash_per_sec"] != 0.25 || len(p.Swarm) != 2 {
		t.Fatalf("plan %+v, err %v", p, err)
	}
	for _, tc := range []struct{ text, want string }{
		{`{"faults":[],"swarm":{"crash_per_sex":1}}`, `p.json: swarm: "crash_per_sex" is not a swarm knob`},
		{`{"faults":[],"swarm":{"crash_per_sec":-1}}`, `p.json: swarm: crash_per_sec -1: want a value of 0 (off) or more`},
	} {
		if _, err := ParsePlan("p.json", []byte(tc.text)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.text, err, tc.want)
		}
	}
}
