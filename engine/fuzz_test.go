package engine

import (
	"strings"
	"testing"
)

// Fuzz targets for the parsers of user input. Run one with
//
//	go test ./engine -run '^$' -fuzz FuzzParseConfig -fuzztime 1m
//
// A crasher lands in testdata/fuzz/<target>/ and stays there as a regression case that
// every `go test` runs.

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"workload": {"pkg": "./client"}}`,
		`{"nodes": [{"name": "server", "pkg": "./server", "args": ["-x"], "env": {"A": "1"}}], "workload": {"name": "client", "pkg": "./client"}, "faults": {"crash_per_sec": 0.5, "torn_writes": true, "restart_delay": "250ms"}, "horizon": "60s"}`,
		`{"workload": {"pkg": "./c"}, "faults": {"restart_delay": "soon"}}`,
		`{"workload": {"pkg": "./c"}, "faults": {"max_faults": -1}}`,
		`{"workload": {"pkg": "./c"}, "linearizability": {"model": "kv", "timeout": 5}}`,
		`{"workload": {"pkg": "./c"}, "nodes": [{"name": "A", "pkg": "x"}]}`,
		`{"workload": {"pkg": "./c"}, "nodez": []}`,
		`{"workload": {"pkg": "./c"}, "horizon": "30s", "liveness": {"horizon": "count", "quiet": "10s"}}`,
		`{"workload": {"pkg": "./c"}, "liveness": {"horizon": "maybe", "quiet": "1h"}}`,
		`{"workload": {"pkg": "./c"}} {}`,
		`[`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if cfg.Workload.Pkg == "" || cfg.Horizon <= 0 || cfg.Watchdog <= 0 || cfg.MemoryLimitMiB <= 0 {
			t.Fatalf("accepted a config without its defaults: %+v", cfg)
		}
		// What validates once validates again (defaults never make a config invalid).
		if err := cfg.validate(); err != nil {
			t.Fatalf("defaults made the config invalid: %v", err)
		}
	})
}
