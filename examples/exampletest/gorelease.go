package exampletest

import (
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	goReleaseOnce sync.Once
	goRelease     string
	goReleaseErr  error
)

var seriesRE = regexp.MustCompile(`^go1\.[0-9]+`)

// GoRelease is the release series ("go1.27") of the Go toolchain that builds the nodes
// in this directory, as `go env GOVERSION` names it (GOTOOLCHAIN included). A run is
// deterministic per toolchain, and a seed or a saved plan can take another path under
// another release's runtime: tests that pin one say for which release (PerGo).
func GoRelease(t testing.TB) string {
	t.Helper()
	goReleaseOnce.Do(func() {
		var out []byte
		out, goReleaseErr = exec.Command("go", "env", "GOVERSION").Output()
		goRelease = seriesRE.FindString(strings.TrimSpace(string(out)))
	})
	if goReleaseErr != nil || goRelease == "" {
		t.Fatalf("go env GOVERSION: %q, %v", goRelease, goReleaseErr)
	}
	return goRelease
}

// PerGo is the value recorded for the Go release that builds the nodes (GoRelease).
// A release with no value fails the test with what to record: a new supported release
// needs its own seeds, found with the sweep the test names.
func PerGo[T any](t testing.TB, what string, byRelease map[string]T) T {
	t.Helper()
	r := GoRelease(t)
	v, ok := byRelease[r]
	if !ok {
		t.Fatalf("%s: nothing recorded for %s (recorded for %v); find it with this release and add it", what, r, keys(byRelease))
	}
	return v
}

func keys[T any](m map[string]T) []string {
	return slices.Sorted(maps.Keys(m))
}
