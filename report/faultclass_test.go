package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/templates"
)

// TestEveryFaultClassHasAColour: the stylesheet colours every class a fault can have
// (engine's FaultKind constants, crash-mid-op, other), so a new kind is not drawn blank.
func TestEveryFaultClassHasAColour(t *testing.T) {
	classes := map[string]bool{"other": true}
	for _, k := range faultKinds(t) {
		classes[engine.Fault{Kind: k}.Class()] = true
		classes[engine.Fault{Kind: k, DiskOp: 1}.Class()] = true
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

// faultKinds parses engine/fault.go for the FaultKind constants.
func faultKinds(t *testing.T) []engine.FaultKind {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../engine/fault.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []engine.FaultKind
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
				out = append(out, engine.FaultKind(k))
			}
		}
	}
	return out
}

// TestFaultClassesAgree: FaultClasses (the groups' "faults before") and engine.Fault.Class (the
// report's colours) say the same of every fault, a crash during a disk op included.
func TestFaultClassesAgree(t *testing.T) {
	r := &engine.Result{Failure: &engine.Failure{AtNS: 100}}
	for i, k := range faultKinds(t) {
		r.Faults = append(r.Faults, engine.Fault{AtNS: int64(i), Kind: k, Node: "n"})
	}
	r.Faults = append(r.Faults, engine.Fault{AtNS: 50, Kind: engine.FaultCrash, Node: "n", DiskOp: 7, Incarnation: 1})
	r.Faults = append(r.Faults, engine.Fault{AtNS: 200, Kind: engine.FaultPause, Node: "late"}) // after the failure
	var want []string
	seen := map[string]bool{}
	for _, f := range r.Faults[:len(r.Faults)-1] {
		if c := f.Class(); !seen[c] {
			seen[c] = true
			want = append(want, c)
		}
	}
	sort.Strings(want)
	if got := FaultClasses(r); !slices.Equal(got, want) {
		t.Errorf("FaultClasses %v, classes %v", got, want)
	}
	if !seen["crash-mid-op"] || !seen["crash"] {
		t.Errorf("classes %v lack crash or crash-mid-op", want)
	}
	if c := (engine.Fault{Kind: "meteor"}).Class(); c != "other" {
		t.Errorf("unknown kind's class %q, want other", c)
	}
}

// TestPropertiesCarryTheEngineVerdict: the rows take the engine's verdict, and a row
// without one is not shown as passing.
func TestPropertiesCarryTheEngineVerdict(t *testing.T) {
	rows := Properties([]engine.PropertySummary{
		{Name: "a", Kind: engine.PropReachable, SeedsReached: 3, SeedsTrue: 3, OK: true},
		{Name: "b", Kind: engine.PropAlways, SeedsReached: 3, SeedsTrue: 2, OK: false},
	})
	if rows[0].verdict() != "ok" || rows[1].verdict() != "FAIL" {
		t.Errorf("verdicts %q %q, want ok FAIL", rows[0].verdict(), rows[1].verdict())
	}
	if v := (Property{Name: "c", Kind: "sometimes", Reached: 1, Held: 1}).verdict(); v != "FAIL" {
		t.Errorf("a row without a verdict shows %q", v)
	}
}
