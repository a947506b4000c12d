package platform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/internal/srcedit"
)

func TestCompare(t *testing.T) {
	order := []string{
		"v0.1.0", "v0.9.0", "v0.10.0", "v0.50.0",
		"v1.0.1-0.20220721030215-126854af5e6d", "v1.0.1-rc.1", "v1.0.1", "v1.3.10", "v1.4.0", "v1.10.0",
	}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := compare(order[i], order[j]); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	for _, v := range []string{"", "1.2.3", "v1.2", "vx.1.2", "v1.2.3.4"} {
		if inRange(v, "v0.0.0", "v99.0.0") {
			t.Errorf("inRange(%q) is true for a version that is not semantic", v)
		}
	}
}

// fakeModule makes a module directory with the given files.
func fakeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func noResolve(pkg string) (Module, bool, error) { return Module{}, false, nil }

// testPorts are ports of the shapes the layer has had (the Linux personality made every
// one of them unneeded): files added by version range, an edit of a build constraint, a
// port that imports a package another port ports. withPorts puts them in place of Ports
// for one test.
var testPorts = []Port{
	{
		Module: "golang.org/x/sys", Pkg: "golang.org/x/sys/unix", Min: "v0.0.0-0", Below: "v0.51.0",
		Why: "test", Add: []Added{{Path: "unix/seedfall_wasip1.go", Text: []byte("package unix\n")}},
	},
	{
		Module: "go.etcd.io/bbolt", Pkg: "go.etcd.io/bbolt/internal/common", Min: "v1.4.0", Below: "v1.6.0",
		Why: "test", Add: []Added{{Path: "internal/common/seedfall_wasm.go", Text: []byte("package common\n\nconst MaxAllocSize = 0xFFFFFFF\n")}},
	},
	{
		Module: "go.etcd.io/bbolt", Pkg: "go.etcd.io/bbolt", Min: "v1.3.5", Below: "v1.4.0",
		Why: "test", Add: []Added{{Path: "seedfall_wasm.go", Text: []byte("package bbolt\n")}},
	},
	{
		Module: "github.com/xujiajun/mmap-go", Pkg: "github.com/xujiajun/mmap-go", Min: "v1.0.0", Below: "v1.1.0",
		Why: "test", Imports: []string{"golang.org/x/sys/unix"},
		Edit: []srcedit.File{{Path: "mmap_unix.go", Edits: []srcedit.Edit{
			buildLine("build constraint: add wasip1",
				"// +build darwin dragonfly freebsd linux openbsd solaris netbsd",
				"// +build darwin dragonfly freebsd linux openbsd solaris netbsd wasip1"),
		}}},
	},
}

func withPorts(t *testing.T) {
	old := Ports
	Ports = testPorts
	t.Cleanup(func() { Ports = old })
}

func TestPortsByVersion(t *testing.T) {
	withPorts(t)
	dir := fakeModule(t, map[string]string{"internal/common/bolt_amd64.go": "package common\n"})
	pkgs := map[string]Module{
		"go.etcd.io/bbolt":                 {Path: "go.etcd.io/bbolt", Version: "v1.4.3", Dir: dir},
		"go.etcd.io/bbolt/internal/common": {Path: "go.etcd.io/bbolt", Version: "v1.4.3", Dir: dir},
		"example.com/other":                {Path: "example.com/other", Version: "v1.0.0", Dir: t.TempDir()},
	}
	out, err := Files(pkgs, noResolve)
	if err != nil {
		t.Fatal(err)
	}
	added := filepath.Join(dir, "internal", "common", "seedfall_wasm.go")
	if len(out) != 1 || !strings.Contains(string(out[added]), "const MaxAllocSize = 0xFFFFFFF") {
		t.Fatalf("bbolt v1.4.3: got files %v, want only %s", keysOf(out), added)
	}

	// A version no port was written for is refused, naming the module, its version and
	// the ranges.
	for _, p := range []string{"go.etcd.io/bbolt", "go.etcd.io/bbolt/internal/common"} {
		m := pkgs[p]
		m.Version = "v1.6.0"
		pkgs[p] = m
	}
	_, err = Files(pkgs, noResolve)
	var pe *PortError
	if !errors.As(err, &pe) {
		t.Fatalf("bbolt v1.6.0: err %v, want a *PortError", err)
	}
	for _, want := range []string{"go.etcd.io/bbolt@v1.6.0", "outside every range", "v1.4.0 up to but not including v1.6.0", "v1.3.5 up to but not including v1.4.0", "docs/overlay.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// A local copy (no version) is refused too.
	_, err = Files(map[string]Module{"golang.org/x/sys/unix": {Path: "golang.org/x/sys", Dir: t.TempDir()}}, noResolve)
	if err == nil || !strings.Contains(err.Error(), "a local copy (no version)") {
		t.Errorf("x/sys as a local copy: err %v", err)
	}
}

func TestPortEditsAndImports(t *testing.T) {
	withPorts(t)
	mmapDir := fakeModule(t, map[string]string{"mmap_unix.go": "// +build darwin dragonfly freebsd linux openbsd solaris netbsd\n\npackage mmap\n"})
	sysDir := fakeModule(t, map[string]string{"unix/vgetrandom_unsupported.go": "package unix\n"})
	pkgs := map[string]Module{"github.com/xujiajun/mmap-go": {Path: "github.com/xujiajun/mmap-go", Version: "v1.0.1", Dir: mmapDir}}
	var asked []string
	resolve := func(pkg string) (Module, bool, error) {
		asked = append(asked, pkg)
		return Module{Path: "golang.org/x/sys", Version: "v0.44.0", Dir: sysDir}, true, nil
	}
	out, err := Files(pkgs, resolve)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(out[filepath.Join(mmapDir, "mmap_unix.go")])
	if !strings.HasPrefix(edited, "// +build darwin dragonfly freebsd linux openbsd solaris netbsd wasip1\n") {
		t.Errorf("mmap_unix.go's constraint not widened:\n%s", edited)
	}
	if _, ok := out[filepath.Join(sysDir, "unix", "seedfall_wasip1.go")]; !ok || len(asked) != 1 || asked[0] != "golang.org/x/sys/unix" {
		t.Errorf("the mmap-go port imports x/sys/unix, which must be ported too: asked %v, files %v", asked, keysOf(out))
	}
	if _, ok := pkgs["golang.org/x/sys/unix"]; ok {
		t.Error("Files changed its caller's map")
	}

	// An edit whose code is not there is refused, naming the file and the edit.
	other := fakeModule(t, map[string]string{"mmap_unix.go": "//go:build unix\n\npackage mmap\n"})
	_, err = Files(map[string]Module{"github.com/xujiajun/mmap-go": {Path: "github.com/xujiajun/mmap-go", Version: "v1.0.1", Dir: other}}, resolve)
	if err == nil || !strings.Contains(err.Error(), `the edit "build constraint: add wasip1" of mmap_unix.go does not apply: the code it changes occurs 0 times`) {
		t.Errorf("edit that does not fit: err %v", err)
	}
	// A file the port would add that the module already has.
	has := fakeModule(t, map[string]string{"unix/seedfall_wasip1.go": "package unix\n"})
	_, err = Files(map[string]Module{"golang.org/x/sys/unix": {Path: "golang.org/x/sys", Version: "v0.44.0", Dir: has}}, noResolve)
	if err == nil || !strings.Contains(err.Error(), "it already has unix/seedfall_wasip1.go") {
		t.Errorf("added file that exists: err %v", err)
	}
}

// TestWriteGOROOT: the GOROOT part of the layer for the go command's toolchain (.ci/run
// runs it with go1.26 and go1.27): the added files, syscall_wasip1.go's Syscall and
// signal_unix.go's loop edited.
func TestWriteGOROOT(t *testing.T) {
	goroot := goroot()
	if goroot == "" {
		t.Fatal("go env GOROOT failed")
	}
	dir := t.TempDir()
	rep, err := WriteGOROOT(dir, goroot)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep) != 4 {
		t.Fatalf("overlay entries %v, want the added files and syscall_wasip1.go, signal_unix.go", rep)
	}
	data, err := os.ReadFile(rep[filepath.Join(goroot, "src", "os", "signal", "signal_unix.go")])
	if err != nil || !strings.Contains(string(data), "\tseedfallWait()\n") {
		t.Errorf("signal_unix.go not edited (%v)", err)
	}
	if _, err := os.Stat(rep[filepath.Join(goroot, "src", "os", "signal", SignalAdded)]); err != nil {
		t.Errorf("os/signal's added file: %v", err)
	}
	data, err = os.ReadFile(rep[filepath.Join(goroot, "src", "syscall", "syscall_wasip1.go")])
	if err != nil || !strings.Contains(string(data), "seedfallSyscall(trap, a1, a2, a3); ok {") {
		t.Errorf("syscall_wasip1.go not edited (%v)", err)
	}
	if _, err := WriteGOROOT(dir, t.TempDir()); err == nil {
		t.Error("a directory that is no GOROOT was accepted")
	}
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
