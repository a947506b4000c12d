package exampletest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CorruptionCell checks one cell of the corruption table (docs/findings.md, "Corruption
// table (CORDS-style)"): seed of cfg, whose only disk fault is kind, fails with every one
// of want in its trace, and the trace shows the fault striking. The negative control
// replays the same seed's applied faults without those of kind (the crashes and
// restarts stay): it must pass, so the failure is the fault's doing.
func CorruptionCell(t *testing.T, cfg string, seed uint64, kind string, want ...string) {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "plan.json")
	code, out := Run(t, "replay", "-c", cfg, "-seed", fmt.Sprint(seed), "-save", plan)
	WantFail(t, code, out, append([]string{fmt.Sprintf("fault %s ", kind)}, want...)...)

	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("%s: %v", plan, err)
	}
	faults, _ := p["faults"].([]any)
	var kept []any
	dropped := 0
	for _, f := range faults {
		if m, ok := f.(map[string]any); ok && m["kind"] == kind {
			dropped++
			continue
		}
		kept = append(kept, f)
	}
	if dropped == 0 {
		t.Fatalf("the saved plan of seed %d has no %s fault:\n%s", seed, kind, data)
	}
	p["faults"] = kept
	data, err = json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = Run(t, "replay", "-q", "-c", cfg, "-seed", fmt.Sprint(seed), "-faults", plan)
	if code != 0 {
		t.Fatalf("negative control: seed %d without its %d %s faults (%d others kept) exit code %d, want 0:\n%s",
			seed, dropped, kind, len(kept), code, lastLines(out, 40))
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
