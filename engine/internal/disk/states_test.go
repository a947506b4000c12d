package disk

import (
	"slices"
	"testing"
)

// script is a Decider that answers from a list and records what it was asked.
type script struct {
	vals []int
	got  []Decision
}

func (s *script) IntN(n int) int { panic("IntN on a Decider") }

func (s *script) Decide(d Decision) int {
	s.got = append(s.got, d)
	v := s.vals[0]
	s.vals = s.vals[1:]
	return v
}

// TestCloneIsIndependent: crashing a clone leaves the original's volatile, durable
// and pending state as it was, so every crash state can be tried on a copy.
func TestCloneIsIndependent(t *testing.T) {
	f := New(Options{StrictDirs: true, TearUnit: 4})
	create(t, f, "/d", true)
	a := appendFile(t, f, "/d/a", "synced")
	must(t, f.Sync(a, false, false))
	appendFile(t, f, "/d/a", "+pending")
	appendFile(t, f, "/d/b", "new")
	before, durable, pend := f.Dump(), f.DumpDurable(), f.Pending()

	c := f.Clone()
	c.Crash(&script{vals: []int{1, 1, 1}}, true) // /d kept, /d/a kept, its pending write lost
	if after, _ := read(t, c, "/d/a"); after != "synced" {
		t.Fatalf("clone after crash: /d/a = %q, want the synced content", after)
	}
	c.Discard()
	if f.Dump() != before || f.DumpDurable() != durable || !slices.Equal(f.Pending(), pend) {
		t.Fatalf("crashing the clone changed the original:\n%s\nwas\n%s", f.Dump(), before)
	}
	// The original still crashes to everything kept.
	f.Crash(&script{vals: []int{1, 2, 0, 0}}, false)
	if got, _ := read(t, f, "/d/a"); got != "synced+pending" {
		t.Fatalf("original after crash: /d/a = %q", got)
	}
}

// TestPendingOrderAndDecisions: Pending lists ops by issue order across files and
// directories, and Crash asks a Decider about each of them, naming it by that order.
func TestPendingOrderAndDecisions(t *testing.T) {
	f := New(Options{StrictDirs: true, TearUnit: 4})
	x := appendFile(t, f, "/x", "0123456789") // create /x (ns op 1), write (2)
	appendFile(t, f, "/y", "ab")              // create /y (3), write (4)
	must(t, f.Truncate(x, 3))                 // truncate (5)
	p := f.Pending()
	var seqs []uint64
	for _, op := range p {
		seqs = append(seqs, op.Seq)
	}
	if !slices.Equal(seqs, []uint64{1, 2, 3, 4, 5}) || !p[0].Dir || p[1].Dir || p[1].Cuts != 2 || p[3].Cuts != 0 {
		t.Fatalf("Pending() = %+v", p)
	}
	// The root keeps its first namespace op only; /x's write is torn at its second
	// tear point (8 bytes), its truncate lost.
	s := &script{vals: []int{1, 2, 1, 1}}
	f.Crash(s, true)
	kinds := []DecisionKind{}
	for _, d := range s.got {
		kinds = append(kinds, d.Kind)
	}
	if !slices.Equal(kinds, []DecisionKind{NsPrefix, Write, TearCut, Truncate}) || !slices.Equal(s.got[0].Seqs, []uint64{1, 3}) || s.got[1].Seq != 2 || s.got[1].N != 3 {
		t.Fatalf("decisions %+v", s.got)
	}
	if got, ok := read(t, f, "/x"); !ok || got != "01234567" {
		t.Fatalf("/x = %q, %v; want the write torn at 8 bytes", got, ok)
	}
	if _, ok := read(t, f, "/y"); ok {
		t.Fatal("/y survived although its create was not kept")
	}
}

// TestPickRefusesOutOfRange: a Decider's answer outside [0, N) is a broken invariant.
func TestPickRefusesOutOfRange(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Pick(&script{vals: []int{2}}, Decision{Kind: Truncate, N: 2})
}

// TestDurableImage: equal durable trees hash alike, and pending data does not count.
func TestDurableImage(t *testing.T) {
	f, g := New(Options{}), New(Options{})
	must(t, f.Sync(appendFile(t, f, "/a", "x"), false, false))
	must(t, g.Sync(appendFile(t, g, "/a", "x"), false, false))
	appendFile(t, g, "/a", "pending")
	if f.DurableImage() != g.DurableImage() {
		t.Fatal("same durable tree, different images")
	}
	must(t, g.Sync(appendFile(t, g, "/a", ""), false, false))
	if f.DurableImage() == g.DurableImage() {
		t.Fatal("different durable trees, same image")
	}
}
