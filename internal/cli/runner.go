package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// NewRunner starts (on first use) `seedfall worker -runs` processes of the binary exe
// (default: this process's executable) for the sim's config and modules, to run single
// seeds with any options out of this process: replay, shrink and cause in a long-lived
// process such as the MCP server, where a guest spinning without host calls must not
// leave its instance and goroutine behind.
func NewRunner(sim *engine.Sim, workers int, exe string) (*engine.Runner, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("locate seedfall binary for workers: %w", err)
		}
	}
	cfg := sim.Config()
	args := []string{"worker", "-runs", "-c", cfg.Path, "-wasm", strings.Join(sim.WasmPaths(), ",")}
	return engine.NewRunner(cfg, engine.IsolatedOptions{
		Workers: workers,
		Command: func() *exec.Cmd {
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), "SEEDFALL_AS_CLI=1")
			return cmd
		},
	}), nil
}
