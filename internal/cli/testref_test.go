package cli

import (
	"path/filepath"
	"testing"
)

// TestTestOfAnotherProcess: a derived config's test is found from the record beside it,
// as by a `seedfall report` that did not derive the config itself (the merged results of
// sharded jobs); a config with no record is not a test's.
func TestTestOfAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "TestCrash.json")
	if _, ok := TestOf(path); ok {
		t.Fatal("a config with no record is a test's")
	}
	ref := TestRef{Pkg: "./sim", Dir: "/src/m/sim", Name: "TestCrash"}
	if err := WriteTestRef(path, ref); err != nil {
		t.Fatal(err)
	}
	got, ok := TestOf(path)
	if !ok || got != ref {
		t.Fatalf("TestOf = %+v, %v; want %+v", got, ok, ref)
	}
	if want := "seedfall test ./sim -run '^TestCrash$' -seed 3"; ReplayCommand(path, 3) != want {
		t.Errorf("ReplayCommand = %q, want %q", ReplayCommand(path, 3), want)
	}
}
