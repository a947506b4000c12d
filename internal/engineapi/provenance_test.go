package engineapi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestProvenanceConfigFrom: a results file records the config as given and the
// directory it was given in, so a report made from another directory names the config
// by a path that works there; plans drop that directory and record the config
// relative to themselves.
func TestProvenanceConfigFrom(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "repo", "examples", "kvlog"), 0o755)
	os.WriteFile(filepath.Join(root, "repo", "examples", "kvlog", "seedfall.json"), []byte("{}"), 0o644)
	p := &engine.Provenance{Config: "examples/kvlog/seedfall.json", WorkDir: filepath.Join(root, "repo")}
	for cwd, want := range map[string]string{
		filepath.Join(root, "repo"):        filepath.FromSlash("examples/kvlog/seedfall.json"),
		filepath.Join(root, "elsewhere"):   filepath.FromSlash("../repo/examples/kvlog/seedfall.json"),
		filepath.Join(root, "repo", "cmd"): filepath.FromSlash("../examples/kvlog/seedfall.json"),
	} {
		if got := ConfigFrom(p, cwd); got != want {
			t.Errorf("from %s: %q, want %q", cwd, got, want)
		}
	}
	gone := &engine.Provenance{Config: "examples/kvlog/seedfall.json", WorkDir: filepath.Join(root, "other-machine")}
	if got := ConfigFrom(gone, root); got != "examples/kvlog/seedfall.json" {
		t.Errorf("a config not on this machine: %q, want it as recorded", got)
	}
	plan := ForPlan(p, filepath.Join(root, "repo", "examples", "kvlog", "x.faults.json"))
	if plan.WorkDir != "" || plan.Config != "seedfall.json" {
		t.Errorf("ForPlan kept the working directory or lost the config: %+v", plan)
	}
}
