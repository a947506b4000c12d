package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/internal/cli"
)

// TestVersionCommand: `seedfall version` prints what plans record, never a bare
// "devel" (a test binary has no VCS stamp, so it is told apart by its hash).
func TestVersionCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "version")
	if code != exitPass || !regexp.MustCompile(`^seedfall \S+ \(built with go`).MatchString(stdout) {
		t.Fatalf("version: exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.HasPrefix(stdout, "seedfall devel ") {
		t.Errorf("version is a bare devel: %s", stdout)
	}
	// And which Go builds the nodes here: the one the go command picks (GOTOOLCHAIN).
	if want := "nodes here are built with " + runtime.Version() + " (go env GOVERSION)\n"; !strings.Contains(stdout, want) {
		t.Errorf("version lacks %q:\n%s", want, stdout)
	}
}

// TestCacheCommand: `seedfall cache` reports the cache's size and `cache prune`
// evicts down to -max-size, least recently used first.
func TestCacheCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SEEDFALL_CACHE", dir)
	os.MkdirAll(filepath.Join(dir, "wasm"), 0o755)
	os.WriteFile(filepath.Join(dir, "wasm", "a.wasm"), make([]byte, 3000), 0o644)
	code, stdout, _ := runCLI(t, "cache")
	if code != exitPass || !strings.Contains(stdout, "3 kB in 1 files") || !strings.Contains(stdout, "wasm") {
		t.Fatalf("cache: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := runCLI(t, "cache", "prune", "-max-size", "big"); code != exitUsage || !strings.Contains(stderr, "-max-size") {
		t.Errorf("prune -max-size big: exit %d, %s", code, stderr)
	}
	if code, stdout, _ := runCLI(t, "cache", "prune", "-max-size", "10kB"); code != exitPass || !strings.Contains(stdout, "removed 0 files") {
		t.Errorf("prune under the cap: exit %d, %s", code, stdout)
	}
	code, stdout, _ = runCLI(t, "cache", "prune")
	if code != exitPass || !strings.Contains(stdout, "removed 1 files (3 kB)") {
		t.Errorf("prune: exit %d, %s", code, stdout)
	}
	if files, _ := cli.CacheFiles(dir); len(files) != 0 {
		t.Errorf("left %v", files)
	}
}

// TestReadmeShrinkExampleKeepsCheckoutClean: the README's shrink example saves its plan
// under the default name, which is not a committed file and which git ignores, so
// running it leaves the checkout clean; the command table lists -o.
func TestReadmeShrinkExampleKeepsCheckoutClean(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	m := regexp.MustCompile(`\$ seedfall shrink -c (\S+) -seed (\d+)\n(?s:.*?)minimal plan saved to (\S+);`).FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no shrink example that says where it saved the plan")
	}
	var seed uint64
	for _, c := range m[2] {
		seed = seed*10 + uint64(c-'0')
	}
	if want := filepath.ToSlash(cli.DefaultPlanPath(m[1], seed)); m[3] != want {
		t.Errorf("the README says shrink saved %s; it saves %s", m[3], want)
	}
	if _, err := os.Stat(filepath.Join(root, m[3])); err == nil {
		if out, _ := exec.Command("git", "-C", root, "ls-files", "--error-unmatch", m[3]).CombinedOutput(); !strings.Contains(string(out), "did not match") {
			t.Errorf("%s is committed: the README's shrink example rewrites it", m[3])
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
			if err := exec.Command("git", "-C", root, "check-ignore", "-q", m[3]).Run(); err != nil {
				t.Errorf("git does not ignore %s: the README's shrink example leaves an untracked file", m[3])
			}
		}
	}
	if !regexp.MustCompile("`seedfall shrink [^`]*\\[-o plan\\.json\\]").MatchString(readme) {
		t.Error("the README's command table does not list shrink's -o")
	}
}
