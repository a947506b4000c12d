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
