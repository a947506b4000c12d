package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPkgModule: a node package in a directory of another module is built in that
// module (its own go.mod and dependencies); one of the config's own module is built from
// the config's directory, as is an import path.
func TestPkgModule(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/server", "b/client", "a/nested/x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(root, m, "go.mod"), []byte("module "+m+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(root, "a")
	for _, c := range []struct{ pkg, dir, want string }{
		{"./server", a, "./server"},
		{".", a, "."},
		{"./nested/x", a, "./nested/x"},
		{"example.com/cmd/server", a, "example.com/cmd/server"},
		{"server", a, "server"},
		{"../b/client", filepath.Join(root, "b"), "./client"},
		{"../b", filepath.Join(root, "b"), "."},
	} {
		dir, pkg := pkgModule(a, c.pkg)
		if dir != c.dir || pkg != c.want {
			t.Errorf("pkgModule(a, %q) = %s, %q; want %s, %q", c.pkg, dir, pkg, c.dir, c.want)
		}
	}
}
