package engine

import (
	"slices"
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

func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"1-1000", "7", "1-5,9,20-22", "9-1", "1-10000000000", "0-18446744073709551615", "5,,6", " 3 - 4 ", "18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		seeds, err := ParseSeeds(spec)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "seeds: ") {
				t.Fatalf("error %q does not name the seeds", err)
			}
			return
		}
		if len(seeds) == 0 || len(seeds) > 10_000_000 {
			t.Fatalf("%d seeds", len(seeds))
		}
		if !slices.IsSorted(seeds) || len(slices.Compact(slices.Clone(seeds))) != len(seeds) {
			t.Fatalf("seeds not ascending and unique: %v", seeds[:min(len(seeds), 20)])
		}
		again, err := ParseSeeds(FormatSeedSpec(seeds))
		if err != nil || !slices.Equal(again, seeds) {
			t.Fatalf("FormatSeedSpec does not round-trip: %v", err)
		}
	})
}

func FuzzPatch(f *testing.F) {
	f.Add([]byte("--- a/x/y.go\n+++ b/x/y.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), []byte("a\nb\nc\n"))
	f.Add([]byte("+++ b/x/y.go\n@@ -0,0 +1 @@\n+new\n"), []byte(""))
	f.Add([]byte("@@ -1 +1 @@\n-a\n+b\n"), []byte("a\n"))
	f.Add([]byte("+++ b/x/y.go\n@@ -5,2 +5,2 @@\n-q\n+r\n"), []byte("a\nb\n"))
	f.Add([]byte("+++ b/x/y.go\n@@ x y @@\n"), []byte("a\n"))
	f.Fuzz(func(t *testing.T, diff, src []byte) {
		if len(src) > 1<<16 || len(diff) > 1<<16 {
			return
		}
		files, err := parseUnifiedDiff(diff)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		for _, fl := range files {
			out, err := applyHunks(src, fl.hunks)
			if err == nil && len(fl.hunks) == 0 && string(out) != string(src) {
				t.Fatalf("no hunks changed the file")
			}
		}
	})
}
