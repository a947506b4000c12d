package engine

import (
	"testing"

	"github.com/seedfall/seedfall/internal/apisize"
)

// maxExports bounds engine's public API: what someone embedding seedfall needs (Config,
// Prepare/Sim, Run/Result, Sweep, Shrink, Cause, Signature, plans). What only
// seedfall's own commands need goes to internal/engineapi instead.
const maxExports = 60

// TestPublicAPISize fails when engine exports more than maxExports funcs, types and
// methods (the count `go doc -all ./engine | grep -cE '^(func|type) '` prints).
func TestPublicAPISize(t *testing.T) {
	names, err := apisize.Names(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) > maxExports {
		t.Errorf("engine exports %d funcs, types and methods, more than %d: move what only seedfall's commands need to internal/engineapi (CONTRIBUTING.md). They are:\n%v", len(names), maxExports, names)
	}
	if len(names) < 30 {
		t.Errorf("counted only %d exports: the counter (internal/apisize) is broken", len(names))
	}
}
