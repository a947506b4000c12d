package buntdb_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// These tests build the seedfall CLI from this repository into a temporary
// directory and run small sweeps of this example's configs. Each one takes seconds
// to a minute; -short skips the passing sweeps.

var (
	buildOnce sync.Once
	sfPath    string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// seedfall returns the path of a freshly built seedfall binary.
func seedfall(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "seedfall-bin-")
		if buildErr != nil {
			return
		}
		sfPath = filepath.Join(buildDir, "seedfall")
		cmd := exec.Command("go", "build", "-o", sfPath, "./cmd/seedfall")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New("build seedfall: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return sfPath
}

// sf runs seedfall with args in this directory and returns its exit code and output.
func sf(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(seedfall(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("seedfall %s: %v\n%s", strings.Join(args, " "), err, out.String())
	return 0, ""
}

// wantFail asserts that seedfall exited 1 and printed every one of want.
func wantFail(t *testing.T, code int, out string, want ...string) {
	t.Helper()
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (a failure found):\n%s", code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

func wantPass(t *testing.T, code int, out string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit code %d, want 0 (all seeds pass):\n%s", code, out)
	}
}

// SyncPolicy Always with auto-shrink: Shrink renames an unsynced file over the
// database, and a crash after it loses acknowledged writes.
func TestShrinkLosesWrites(t *testing.T) {
	code, out := sf(t, "run", "-c", "seedfall.shrink.json", "-seeds", "1-1")
	wantFail(t, code, out, "FAIL seed 1 ", "acknowledged write lost: k0=v288")
}

// The hand-shrunk schedule of seed 1: one idle crash right after a shrink.
func TestShrinkOneFault(t *testing.T) {
	code, out := sf(t, "replay", "-q", "-c", "seedfall.shrink.json", "-seed", "1", "-faults", "plans/seed1.shrunk.json")
	wantFail(t, code, out, "acknowledged write lost: k0=v288, server now answers \"NONE\"", "faults before the failure (1):")
	// The same schedule against the patched library passes.
	code, out = sf(t, "replay", "-q", "-c", "seedfall.shrink.patched.json", "-seed", "1", "-faults", "plans/seed1.shrunk.json")
	wantPass(t, code, out)
}

// Negative control: SyncPolicy Never acknowledges before fsync.
func TestNegativeControlNever(t *testing.T) {
	code, out := sf(t, "run", "-c", "seedfall.nosync.json", "-seeds", "1-3")
	wantFail(t, code, out, "acknowledged write lost: ")
}

// No false alarms: auto-shrink disabled, and the patched shrink (f.Sync before the
// rename, directory fsync after it), also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep; skipped with -short")
	}
	for _, c := range []string{"seedfall.noshrink.json", "seedfall.shrink.patched.json", "seedfall.shrink.strict.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-10")
		wantPass(t, code, out)
	}
}
