// Package crossbuild only tests: seedfall builds for the other hosts. It is a package of
// its own so that its cross compilation, most of a package's time from a cold cache,
// runs beside cmd/seedfall's tests instead of inside their 10-minute budget.
package crossbuild_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrossBuild: seedfall builds for the Windows and macOS hosts the product supports
// (the CI workflow runs the tests there: .github/workflows/ci.yml, job hosts): every
// package of the command compiles, and the one package with files of its own per host
// (engine: CPU time, memory reservation, memory images) is vetted with its tests. The
// other packages' tests are not vetted per host: they have no host-specific files, and
// vetting them compiled their test-only dependencies (chromedp and its protocol, most of
// this test's time from a cold cache) once per host.
func TestCrossBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("cross builds: skipped in -short mode")
	}
	root := filepath.Join("..", "..") // the repository
	for _, goos := range []string{"windows", "darwin"} {
		for _, args := range [][]string{
			{"build", "./cmd/...", "./engine/...", "./ci/...", "./sim/...", "./report/...", "./internal/..."},
			{"build", "-o", os.DevNull, "./cmd/seedfall"},
			{"vet", "./engine"},
		} {
			cmd := exec.Command("go", args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s go %s: %v\n%s", goos, strings.Join(args, " "), err, out)
			}
		}
	}
}
