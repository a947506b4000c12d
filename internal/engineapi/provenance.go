package engineapi

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// Differences lists how q (what runs now) differs from p (what was recorded), one
// phrase each, sorted; nil when they match. The config path is not compared.
func Differences(p, q *engine.Provenance) []string {
	if p == nil || q == nil {
		return nil
	}
	var out []string
	if p.Seedfall != q.Seedfall {
		out = append(out, fmt.Sprintf("seedfall %s, now %s", p.Seedfall, q.Seedfall))
	}
	if p.Go != q.Go {
		out = append(out, fmt.Sprintf("Go %s, now %s", p.Go, q.Go))
	}
	var nodes []string
	for n := range p.Wasm {
		nodes = append(nodes, n)
	}
	for n := range q.Wasm {
		if _, ok := p.Wasm[n]; !ok {
			nodes = append(nodes, n)
		}
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		a, b := p.Wasm[n], q.Wasm[n]
		switch {
		case a == "":
			out = append(out, fmt.Sprintf("node %s is new", n))
		case b == "":
			out = append(out, fmt.Sprintf("node %s is gone", n))
		case a != b:
			out = append(out, fmt.Sprintf("node %s's wasm %s, now %s (its code or dependencies changed)", n, a, b))
		}
	}
	return out
}

// PlanWarnings are the warnings a command prints before it replays plan file name,
// recorded with build p, on build q; nil when they match. A different Go release comes
// first and on its own line: the guests' runtime is another one (its scheduler, its
// allocator, the order its goroutines run in), so a run is deterministic per toolchain
// and a plan's trace may differ under another.
func PlanWarnings(name string, p, q *engine.Provenance) []string {
	diff := Differences(p, q)
	if len(diff) == 0 {
		return nil
	}
	var out []string
	if p.Go != q.Go {
		out = append(out, fmt.Sprintf("warning: %s was recorded with %s, replaying with %s: the guest's runtime differs, the trace may too", name, p.Go, q.Go))
		rest := diff[:0:0]
		for _, d := range diff {
			if d != fmt.Sprintf("Go %s, now %s", p.Go, q.Go) {
				rest = append(rest, d)
			}
		}
		diff = rest
	}
	if len(diff) > 0 {
		out = append(out, fmt.Sprintf("warning: %s was saved from another build (%s): the replay may not reproduce it", name, strings.Join(diff, "; ")))
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
