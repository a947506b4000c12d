package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/templates"
)

// TestEveryFaultClassHasAColour: the stylesheet colours every class a fault can have
// (engine's FaultKind constants, crash-mid-op, other), so a new kind is not drawn blank.
func TestEveryFaultClassHasAColour(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../engine/fault.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]bool{"other": true}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "FaultKind" {
				continue
			}
			for _, v := range vs.Values {
				k, _ := strconv.Unquote(v.(*ast.BasicLit).Value)
				classes[engine.Fault{Kind: engine.FaultKind(k)}.Class()] = true
				classes[engine.Fault{Kind: engine.FaultKind(k), DiskOp: 1}.Class()] = true
			}
		}
	}
	if len(classes) < 3 {
		t.Fatalf("classes %v: the kinds were not found", classes)
	}
	css, err := templates.FS.ReadFile("report.css")
	if err != nil {
		t.Fatal(err)
	}
	for c := range classes {
		if !strings.Contains(string(css), ".k-"+c+" {") {
			t.Errorf("report.css has no colour for fault class %q (.k-%s)", c, c)
		}
	}
}
