package engine

import (
	"math/rand/v2"
	"testing"
)

// TestMisdirect: a misdirected write lands at every other aligned offset that keeps it
// inside the file, never where it was meant to, and is appended when there is none.
func TestMisdirect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[int64]bool{}
	for range 500 {
		to := misdirect(r, 1024, 512, 4096, 512)
		if to == 1024 || to%512 != 0 || to+512 > 4096 || to < 0 {
			t.Fatalf("misdirected to %d", to)
		}
		seen[to] = true
	}
	if len(seen) != 7 {
		t.Fatalf("landed at %v, want the 7 other sectors", seen)
	}
	// Unaligned target: every aligned offset is another place.
	seen = map[int64]bool{}
	for range 200 {
		seen[misdirect(r, 100, 512, 2048, 512)] = true
	}
	if len(seen) != 4 {
		t.Fatalf("unaligned: landed at %v, want 0, 512, 1024 and 1536", seen)
	}
	for _, tc := range []struct{ off, n, size, want int64 }{
		{0, 512, 0, 512},       // empty file: appended, past where it was meant
		{0, 512, 512, 512},     // the only place is its own: appended
		{0, 1000, 700, 1024},   // larger than the file: appended at the next sector
		{512, 512, 512, 0},     // an append at the end: over the first sector
		{100, 4096, 600, 1024}, // appended, rounded up
	} {
		if got := misdirect(r, tc.off, tc.n, tc.size, 512); got != tc.want {
			t.Errorf("misdirect(off %d, n %d, size %d) = %d, want %d", tc.off, tc.n, tc.size, got, tc.want)
		}
	}
}

// TestMangle: a mangled sector always differs from what was written.
func TestMangle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		b := make([]byte, 512)
		if i%2 == 0 {
			for j := range b {
				b[j] = byte(j)
			}
		}
		orig := string(b)
		what := mangle(r, b)
		if string(b) == orig {
			t.Fatalf("mangle (%s) left the bytes unchanged", what)
		}
	}
}

// TestPickSector: the sector overlaps the range and is aligned.
func TestPickSector(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	seen := map[int64]bool{}
	for range 300 {
		s := pickSector(r, 700, 1000, 512)
		if s%512 != 0 || s+512 <= 700 || s >= 1700 {
			t.Fatalf("sector %d does not overlap [700, 1700)", s)
		}
		seen[s] = true
	}
	if len(seen) != 3 {
		t.Fatalf("sectors %v, want 512, 1024 and 1536", seen)
	}
}

// TestDeviceKindEntries: classes, the text form, spans and shrink's simplifications of
// the device fault kinds.
func TestDeviceKindEntries(t *testing.T) {
	for _, tc := range []struct {
		f           Fault
		class, text string
	}{
		{Fault{AtNS: 5, Kind: FaultReadEIO, Node: "s", ReadOp: 7, Incarnation: 2}, "disk-error", "5ns read_eio s at read #7"},
		{Fault{Kind: FaultCorruptRead, Node: "s", ReadOp: 1}, "corruption", "0s corrupt_read s at read #1"},
		{Fault{Kind: FaultCorrupt, Node: "s", DiskOp: 3}, "corruption", "0s corrupt s at disk op #3"},
		{Fault{Kind: FaultMisdirected, Node: "s", DiskOp: 3}, "corruption", "0s misdirected_write s at disk op #3"},
		{Fault{Kind: FaultLostWrite, Node: "s", DiskOp: 3}, "lost-write", "0s lost_write s at disk op #3"},
		{Fault{Kind: FaultWriteEIO, Node: "s"}, "disk-error", "0s write_eio s"},
		{Fault{Kind: FaultSlowIO, Node: "s", DiskOp: 9, LatencyNS: 4e6}, "slow-io", "0s slow_io s at disk op #9 +4ms"},
	} {
		if c := tc.f.Class(); c != tc.class {
			t.Errorf("%s: class %q, want %q", tc.f.Kind, c, tc.class)
		}
		if s := tc.f.String(); s != tc.text {
			t.Errorf("%s: text %q, want %q", tc.f.Kind, s, tc.text)
		}
		if !tc.f.isPinned() && (tc.f.DiskOp > 0 || tc.f.ReadOp > 0) {
			t.Errorf("%s: not pinned", tc.f.Kind)
		}
	}
	slow := Fault{Kind: FaultSlowIO, Node: "s", DiskOp: 9, LatencyNS: 4e6}
	if slow.Span() != 4e6 {
		t.Errorf("slow_io span %d", slow.Span())
	}
	if s := specOf(FaultSlowIO).simplify(slow); len(s) != 1 || s[0].LatencyNS != 2e6 {
		t.Errorf("slow_io simplifies to %v, want half the latency", s)
	}
	if s := specOf(FaultSlowIO).simplify(Fault{Kind: FaultSlowIO, LatencyNS: 1e6}); len(s) != 0 {
		t.Errorf("a 1ms stall simplifies to %v, want nothing", s)
	}
	if s := specOf(FaultWriteEIO).simplify(Fault{Kind: FaultWriteEIO, DiskOp: 3}); len(s) != 0 {
		t.Errorf("write_eio simplifies to %v", s)
	}
}
