package build

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/internal/platform"
)

// TestHint: a dependency that does not build is named with its module@version and the
// identifiers the compiler found missing, before the compiler's lines, with the way
// out; the user's own package and the standard library get no hint.
func TestHint(t *testing.T) {
	deps := []platform.Pkg{
		{ImportPath: "example.com/store", Module: platform.Module{Path: "example.com/store", Version: "v1.2.0"}},
		{ImportPath: "example.com/store/internal/fast", Module: platform.Module{Path: "example.com/store", Version: "v1.2.0"}},
		{ImportPath: "example.com/me/sim", Module: platform.Module{Path: "example.com/me"}},
	}
	out := "# example.com/store/internal/fast\n" +
		"/cache/modules/store@v1.2.0/internal/fast/sum.go:12:9: undefined: sumAVX2\n" +
		"/cache/modules/store@v1.2.0/internal/fast/sum.go:20:9: undefined: unix.Splice\n" +
		"/cache/modules/store@v1.2.0/internal/fast/sum.go:21:9: undefined: sumAVX2\n" +
		"# example.com/me/sim [example.com/me/sim.test]\n" +
		"./sim_test.go:3:2: undefined: mine\n"
	h := hint(out, deps, "example.com/me")
	for _, want := range []string{
		"example.com/store@v1.2.0 (package example.com/store/internal/fast) does not build for the simulator: undefined sumAVX2, unix.Splice.\n",
		`a "patches" entry`,
		"report it as an issue naming the " + platform.Name,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("hint lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "mine") || strings.Contains(h, "example.com/me") {
		t.Errorf("the user's own package is named as a dependency:\n%s", h)
	}
	// Negative control: only the user's package failed.
	if h := hint("# example.com/me/sim\n./a.go:1:1: undefined: x\n", deps, "example.com/me"); h != "" {
		t.Errorf("hint for the user's own package: %q", h)
	}
	// A local replacement has no version: its directory is named.
	deps[0].Module.Version, deps[0].Module.Dir = "", "/src/store"
	if h := hint("# example.com/store\nx.go:1:1: undefined: y\n", deps, "example.com/me"); !strings.Contains(h, "example.com/store@(local: /src/store)") {
		t.Errorf("local module: %q", h)
	}
}
