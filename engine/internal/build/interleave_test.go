package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInterleaveUnsupportedGo: a node with interleave whose toolchain is older than
// seedfall supports fails to build with an error that names the node and the versions,
// before go build runs (it would otherwise build an unpatched runtime).
func TestInterleaveUnsupportedGo(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "VERSION"), []byte("go1.25.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := moduleOnToolchain(t, root)
	_, err := Node(context.Background(), Spec{Dir: dir, ConfigPath: filepath.Join(dir, "seedfall.json"), Name: "n1", Pkg: ".", Interleave: true})
	if err == nil {
		t.Fatal("built a node with interleave on go1.25.0")
	}
	for _, w := range []string{`build node "n1"`, "interleave:", "is go1.25.0", "go1.26 or later"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

// moduleOnToolchain writes a one-file main module and points `go env GOROOT` at root, a
// fake toolchain, for the rest of the test (and gives it a cache of its own); it returns
// the module's directory.
func moduleOnToolchain(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOROOT", root)
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
	return dir
}
