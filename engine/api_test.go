package engine

import (
	"testing"

	"github.com/seedfall/seedfall/internal/apisize"
)

// warnExports is where the size of engine's public API is worth a second look: it is
// what someone embedding seedfall needs (Config, Prepare/Sim, Run/Result, Sweep, Shrink,
// Cause, Signature, plans). What only seedfall's own commands need goes to
// internal/engineapi instead (through engine.Commands). The count is a warning, not a
// target (RATIONALE.md, "The engine's API").
const warnExports = 60

// TestPublicAPISize logs the funcs, types and methods engine exports (the count `go doc
// -all ./engine | grep -cE '^(func|type) '` prints), warns above warnExports, and fails
// if the counter is broken.
func TestPublicAPISize(t *testing.T) {
	names, err := apisize.Names(".")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("engine exports %d funcs, types and methods", len(names))
	if len(names) > warnExports {
		t.Logf("warning: more than %d: is each of them something an embedder needs? What only seedfall's commands need belongs in internal/engineapi (CONTRIBUTING.md). They are:\n%v", warnExports, names)
	}
	if len(names) < 30 {
		t.Errorf("counted only %d exports: the counter (internal/apisize) is broken", len(names))
	}
}
