package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPruneCache: prune removes the least recently used files first until the cache
// fits, and removes the folders it empties; a cap above the cache's size removes nothing.
func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(rel string, size int, age int) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(-time.Duration(age) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	write("wasm/old.wasm", 1000, 30)
	write("wazero/x/old-compiled", 3000, 20)
	write("wasm/new.wasm", 1000, 1)
	write("overlay/n-1/net/x.go", 500, 2)

	if freed, n, err := PruneCache(dir, 10_000); err != nil || freed != 0 || n != 0 {
		t.Fatalf("prune under a cap above the size: freed %d in %d files, %v", freed, n, err)
	}
	freed, n, err := PruneCache(dir, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if freed != 4000 || n != 2 {
		t.Errorf("freed %d bytes in %d files, want 4000 in 2 (the two least recently used)", freed, n)
	}
	for rel, want := range map[string]bool{"wasm/old.wasm": false, "wazero/x/old-compiled": false, "wazero": false, "wasm/new.wasm": true, "overlay/n-1/net/x.go": true} {
		_, err := os.Stat(filepath.Join(dir, rel))
		if (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", rel, err == nil, want)
		}
	}
	if _, n, err := PruneCache(dir, 0); err != nil || n != 2 {
		t.Fatalf("prune to 0 removed %d files, %v", n, err)
	}
	if files, _ := CacheFiles(dir); len(files) != 0 {
		t.Errorf("after prune to 0: %v", files)
	}
	if _, _, err := PruneCache(filepath.Join(dir, "missing"), 0); err != nil {
		t.Errorf("prune of a missing cache: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false}, {"1048576", 1 << 20, false}, {"500MB", 500e6, false}, {"2GiB", 2 << 30, false},
		{"1.5G", 3 << 29, false}, {"10kb", 10e3, false}, {"-1", 0, true}, {"lots", 0, true}, {"", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
