package kvlog_test

import (
	"slices"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestConfigs checks that the three configs load and run the variants they name.
func TestConfigs(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"seedfall.json", []string{"-recovery=buggy"}},
		{"seedfall.fixed.json", []string{"-recovery=fixed"}},
		{"seedfall.nosync.json", []string{"-recovery=fixed", "-ack-before-sync"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cfg, err := engine.LoadConfig(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Nodes) != 1 || cfg.Nodes[0].Name != "server" || cfg.Nodes[0].Pkg != "./server" {
				t.Errorf("nodes = %+v, want one node server from ./server", cfg.Nodes)
			} else if !slices.Equal(cfg.Nodes[0].Args, tc.args) {
				t.Errorf("server args = %q, want %q", cfg.Nodes[0].Args, tc.args)
			}
			if cfg.Workload.Name != "client" || cfg.Workload.Pkg != "./client" {
				t.Errorf("workload = %+v, want client from ./client", cfg.Workload)
			}
			f := cfg.Faults
			if f.CrashPerSec == 0 || !f.TornWrites || f.PartitionPerSec == 0 {
				t.Errorf("faults = %+v, want crashes, torn writes and partitions", f)
			}
		})
	}
}
