package build

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBuildSkippedWhenInputsUnchanged: a second build of unchanged inputs does not run
// go build and names the same module; touching a file without changing it does not
// rebuild; editing a source file of the module, a file of a replaced module, or the
// tags does, and the new module differs.
func TestBuildSkippedWhenInputsUnchanged(t *testing.T) {
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
	root := t.TempDir()
	mod := filepath.Join(root, "app")
	lib := filepath.Join(root, "lib")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mod, "go.mod"), "module example.com/app\n\ngo 1.21\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n")
	write(filepath.Join(mod, "main.go"), "package main\n\nimport \"example.com/lib\"\n\nfunc main() { println(\"one\", lib.Name) }\n")
	write(filepath.Join(lib, "go.mod"), "module example.com/lib\n\ngo 1.21\n")
	write(filepath.Join(lib, "lib.go"), "package lib\n\nconst Name = \"a\"\n")
	spec := Spec{Dir: mod, ConfigPath: filepath.Join(mod, "seedfall.json"), Name: "app", Pkg: "."}

	// build returns the module and whether go build ran.
	build := func(s Spec) (string, bool) {
		t.Helper()
		ran0, _ := Counts()
		p, err := Node(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		ran1, _ := Counts()
		return p, ran1 > ran0
	}
	first, ran := build(spec)
	if !ran {
		t.Fatal("the first build did not run go build")
	}
	again, ran := build(spec)
	if ran || again != first {
		t.Fatalf("unchanged inputs: ran go build %v, module %s then %s", ran, first, again)
	}
	// Touched, not changed.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(mod, "main.go"), later, later); err != nil {
		t.Fatal(err)
	}
	if p, ran := build(spec); ran || p != first {
		t.Fatalf("touched main.go: ran go build %v, module %s", ran, p)
	}
	// An edited source file rebuilds.
	write(filepath.Join(mod, "main.go"), "package main\n\nimport \"example.com/lib\"\n\nfunc main() { println(\"two\", lib.Name) }\n")
	edited, ran := build(spec)
	if !ran || edited == first {
		t.Fatalf("edited main.go: ran go build %v, module %s (was %s)", ran, edited, first)
	}
	if p, ran := build(spec); ran || p != edited {
		t.Fatalf("after the rebuild: ran go build %v, module %s", ran, p)
	}
	// So does an edit in the directory a replace directive names.
	write(filepath.Join(lib, "lib.go"), "package lib\n\nconst Name = \"b\"\n")
	if p, ran := build(spec); !ran || p == edited {
		t.Fatalf("edited the replaced module: ran go build %v, module %s", ran, p)
	}
	// And other tags.
	tagged := spec
	tagged.Tags = []string{"sometag"}
	if _, ran := build(tagged); !ran {
		t.Fatal("new tags did not run go build")
	}
	// Negative controls: a file outside the module and its replacements, and a test
	// file, change nothing.
	write(filepath.Join(root, "elsewhere", "x.go"), "package x\n")
	write(filepath.Join(mod, "main_test.go"), "package main\n")
	if _, ran := build(tagged); ran {
		t.Fatal("a file outside the build's inputs ran go build")
	}
	// A deleted module file under the cache rebuilds instead of naming a missing file.
	p, _ := build(spec)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if q, ran := build(spec); !ran || q != p {
		t.Fatalf("module removed from the cache: ran go build %v, module %s (was %s)", ran, q, p)
	}
}

// TestLocalDirs reads replace and use directives: only local paths count.
func TestLocalDirs(t *testing.T) {
	dir := t.TempDir()
	gomod := filepath.Join(dir, "go.mod")
	os.WriteFile(gomod, []byte(`module m

replace a => ../a // comment
replace (
	b v1.0.0 => ./b
	c => example.com/c v1.2.3
	"d" => /abs/d
)
`), 0o644)
	got, err := localDirs(gomod, "replace")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(filepath.Dir(dir), "a"), filepath.Join(dir, "b"), "/abs/d"}
	if len(got) != len(want) {
		t.Fatalf("replace dirs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("replace dirs %v, want %v", got, want)
		}
	}
	gowork := filepath.Join(dir, "go.work")
	os.WriteFile(gowork, []byte("go 1.22\n\nuse ./x\nuse (\n\t./y\n\t../z\n)\n"), 0o644)
	got, err = localDirs(gowork, "use")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != filepath.Join(dir, "x") || got[2] != filepath.Join(filepath.Dir(dir), "z") {
		t.Fatalf("use dirs %v", got)
	}
}

// TestInputsKeyOverlays: each overlay and flag is part of the key.
func TestInputsKeyOverlays(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	base := Spec{Dir: dir, Name: "n", Pkg: "."}
	variants := map[string]Spec{"base": base}
	v := base
	v.NetOverlay = true
	variants["net_overlay"] = v
	v = base
	v.Interleave = true
	variants["interleave"] = v
	v = base
	v.Tags = []string{"x"}
	variants["tags"] = v
	seen := map[string]string{}
	for name, s := range variants {
		k, err := inputsKey(s, []string{"."})
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[k]; ok {
			t.Fatalf("%s and %s have the same key", name, other)
		}
		seen[k] = name
	}
	// Negative control: the same spec twice has one key.
	a, _ := inputsKey(base, []string{"."})
	b, _ := inputsKey(base, []string{"."})
	if a != b {
		t.Fatalf("one spec, two keys: %s %s", a, b)
	}
}

// TestInputsKeyTestFiles: a test binary (go test -c) reads its module's _test.go files,
// so editing one changes its key; a node's build does not, so its key stays.
func TestInputsKeyTestFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.go"), []byte("package p\n"), 0o644)
	test := filepath.Join(dir, "p_test.go")
	os.WriteFile(test, []byte("package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"), 0o644)
	keys := func() (node, bin string) {
		n, err := inputsKey(Spec{Dir: dir, Name: "n", Pkg: "."}, []string{"."})
		if err != nil {
			t.Fatal(err)
		}
		b, err := inputsKey(Spec{Dir: dir, Name: "n", Pkg: ".", Test: true}, []string{"."})
		if err != nil {
			t.Fatal(err)
		}
		return n, b
	}
	n1, b1 := keys()
	os.WriteFile(test, []byte("package p\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n"), 0o644)
	n2, b2 := keys()
	if b1 == b2 {
		t.Error("the test binary's key did not change with its _test.go file")
	}
	if n1 != n2 {
		t.Error("a node's key changed with a _test.go file it does not read")
	}
}
