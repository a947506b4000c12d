package build

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestPatchesOfOneFileCompose: two entries of a node's patches that edit the same file
// apply in order (the build sees both edits), and a later one that no longer applies on
// top of the earlier one is refused with an error naming both.
func TestPatchesOfOneFileCompose(t *testing.T) {
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("dep/dep.go", "package dep\n\nconst A = 1\n\nconst B = 2\n")
	write("a.patch", "--- a/example.com/m/dep/dep.go\n+++ b/example.com/m/dep/dep.go\n@@ -1,3 +1,3 @@\n package dep\n \n-const A = 1\n+const A = 10\n")
	write("b.patch", "--- a/example.com/m/dep/dep.go\n+++ b/example.com/m/dep/dep.go\n@@ -3,3 +3,3 @@\n const A = 10\n \n-const B = 2\n+const B = 20\n")
	// c.patch was written against the unpatched file: its context is what a.patch removed.
	write("c.patch", "--- a/example.com/m/dep/dep.go\n+++ b/example.com/m/dep/dep.go\n@@ -3,3 +3,3 @@\n const A = 1\n \n-const B = 2\n+const B = 30\n")

	spec := Spec{Dir: dir, ConfigPath: filepath.Join(dir, "seedfall.json"), Name: "server", Pkg: "./dep"}
	spec.Patches = []string{"a.patch", "b.patch"}
	ov, _, _, err := writeOverlay(spec, runtime.GOROOT(), nil)
	if err != nil {
		t.Fatalf("a.patch then b.patch: %v", err)
	}
	raw, _ := os.ReadFile(ov)
	var o struct{ Replace map[string]string }
	json.Unmarshal(raw, &o)
	orig, _ := filepath.EvalSymlinks(filepath.Join(dir, "dep", "dep.go"))
	got, err := os.ReadFile(o.Replace[orig])
	if err != nil {
		t.Fatalf("no overlay for %s in %v: %v", orig, o.Replace, err)
	}
	if want := "package dep\n\nconst A = 10\n\nconst B = 20\n"; string(got) != want {
		t.Errorf("patched file:\n%s\nwant both edits:\n%s", got, want)
	}

	spec.Patches = []string{"a.patch", "c.patch"}
	_, _, _, err = writeOverlay(spec, runtime.GOROOT(), nil)
	if err == nil || !strings.Contains(err.Error(), "patches[1] (c.patch)") || !strings.Contains(err.Error(), "patches[0] (a.patch)") {
		t.Fatalf("c.patch over a.patch: %v, want an error naming both", err)
	}
	t.Log(err)
	// Alone, c.patch applies: the refusal is about the order, not the patch.
	spec.Patches = []string{"c.patch"}
	if _, _, _, err := writeOverlay(spec, runtime.GOROOT(), nil); err != nil {
		t.Fatalf("c.patch alone: %v", err)
	}
}

// TestPatchesOfOneModuleCacheFileCompose: the same for a dependency in the module
// cache (the usual case: a library pinned in go.mod), whose patched files go to a
// patched copy of the module rather than to the overlay. Before the fix the second
// entry was applied to the original file and its result replaced the first entry's.
func TestPatchesOfOneModuleCacheFileCompose(t *testing.T) {
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
	modcache := t.TempDir()
	t.Setenv("GOMODCACHE", modcache)
	t.Setenv("GOFLAGS", "-mod=mod")
	dir := t.TempDir()
	write := func(p, text string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	depDir := filepath.Join(modcache, "example.com", "dep@v1.0.0")
	write(filepath.Join(depDir, "go.mod"), "module example.com/dep\n\ngo 1.26\n")
	write(filepath.Join(depDir, "dep.go"), "package dep\n\nconst A = 1\n\nconst B = 2\n")
	write(filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.26\n\nrequire example.com/dep v1.0.0\n\nreplace example.com/dep => "+depDir+"\n")
	write(filepath.Join(dir, "main.go"), "package main\n\nimport _ \"example.com/dep\"\n\nfunc main() {}\n")
	write(filepath.Join(dir, "a.patch"), "--- a/example.com/dep/dep.go\n+++ b/example.com/dep/dep.go\n@@ -1,3 +1,3 @@\n package dep\n \n-const A = 1\n+const A = 10\n")
	write(filepath.Join(dir, "b.patch"), "--- a/example.com/dep/dep.go\n+++ b/example.com/dep/dep.go\n@@ -3,3 +3,3 @@\n const A = 10\n \n-const B = 2\n+const B = 20\n")

	spec := Spec{Dir: dir, ConfigPath: filepath.Join(dir, "seedfall.json"), Name: "server", Pkg: ".", Patches: []string{"a.patch", "b.patch"}}
	_, modfile, _, err := writeOverlay(spec, runtime.GOROOT(), nil)
	if err != nil {
		t.Fatalf("a.patch then b.patch: %v", err)
	}
	if modfile == "" {
		t.Fatal("no -modfile: the dependency was not treated as a module-cache file")
	}
	copies, _ := filepath.Glob(filepath.Join(filepath.Dir(modfile), "modules", "dep@v1.0.0-*", "dep.go"))
	if len(copies) != 1 {
		t.Fatalf("patched copies of dep.go: %v, want one", copies)
	}
	got, err := os.ReadFile(copies[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := "package dep\n\nconst A = 10\n\nconst B = 20\n"; string(got) != want {
		t.Errorf("patched file:\n%s\nwant both edits:\n%s", got, want)
	}
}
