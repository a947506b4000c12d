package engineapi

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/engine"
)

// PlanWarnings are the warnings a command prints before it replays plan file name,
// recorded with build p, on build q; nil when the replay runs as the recording did. They
// key on what decides a run (engine.Behaviour): another Go release comes first and on
// its own line (the guests' runtime is another one: its scheduler, its allocator, the
// order its goroutines run in, so a run is deterministic per toolchain), then another
// engine Behaviour. Another seedfall binary of the same Behaviour, or another wasm hash
// of a node (it changes with the checkout's path), does not warn.
func PlanWarnings(name string, p, q *engine.Provenance) []string {
	if p == nil || q == nil {
		return nil
	}
	var out []string
	if p.Go != q.Go {
		out = append(out, fmt.Sprintf("warning: %s was recorded with %s, replaying with %s: the guest's runtime differs, the trace may too", name, p.Go, q.Go))
	}
	if a, b := engine.BehaviourOf(p), engine.BehaviourOf(q); a != b {
		out = append(out, fmt.Sprintf("warning: %s was saved by seedfall %s (engine behaviour %d), replaying with %s (behaviour %d): the engine runs plans otherwise now, so the replay may not reproduce it (save it again)", name, p.Seedfall, a, q.Seedfall, b))
	}
	return out
}

// ForPlan is provenance p for a plan file saved at plan: a copy whose Config is relative to the
// plan's folder (slash-separated), so that the plan still names its config from another
// checkout or machine. Config as given is relative to the working directory, or
// absolute; it stays as it is when no relative path exists (another volume).
func ForPlan(p *engine.Provenance, plan string) *engine.Provenance {
	if p == nil {
		return nil
	}
	q := *p
	q.WorkDir = ""
	if q.Config == "" {
		return &q
	}
	cfg := q.Config
	if p.WorkDir != "" && !filepath.IsAbs(cfg) {
		cfg = filepath.Join(p.WorkDir, filepath.FromSlash(cfg))
	}
	absCfg, err1 := filepath.Abs(cfg)
	absPlan, err2 := filepath.Abs(plan)
	if err1 != nil || err2 != nil {
		return &q
	}
	if rel, err := filepath.Rel(filepath.Dir(absPlan), absCfg); err == nil {
		q.Config = filepath.ToSlash(rel)
	}
	return &q
}

// ConfigFrom is p's config as a path that works from the directory cwd: Config itself
// when it is absolute or no WorkDir was recorded, else WorkDir/Config relative to cwd
// when that file exists here, else Config as recorded.
func ConfigFrom(p *engine.Provenance, cwd string) string {
	if p == nil {
		return ""
	}
	if p.Config == "" || filepath.IsAbs(p.Config) || p.WorkDir == "" {
		return p.Config
	}
	abs := filepath.Join(p.WorkDir, filepath.FromSlash(p.Config))
	if _, err := os.Stat(abs); err != nil {
		return p.Config
	}
	if rel, err := filepath.Rel(cwd, abs); err == nil {
		return rel
	}
	return abs
}
