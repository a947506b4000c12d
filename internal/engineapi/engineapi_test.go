package engineapi_test

import (
	"context"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/enginehook"
)

// TestHooksSet: engine fills every hook with the type this package asserts, so a hook
// renamed or retyped on one side fails here rather than as a panic in a command.
func TestHooksSet(t *testing.T) {
	var _ *engine.Sim // engine's init has run: this package imports it
	for name, ok := range map[string]bool{
		"GeneratePlan":         is[func(*engine.Sim, uint64, int64) *engine.FaultPlan](enginehook.GeneratePlan),
		"RenumberFaults":       is[func([]engine.Fault) []engine.Fault](enginehook.RenumberFaults),
		"GeneratePlanSwarm":    is[func(*engine.Sim, engine.SwarmDraw, uint64, int64) *engine.FaultPlan](enginehook.GeneratePlanSwarm),
		"DrawSwarm":            is[func(*engine.Sim, uint64) engine.SwarmDraw](enginehook.DrawSwarm),
		"WasmPaths":            is[func(*engine.Sim) []string](enginehook.WasmPaths),
		"WriteCoverageProfile": is[func(string, *engine.Config) (string, error)](enginehook.WriteCoverageProfile),
		"CrashPoints":          is[func(*engine.Sim, context.Context, uint64, engineapi.CrashStatesOptions) ([]engineapi.CrashPoint, *engine.Result, error)](enginehook.CrashPoints),
		"ValidateSwarm":        is[func(engine.SwarmDraw) error](enginehook.ValidateSwarm),
		"SetUpgradeFrom":       is[func(*engine.Config, string) ([]string, error)](enginehook.SetUpgradeFrom),
		"BuildCounts":          enginehook.BuildCounts != nil,
		"MutationNames":        enginehook.MutationNames != nil,
		"CheckMutation":        enginehook.CheckMutation != nil,
	} {
		if !ok {
			t.Errorf("enginehook.%s is not set, or not of the type engineapi asserts", name)
		}
	}
	if is[func() int](enginehook.WasmPaths) {
		t.Error("negative control: a hook matched the wrong type")
	}
}

func is[T any](v any) bool { _, ok := v.(T); return ok }
