package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// faultKindConstants parses fault.go for the FaultKind constants, so that a kind added
// there without its entry in faultKinds is caught.
func faultKindConstants(t *testing.T) []FaultKind {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "fault.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []FaultKind
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
				s, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, FaultKind(s))
			}
		}
	}
	return out
}

// TestFaultKindTable: every fault kind has one entry, with what every kind needs, and a
// pinned kind says how it is armed.
func TestFaultKindTable(t *testing.T) {
	consts := faultKindConstants(t)
	if len(consts) == 0 {
		t.Fatal("no FaultKind constants found in fault.go")
	}
	var table []FaultKind
	for _, s := range faultKinds {
		table = append(table, s.kind)
		if s.apply == nil {
			t.Errorf("kind %s: no apply", s.kind)
		}
		if s.pinned != (s.arm != nil) {
			t.Errorf("kind %s: pinned %v but arm set %v", s.kind, s.pinned, s.arm != nil)
		}
		f := Fault{Kind: s.kind, Node: "n", Peers: []string{"m"}}
		if s.kind == FaultSplit {
			f.Groups = [][]string{{"n"}, {"m"}}
		}
		if err := f.Validate(); err != nil {
			t.Errorf("kind %s: a plain fault does not validate: %v", s.kind, err)
		}
	}
	if !slices.Equal(consts, table) {
		t.Errorf("FaultKind constants %v, table entries %v: want one entry per constant, in order", consts, table)
	}
	if err := (Fault{Kind: "meteor", Node: "n"}).Validate(); err == nil || err.Error() != `kind "meteor" is not a fault kind (want crash, kill, partition, split, latency, reset, pause, clock_jump, clock_skew, fsync_eio, read_eio, corrupt, corrupt_read, misdirected_write, lost_write, write_eio, slow_io, restart or heal)` {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestFaultSpan: durations, instants and held states, and faultEnd from them.
func TestFaultSpan(t *testing.T) {
	for _, tc := range []struct {
		f    Fault
		span int64
		end  int64
	}{
		{Fault{AtNS: 10, Kind: FaultCrash, RestartNS: 5}, 5, 15},
		{Fault{AtNS: 10, Kind: FaultCrash}, -1, 10},
		{Fault{AtNS: 10, Kind: FaultPartition, DurationNS: 7}, 7, 17},
		{Fault{AtNS: 10, Kind: FaultPause, DurationNS: 3}, 3, 13},
		{Fault{AtNS: 10, Kind: FaultLatency, DurationNS: 4}, 4, 14},
		{Fault{AtNS: 10, Kind: FaultReset}, 0, 10},
		{Fault{AtNS: 10, Kind: FaultClockJump, JumpNS: 99}, 0, 10},
		{Fault{AtNS: 10, Kind: FaultClockSkew, SkewPPM: 100}, -1, 10},
		{Fault{AtNS: 10, Kind: FaultFsyncEIO}, 0, 10},
	} {
		if got := tc.f.Span(); got != tc.span {
			t.Errorf("%s: span %d, want %d", tc.f.Kind, got, tc.span)
		}
		if got := faultEnd(tc.f); got != tc.end {
			t.Errorf("%s: end %d, want %d", tc.f.Kind, got, tc.end)
		}
	}
}

// TestRenumberFromTable: a pinned fault's incarnation counts the earlier restarting
// crashes of its node; a crash without restart and a time-based fault shift nothing.
func TestRenumberFromTable(t *testing.T) {
	got := renumber([]Fault{
		{AtNS: 1, Kind: FaultCrash, Node: "a", RestartNS: 5},
		{AtNS: 2, Kind: FaultCrash, Node: "b"},
		{AtNS: 3, Kind: FaultFsyncEIO, Node: "a", DiskOp: 4, Incarnation: 9},
		{AtNS: 4, Kind: FaultCrash, Node: "b", DiskOp: 2, Incarnation: 9},
		{AtNS: 5, Kind: FaultPause, Node: "a", DiskOp: 3},
	})
	var incs []int
	for _, f := range got {
		incs = append(incs, f.Incarnation)
	}
	if want := []int{0, 0, 2, 1, 0}; !slices.Equal(incs, want) {
		t.Errorf("incarnations %v, want %v", incs, want)
	}
}
