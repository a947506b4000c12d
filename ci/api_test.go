package ci

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// maxExports bounds ci's public API: what other packages of this module use (the
// seedfall command's `ci`, `report` and `merge`, and its tests). It was 57 before issue
// 34; everything else is unexported.
const maxExports = 18

// apiNames lists the funcs, types and methods that `go doc -all` shows for the package
// in dir, one "func F", "type T" or "func (T) M" each, sorted (as engine's
// TestPublicAPISize counts them).
func apiNames(t *testing.T, dir string) []string {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, pkg.ImportPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range d.Funcs {
		out = append(out, "func "+f.Name)
	}
	for _, ty := range d.Types {
		out = append(out, "type "+ty.Name)
		for _, f := range ty.Funcs {
			out = append(out, "func "+f.Name)
		}
		for _, m := range ty.Methods {
			out = append(out, "func ("+ty.Name+") "+m.Name)
		}
	}
	sort.Strings(out)
	return out
}

// TestPublicAPISize fails when ci exports more than maxExports funcs, types and methods
// (the count `go doc -all ./ci | grep -cE '^(func|type) '` prints).
func TestPublicAPISize(t *testing.T) {
	names := apiNames(t, ".")
	if len(names) > maxExports {
		t.Errorf("ci exports %d funcs, types and methods, more than %d: export only what another package of this module needs (cmd/seedfall, internal/mcpserver, report, their tests) and keep the rest unexported; if another package really needs it, raise maxExports and say why (CONTRIBUTING.md). They are:\n%v", len(names), maxExports, names)
	}
	if len(names) < 10 {
		t.Errorf("counted only %d exports: the counter is broken", len(names))
	}
}

// TestAPICounterCounts is the negative control: the counter sees package funcs,
// constructors, methods and aliases, and not unexported names or methods of an
// unexported type.
func TestAPICounterCounts(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import "time"

type T struct{}

func New() *T              { return nil }
func (T) M()               {}
func (*T) m()              {}
func F()                   {}
func f()                   {}
type A = time.Duration
type u int
func (u) Exported()        {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := apiNames(t, dir)
	want := []string{"func (T) M", "func F", "func New", "type A", "type T"}
	if len(got) != len(want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("counted %v, want %v", got, want)
		}
	}
}
