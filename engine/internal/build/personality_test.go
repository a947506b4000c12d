package build

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash paths relative to dir) and returns dir.
func writeTree(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// personalityModule is a main module with three local dependencies: linuxonly builds
// only from a Linux file (its wasip1 build has no files at all), stub has a wasip1 stub
// that gives way to its Linux file, and fallback's Linux file calls what package syscall
// lacks, so it keeps its !linux file.
func personalityModule(t *testing.T) string {
	t.Helper()
	t.Setenv("SEEDFALL_CACHE", t.TempDir())
	return writeTree(t, t.TempDir(), map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n\nrequire (\n\texample.com/linuxonly v0.0.0\n\texample.com/stub v0.0.0\n\texample.com/fallback v0.0.0\n)\n\n" +
			"replace example.com/linuxonly => ./linuxonly\n\nreplace example.com/stub => ./stub\n\nreplace example.com/fallback => ./fallback\n",
		"main.go":                 "package main\n\nimport (\n\t\"example.com/fallback\"\n\t\"example.com/stub\"\n)\n\nfunc main() { println(stub.Sync(), fallback.Kind()) }\n",
		"sim/sim.go":              "package sim\n",
		"sim/sim_test.go":         "package sim\n\nimport (\n\t\"testing\"\n\n\t\"example.com/linuxonly\"\n)\n\nfunc TestX(t *testing.T) { _ = linuxonly.Size }\n",
		"linuxonly/go.mod":        "module example.com/linuxonly\n",
		"linuxonly/size_linux.go": "package linuxonly\n\nconst Size = 1\n",
		"stub/go.mod":             "module example.com/stub\n",
		"stub/sync_linux.go":      "package stub\n\nfunc Sync() string { return \"linux\" }\n",
		"stub/sync_wasip1.go":     "package stub\n\nfunc Sync() string { return \"ENOSYS\" }\n",
		"fallback/go.mod":         "module example.com/fallback\n",
		"fallback/kind_linux.go":  "package fallback\n\nimport \"syscall\"\n\nfunc Kind() int { return syscall.NoSuchLinuxCall() }\n",
		"fallback/kind_other.go":  "//go:build !linux\n\npackage fallback\n\nfunc Kind() int { return 0 }\n",
	})
}

// TestPersonalityBuild: a node builds with its dependencies' Linux files (the overlay
// leaves the wasip1 stub out and adds the Linux file under a neutral name); a dependency
// whose Linux file does not build falls back to wasip1's files, in one more go build; a
// test binary sees its test-only imports (go list -test): a package imported only from a
// _test.go file, with only a Linux file, builds.
func TestPersonalityBuild(t *testing.T) {
	dir := personalityModule(t)
	spec := Spec{Dir: dir, ConfigPath: filepath.Join(dir, "seedfall.json"), Name: "n1", Pkg: "."}
	before := Fallbacks()
	if _, err := Node(context.Background(), spec); err != nil {
		t.Fatalf("build with the personality: %v", err)
	}
	if got := Fallbacks() - before; got != 1 {
		t.Errorf("%d builds fell back, want 1 (example.com/fallback's kind_linux.go)", got)
	}
	ov, _, changed, err := writeOverlay(spec, goroot(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(ov)
	var o struct{ Replace map[string]string }
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	stub := filepath.Join(dir, "stub")
	if v, ok := o.Replace[filepath.Join(stub, "sync_wasip1.go")]; !ok || v != "" {
		t.Errorf("sync_wasip1.go not left out: %q, %v", v, ok)
	}
	if _, ok := o.Replace[filepath.Join(stub, "sync_linux_sf.go")]; !ok {
		t.Errorf("sync_linux.go not added as sync_linux_sf.go: %v", o.Replace)
	}
	if _, ok := changed["example.com/stub"]; !ok {
		t.Errorf("changed packages %v lack example.com/stub", changed)
	}

	// The test binary: linuxonly is imported only by sim_test.go.
	spec.Pkg, spec.Test, spec.Name = "./sim", true, "t1"
	if _, err := Node(context.Background(), spec); err != nil {
		t.Fatalf("test binary with a test-only import: %v", err)
	}
}

// TestPersonalityBuildError: a dependency that builds neither way is a build error whose
// hint names it; the compiler's lines follow.
func TestPersonalityBuildError(t *testing.T) {
	dir := personalityModule(t)
	if err := os.WriteFile(filepath.Join(dir, "fallback", "kind_other.go"), []byte("//go:build !linux\n\npackage fallback\n\nfunc Kind() int { return missingToo }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Node(context.Background(), Spec{Dir: dir, ConfigPath: filepath.Join(dir, "seedfall.json"), Name: "n1", Pkg: "."})
	var be *Error
	if !errors.As(err, &be) {
		t.Fatalf("err %v, want a build error", err)
	}
	if !strings.Contains(be.Hint, "example.com/fallback@(local: ") || !strings.Contains(be.Hint, "undefined missingToo") {
		t.Errorf("hint %q", be.Hint)
	}
	if !strings.Contains(be.Error(), be.Hint+"# example.com/fallback") {
		t.Errorf("the hint is not before the compiler's lines:\n%s", be.Error())
	}
}

func goroot(t *testing.T) string {
	t.Helper()
	r, err := goEnv(".", "GOROOT")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
