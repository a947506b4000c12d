package engine

import (
	"context"
	"maps"
	"testing"
)

// TestBuildOnly: a Prepare that only builds names the same modules, with the same
// hashes, as one that compiles them, and compiles nothing (no runtime, no compiled
// module): what a kept preflight needs to know its build.
func TestBuildOnly(t *testing.T) {
	cfg, err := LoadConfig("testdata/hello/seedfall.json")
	if err != nil {
		t.Fatal(err)
	}
	full, err := Prepare(context.Background(), cfg, PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	built, err := Prepare(context.Background(), cfg, PrepareOptions{BuildOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if built.rt != nil || len(built.modules) != 0 || built.CompileTime != 0 {
		t.Errorf("BuildOnly compiled: runtime %v, %d modules, compile time %v", built.rt != nil, len(built.modules), built.CompileTime)
	}
	if got, want := built.Provenance("").Wasm, full.Provenance("").Wasm; len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("BuildOnly's wasm hashes %v, a full Prepare's %v", got, want)
	}
	if err := built.Close(); err != nil {
		t.Errorf("Close of a BuildOnly sim: %v", err)
	}
}
