package platform

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// writePkg writes files (name to content) into a new directory and returns it.
func writePkg(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func dep(path, dir string) Pkg {
	return Pkg{ImportPath: path, Dir: dir, Module: Module{Path: "example.com/dep", Version: "v1.0.0", Dir: dir}}
}

func personality(t *testing.T, pkgs ...Pkg) *PersonalityResult {
	t.Helper()
	res, err := Personality(pkgs, Context{GoVersion: runtime.Version(), GOROOT: runtime.GOROOT()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPersonalityLinuxFiles: a file for Linux (by name or by constraint) is taken, a
// library's own wasip1 stub gives way to it, and a file wasip1 and Linux both take is
// not touched. A file renamed keeps its name in positions (//line).
func TestPersonalityLinuxFiles(t *testing.T) {
	dir := writePkg(t, map[string]string{
		"sync_linux.go":  "package p\n\nfunc Sync() string { return \"linux\" }\n",
		"sync_wasip1.go": "package p\n\nfunc Sync() string { return \"ENOSYS\" }\n",
		"lock_unix.go":   "//go:build unix\n\npackage p\n\nfunc Lock() string { return \"flock\" }\n",
		"lock_other.go":  "//go:build !unix\n\npackage p\n\nfunc Lock() string { return \"none\" }\n",
		"common.go":      "package p\n\nvar X = 1\n",
		"x_windows.go":   "package p\n\nvar W = 1\n",
	})
	res := personality(t, dep("example.com/dep/p", dir))
	got := map[string]string{}
	for path, content := range res.Files {
		got[filepath.Base(path)] = string(content)
	}
	want := map[string]func(string) bool{
		"sync_linux.go": IsRemovedString,
		"sync_linux_sf.go": func(s string) bool {
			return strings.HasPrefix(s, "//line "+filepath.Join(dir, "sync_linux.go")+":1\n") && strings.Contains(s, `"linux"`)
		},
		"sync_wasip1.go": IsRemovedString,
		"lock_unix.go":   func(s string) bool { return strings.HasPrefix(s, "\n\npackage p") },
		"lock_other.go":  IsRemovedString,
	}
	for name, ok := range want {
		c, present := got[name]
		if !present || !ok(c) {
			t.Errorf("%s: got %q (present %v)", name, c, present)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s changed, want untouched", name)
		}
	}
	// Negative control: the standard library and seedfall's own packages keep wasip1's view.
	if r := personality(t, Pkg{ImportPath: "p", Dir: dir, Standard: true}); len(r.Files) != 0 {
		t.Errorf("a standard package took the personality: %v", r.Files)
	}
	if r := personality(t, Pkg{ImportPath: SeedfallModule + "/sim", Dir: dir, Module: Module{Path: SeedfallModule, Dir: dir}}); len(r.Files) != 0 {
		t.Errorf("seedfall's own package took the personality")
	}
}

func IsRemovedString(s string) bool { return IsRemoved([]byte(s)) }

// TestPersonalityArchFill: an identifier declared only in other architectures' files
// (bbolt's maxMapSize) is taken from amd64's pure-Go file; a file with assembly (a
// function without a body) or cgo never is, and its pure-Go fallback stays; the names
// another package uses (pebble's manual.MaxArrayLen) count.
func TestPersonalityArchFill(t *testing.T) {
	dir := writePkg(t, map[string]string{
		"db.go":         "package p\n\nfunc Open() int { return maxMapSize + fast(nil) }\n",
		"size_amd64.go": "package p\n\nconst maxMapSize = 0xFFFFFFFFFFFF\n",
		"size_arm64.go": "package p\n\nconst maxMapSize = 0xFFFFFFFFFFFF\n",
		"size_386.go":   "package p\n\nconst maxMapSize = 0x7FFFFFFF\n",
		"fast_amd64.go": "package p\n\nfunc fast(b []byte) int\n",
		"fast_other.go": "//go:build !amd64\n\npackage p\n\nfunc fast(b []byte) int { return 0 }\n",
		"c_amd64.go":    "package p\n\nimport \"C\"\n\nvar cOnly = 1\n",
		"use.go":        "package p\n\nvar _ = cOnly\n",
	})
	res := personality(t, dep("example.com/dep/p", dir))
	var names []string
	for path := range res.Files {
		names = append(names, filepath.Base(path))
	}
	slices.Sort(names)
	if want := []string{"size_amd64.go", "size_amd64_sf.go"}; !slices.Equal(names, want) {
		t.Errorf("changed %v, want %v (amd64's sizes only: not the assembly, not cgo, not arm64's too)", names, want)
	}

	// Used from another package only.
	mdir := writePkg(t, map[string]string{
		"manual.go":       "package manual\n\nfunc New() {}\n",
		"manual_64bit.go": "//go:build amd64 || arm64\n\npackage manual\n\nconst MaxArrayLen = 1 << 40\n",
		"manual_32bit.go": "//go:build 386 || arm\n\npackage manual\n\nconst MaxArrayLen = 1 << 30\n",
	})
	cdir := writePkg(t, map[string]string{
		"cache.go": "package cache\n\nimport \"example.com/dep/manual\"\n\nvar n = manual.MaxArrayLen\n",
	})
	res = personality(t, dep("example.com/dep/manual", mdir), dep("example.com/dep/cache", cdir))
	if _, ok := res.Files[filepath.Join(mdir, "manual_64bit.go")]; !ok {
		t.Errorf("manual_64bit.go not taken for a name only its importer uses: %v", res.Files)
	}
	// Negative control: with no importer that uses it, nothing is taken.
	if res := personality(t, dep("example.com/dep/manual", mdir)); len(res.Files) != 0 {
		t.Errorf("took %v with no use of MaxArrayLen", res.Files)
	}
}

// TestPersonalityTests: a package's _test.go files take the personality only when its
// test binary is built.
func TestPersonalityTests(t *testing.T) {
	dir := writePkg(t, map[string]string{
		"p.go":            "package p\n",
		"p_linux_test.go": "package p\n",
	})
	p := dep("example.com/dep/p", dir)
	if res := personality(t, p); len(res.Files) != 0 {
		t.Errorf("test files changed for a build that does not build them: %v", res.Files)
	}
	p.Tests = true
	res := personality(t, p)
	if _, ok := res.Files[filepath.Join(dir, "p_linux_sf_test.go")]; !ok {
		t.Errorf("p_linux_test.go not taken for the test binary: %v", res.Files)
	}
}

func TestNameAllows(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"a.go", true}, {"a_linux.go", false}, {"a_wasip1.go", true}, {"a_amd64.go", false},
		{"a_wasm.go", true}, {"a_linux_amd64.go", false}, {"a_wasip1_wasm.go", true},
		{"a_linux_test.go", false}, {"a_linux_sf.go", true}, {"a_linux_sf_test.go", true},
		{"linux.go", true}, {"a_unix.go", true},
	} {
		if got := nameAllows(c.name, "wasip1", "wasm"); got != c.want {
			t.Errorf("nameAllows(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	for _, n := range []string{"a_linux.go", "a_linux_test.go", "b_linux_amd64.go"} {
		r := renamed(n)
		if !nameAllows(r, "wasip1", "wasm") || OriginalName(r) != n {
			t.Errorf("renamed(%q) = %q (original %q)", n, r, OriginalName(r))
		}
	}
}

// TestXsysTransform: x/sys/unix's errno constants take wasip1's numbers (an errno wasip1
// lacks gets one that collides with none), its entry points call the layer, and a
// function declared without a body returns ENOSYS after the trace line (or, with no
// error result, its zero values quietly); lines stay put.
func TestXsysTransform(t *testing.T) {
	errnos, err := wasip1Errnos(runtime.GOROOT())
	if err != nil {
		t.Fatal(err)
	}
	src := "package unix\n\nconst (\n\tENOENT = syscall.Errno(0x2)\n\tECHRNG = syscall.Errno(0x2c)\n)\n\n" +
		"//go:noescape\nfunc Syscall(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)\n\n" +
		"//go:linkname vgetrandom runtime.vgetrandom\n//go:noescape\nfunc vgetrandom(p []byte, flags uint32) (ret int, supported bool)\n\n" +
		"func (w WaitStatus) Signal() syscall.Signal {\n\tif w == 0 {\n\t\treturn -1\n\t}\n\treturn 1\n}\n\n" +
		"func f() error\n"
	out := string(xsysTransform([]byte(src), errnos))
	if got, want := strings.Count(out, "\n"), strings.Count(src, "\n"); got != want {
		t.Errorf("%d lines, want %d:\n%s", got, want, out)
	}
	for _, w := range []string{
		"\tENOENT = syscall.ENOENT\n",
		"\tECHRNG = syscall.Errno(0x102c)\n", // wasip1 has no ECHRNG: 0x1000 + Linux's number
		"//go:uintptrescapes\nfunc Syscall(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno) { return seedfallSyscall(trap, a1, a2, a3, 0, 0, 0) }\n",
		`func vgetrandom(p []byte, flags uint32) (ret int, supported bool) { return *new(int), *new(bool) }`,
		"\t\treturn ^syscall.Signal(0)\n",
		`func f() error { seedfallUnsupported("f"); return ENOSYS }`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("transformed file lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "go:linkname") {
		t.Errorf("a linkname to a symbol wasip1 lacks is kept:\n%s", out)
	}
	if _, ok := errnos["ECHRNG"]; ok {
		t.Fatal("the test assumes wasip1 has no ECHRNG")
	}
}
