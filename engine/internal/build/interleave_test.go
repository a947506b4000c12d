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
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOROOT", root) // `go env GOROOT` in dir now names the fake toolchain
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
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
