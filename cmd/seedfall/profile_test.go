package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayProfile: replay -profile writes a profile go tool pprof reads, and prints
// the same trace as a replay without it.
func TestReplayProfile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.pb.gz")
	code1, out1, _ := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "3", "-profile", path)
	code2, out2, _ := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "3")
	if code1 != code2 || out1 != out2 {
		t.Fatalf("replay with -profile (exit %d) and without (exit %d) differ:\n%s\n----\n%s", code1, code2, out1, out2)
	}
	top, err := exec.Command("go", "tool", "pprof", "-top", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top %s: %v\n%s", path, err, top)
	}
	for _, want := range []string{"[node] server", "[node] client", "[host] fd_write"} {
		if !strings.Contains(string(top), want) {
			t.Errorf("pprof -top lacks %q:\n%s", want, top)
		}
	}

	code, _, stderr := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "3", "-q", "-profile", filepath.Join(t.TempDir(), "no", "such", "dir", "p.pb.gz"))
	if code != exitUsage || !strings.Contains(stderr, "-profile") || !strings.Contains(stderr, "p.pb.gz") {
		t.Errorf("unwritable -profile: exit %d, stderr %q", code, stderr)
	}
}
