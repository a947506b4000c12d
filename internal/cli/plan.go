package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// LoadPlan reads a fault plan file and validates its faults.
func LoadPlan(path string) (*engine.FaultPlan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read fault plan: %w", err)
	}
	return ParsePlan(path, data)
}

// ParsePlan decodes and validates a fault plan; errors start with name and name the
// field ("plan.json: faults[2]: …").
func ParsePlan(name string, data []byte) (*engine.FaultPlan, error) {
	var p engine.FaultPlan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: invalid fault plan: %w", name, err)
	}
	for i, f := range p.Faults {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("%s: faults[%d]: %w", name, i, err)
		}
	}
	if err := engineapi.ValidateSwarm(p.Swarm); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &p, nil
}

// SavePlan writes a fault plan file that replays with LoadPlan (`seedfall replay -faults`).
// The config its provenance names is recorded relative to the plan's folder, so the plan
// still finds it from another checkout or machine.
func SavePlan(path string, p *engine.FaultPlan) error {
	if p.Provenance != nil {
		q := *p
		q.Provenance = engineapi.ForPlan(p.Provenance, path)
		p = &q
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// DefaultPlanPath is where shrink saves the minimal plan of seed when no -o is given:
// next to the config, named by the config and the seed (seedfall.json, seed 2:
// seedfall.seed-2.faults.json), so that the configs of one folder never share a file.
//
// A simulation test's plan goes into its package directory, named by the test
// (TestX.seed-2.faults.json).
func DefaultPlanPath(config string, seed uint64) string {
	if ref, ok := TestOf(config); ok {
		return filepath.Join(ref.Dir, fmt.Sprintf("%s.seed-%d.faults.json", ref.Name, seed))
	}
	stem := strings.TrimSuffix(filepath.Base(config), filepath.Ext(config))
	return filepath.Join(filepath.Dir(config), fmt.Sprintf("%s.seed-%d.faults.json", stem, seed))
}

// FreePlanPath is DefaultPlanPath, or, when that file exists, the first of
// NAME.seed-N.2.faults.json, NAME.seed-N.3.faults.json, … that does not: for callers
// that promise never to overwrite a file (the MCP server's shrink).
func FreePlanPath(config string, seed uint64) string {
	p := DefaultPlanPath(config, seed)
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p
		}
		p = strings.TrimSuffix(DefaultPlanPath(config, seed), ".faults.json") + fmt.Sprintf(".%d.faults.json", i)
	}
}
