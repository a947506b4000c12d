package ci

import (
	"testing"

	"github.com/seedfall/seedfall/internal/apisize"
)

// maxExports bounds ci's public API: what other packages of this module use (the
// seedfall command's `ci`, `report` and `merge`, and its tests). It was 57 before issue
// 34; everything else is unexported. 19 since issue 45: GoToolchain, which the command
// calls before anything runs the go command (it sets the process's GOTOOLCHAIN, which
// Run, reading only its Env, does not do). 20 since issue 49: UpgradeLine, which
// `seedfall run -upgrade-from -out` records in its results so that report shows it.
// 21 since issue 47: the command's engine returns a crash-state search as CrashSearch
// and its CrashFindings (they replaced CrashSite, a search's vulnerable site). 22 since
// issue 62: TestTarget, each simulation test of a sweep of several, which the command
// derives (it builds the tests) and hands to Run in Inputs.Tests.
const maxExports = 22

// TestPublicAPISize fails when ci exports more than maxExports funcs, types and methods
// (the count `go doc -all ./ci | grep -cE '^(func|type) '` prints).
func TestPublicAPISize(t *testing.T) {
	names, err := apisize.Names(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) > maxExports {
		t.Errorf("ci exports %d funcs, types and methods, more than %d: export only what another package of this module needs (cmd/seedfall, internal/mcpserver, report, their tests) and keep the rest unexported; if another package really needs it, raise maxExports and say why (CONTRIBUTING.md). They are:\n%v", len(names), maxExports, names)
	}
	if len(names) < 10 {
		t.Errorf("counted only %d exports: the counter (internal/apisize) is broken", len(names))
	}
}
