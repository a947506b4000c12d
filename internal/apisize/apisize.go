// Package apisize counts a package's public API as `go doc -all` lists it, for the tests
// that bound engine's and ci's exports (TestPublicAPISize in each).
package apisize

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
)

// Names lists the funcs, types and methods that `go doc -all` shows for the package in
// dir, one "func F", "type T" or "func (T) M" each, sorted: the count `go doc -all DIR |
// grep -cE '^(func|type) '` prints.
func Names(dir string) ([]string, error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, pkg.ImportPath)
	if err != nil {
		return nil, err
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
	return out, nil
}
