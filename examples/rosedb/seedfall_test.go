package rosedb_test

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

// rosedblabs/wal v1.3.8: Open appends after a torn chunk, so acknowledged writes made
// after the restart are unreachable on the next replay.
func TestWALLosesWrites(t *testing.T) {
	code, out := sf(t, "run", "-c", "wal.json", "-seeds", "1-1")
	wantFail(t, code, out, "FAIL seed 1 ", "acknowledged write lost: ")
}

// rosedb v2.4.0 over the same WAL refuses to open.
func TestRosedbOpenFails(t *testing.T) {
	code, out := sf(t, "run", "-c", "rosedb.json", "-seeds", "3-3")
	wantFail(t, code, out, "FAIL seed 3 ", "open rosedb: invalid crc, the data may be corrupted")
}

// Negative controls: acknowledging before fsync is caught.
func TestNegativeControls(t *testing.T) {
	for _, c := range []string{"wal.nosync.json", "rosedb.nosync.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-2")
		wantFail(t, code, out, "acknowledged write lost: ")
	}
}

// The fix (truncate to the last whole chunk on open, bounds-checked reads, fsync the
// directory when a segment is created) passes, also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep; skipped with -short")
	}
	for _, c := range []string{"wal.fixed.json", "rosedb.fixed.json", "wal.strict.json", "rosedb.strict.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-8")
		wantPass(t, code, out)
	}
}
