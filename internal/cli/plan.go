package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/seedfall/seedfall/engine"
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
	return &p, nil
}

// SavePlan writes a fault plan file that replays with LoadPlan (`seedfall replay -faults`).
func SavePlan(path string, p *engine.FaultPlan) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
