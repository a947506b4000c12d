package exampletest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Cell is one cell of the corruption table in docs/findings.md: the config that
// turns one device fault on (seedfall.<kind>.json), the seeds its check sweeps, and the
// verdict a seed on which the fault struck must show.
type Cell struct {
	Config string // the fault's config, e.g. "seedfall.corrupt.json"
	Kind   string // the fault kind, e.g. "corrupt"
	Seeds  string // e.g. "1-4": small, the check runs them all
	// Want is a substring of the failure's reason on some seed where the fault struck;
	// empty means the cell is one where the system coped: every seed passes, and the
	// fault struck on at least one.
	Want string
}

// CheckTable checks the example's cells of the corruption table. The first cell is
// the representative one and always runs; the others run when SEEDFALL_CORRUPTION is
// set (the sweeps the README quotes are larger). A failing cell's seed is then
// replayed under the same config with the fault's knob removed, which must pass: the
// negative control that puts the verdict on the fault (device faults have no generator,
// so the rest of the plan is the same).
func CheckTable(t *testing.T, cells []Cell) {
	for i, c := range cells {
		t.Run(c.Kind, func(t *testing.T) {
			if i > 0 && os.Getenv("SEEDFALL_CORRUPTION") == "" {
				t.Skip("set SEEDFALL_CORRUPTION=1 to check every cell")
			}
			seed := checkCell(t, c)
			if c.Want == "" {
				return
			}
			control := withoutKnob(t, c)
			code, out := Run(t, "replay", "-q", "-c", control, "-seed", fmt.Sprint(seed))
			if code != 0 {
				t.Fatalf("negative control: seed %d of %s without %s fails too:\n%s", seed, c.Config, c.Kind, out)
			}
		})
	}
}

type cellResult struct {
	Seed    uint64 `json:"seed"`
	Verdict string `json:"verdict"`
	Failure *struct {
		Reason string `json:"reason"`
	} `json:"failure"`
	Faults []struct {
		Kind string `json:"kind"`
	} `json:"faults"`
}

// checkCell sweeps c's seeds and returns a seed that shows its verdict.
func checkCell(t *testing.T, c Cell) uint64 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.jsonl")
	_, text := Run(t, "run", "-q", "-workers", "1", "-c", c.Config, "-seeds", c.Seeds, "-out", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("run -c %s: no results: %v\n%s", c.Config, err, text)
	}
	defer f.Close()
	var struck []uint64
	var show uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r cellResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		hit := false
		for _, x := range r.Faults {
			hit = hit || x.Kind == c.Kind
		}
		if !hit {
			continue
		}
		struck = append(struck, r.Seed)
		switch {
		case c.Want == "" && r.Verdict != "pass":
			reason := ""
			if r.Failure != nil {
				reason = r.Failure.Reason
			}
			t.Fatalf("%s seed %d: %s (%s), want a pass where %s struck", c.Config, r.Seed, r.Verdict, reason, c.Kind)
		case c.Want == "" && show == 0:
			show = r.Seed
		case c.Want != "" && show == 0 && r.Failure != nil && strings.Contains(r.Failure.Reason, c.Want):
			show = r.Seed
		}
	}
	if len(struck) == 0 {
		t.Fatalf("%s seeds %s: %s never struck (the cell is \"not reached\")\n%s", c.Config, c.Seeds, c.Kind, text)
	}
	if show == 0 {
		t.Fatalf("%s seeds %s: %s struck on seeds %v, none failed with %q\n%s", c.Config, c.Seeds, c.Kind, struck, c.Want, text)
	}
	t.Logf("%s: %s struck on seeds %v; seed %d shows the verdict", c.Config, c.Kind, struck, show)
	return show
}

// withoutKnob writes c.Config without its c.Kind knob beside it (the packages it names
// are relative to its directory) and returns its name; the test removes it.
func withoutKnob(t *testing.T, c Cell) string {
	t.Helper()
	b, err := os.ReadFile(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", c.Config, err)
	}
	faults, ok := cfg["faults"].(map[string]any)
	if !ok || faults[c.Kind] == nil {
		t.Fatalf("%s: no faults.%s knob", c.Config, c.Kind)
	}
	delete(faults, c.Kind)
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(filepath.Dir(c.Config), ".control."+c.Kind+".json")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(name) })
	return name
}
