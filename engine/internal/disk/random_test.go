package disk

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
)

// scenario exercises every kind of pending state for determinism checks.
func scenario(t testing.TB, f *FS) {
	d := create(t, f, "/d", true)
	for i := range 20 {
		name := "/d/f" + string(rune('a'+i))
		ino := appendFile(t, f, name, strings.Repeat(string(rune('A'+i)), 10+i))
		if i%3 == 0 {
			must(t, f.Sync(ino, false, false))
		}
		f.WriteAt(ino, []byte("overwrite"), 3)
		if i%4 == 0 {
			f.Truncate(ino, 5)
		}
		if i%5 == 0 {
			must(t, f.Rename(name, name+".renamed"))
		}
	}
	must(t, f.Sync(d, false, false))
	create(t, f, "/e", true)
	must(t, f.Rename("/d/fb", "/e/fb"))
	must(t, f.Unlink("/d/fc"))
}

func TestDeterminism(t *testing.T) {
	for _, opts := range []Options{{}, {StrictDirs: true}} {
		for seed := range uint64(20) {
			var dumps [2]string
			var reps [2]CrashReport
			for i := range dumps {
				f := New(opts)
				scenario(t, f)
				reps[i] = f.Crash(rng(seed), true)
				dumps[i] = f.Dump()
			}
			if dumps[0] != dumps[1] {
				t.Fatalf("strict=%v seed %d: dumps differ\n%s\n---\n%s", opts.StrictDirs, seed, dumps[0], dumps[1])
			}
			if reps[0].String() != reps[1].String() || strings.Join(reps[0].Lines, "\n") != strings.Join(reps[1].Lines, "\n") {
				t.Fatalf("seed %d: reports differ", seed)
			}
		}
	}
	// Different seeds must be able to give different disks.
	seen := map[string]bool{}
	for seed := range uint64(20) {
		f := New(Options{StrictDirs: true})
		scenario(t, f)
		f.Crash(rng(seed), true)
		seen[f.Dump()] = true
	}
	if len(seen) < 2 {
		t.Fatal("all seeds gave the same disk")
	}
}

// checkInvariants recomputes the FS's bookkeeping from scratch.
func checkInvariants(t testing.TB, f *FS) {
	t.Helper()
	var used int64
	nlink, drefs := map[Ino]int{RootIno: 1}, map[Ino]int{RootIno: 1}
	for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
		in := f.inodes[ino]
		var pb int64
		for _, op := range in.pending {
			pb += int64(len(op.data))
		}
		if pb != in.pendingBytes {
			t.Fatalf("ino %d: pendingBytes %d, want %d", ino, in.pendingBytes, pb)
		}
		used += in.footprint()
		if !in.dir {
			continue
		}
		for _, c := range in.entries {
			nlink[c]++
		}
		for _, c := range in.dentries {
			drefs[c]++
		}
		for _, op := range in.nspending {
			if op.ino != 0 {
				drefs[op.ino]++
			}
		}
	}
	if used != f.used {
		t.Fatalf("used %d, want %d", f.used, used)
	}
	// The two halves of a cross-directory rename are pending together or not at all.
	halves := map[uint64]int{}
	for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
		for _, op := range f.inodes[ino].nspending {
			if op.pair != 0 {
				halves[op.pair]++
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(halves)) {
		if halves[p] != 2 {
			t.Fatalf("rename pair %d has %d pending halves, want 2", p, halves[p])
		}
	}
	for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
		in := f.inodes[ino]
		if in.nlink != nlink[ino] {
			t.Fatalf("ino %d: nlink %d, want %d", ino, in.nlink, nlink[ino])
		}
		// Entries of released directories may over-count (see Release).
		if in.drefs < drefs[ino] {
			t.Fatalf("ino %d: drefs %d, want >= %d", ino, in.drefs, drefs[ino])
		}
	}
}

// TestRandomOps drives random operation sequences and checks bookkeeping
// invariants after every step and after crashes.
func TestRandomOps(t *testing.T) {
	names := []string{"/a", "/b", "/d/a", "/d/b", "/d/e/a", "/d", "/d/e"}
	for _, opts := range []Options{{}, {StrictDirs: true}, {StrictDirs: true, RenameNonAtomic: true, ReorderSync: true}, {MaxBytes: 3 * PageSize}} {
		for seed := range uint64(30) {
			r := rng(seed + 1000)
			f := New(opts)
			var open []Ino
			for step := range 300 {
				p := names[r.IntN(len(names))]
				q := names[r.IntN(len(names))]
				switch r.IntN(10) {
				case 0:
					if ino, err := f.Create(p, r.IntN(3) == 0); err == nil {
						open = append(open, ino)
					}
				case 1:
					f.Unlink(p)
				case 2:
					f.Rmdir(p)
				case 3:
					if r.IntN(4) == 0 {
						f.Link(p, q)
					} else {
						f.Rename(p, q)
					}
				case 4, 5:
					if len(open) > 0 {
						// Offsets up to 4 pages, so writes span, share and
						// fill pages and hit MaxBytes.
						f.WriteAt(open[r.IntN(len(open))], make([]byte, r.IntN(40)), int64(r.IntN(60)*(1+r.IntN(2)*300)))
					}
				case 6:
					if len(open) > 0 {
						f.Truncate(open[r.IntN(len(open))], int64(r.IntN(50)*(1+r.IntN(2)*300)))
					}
				case 7:
					if len(open) > 0 {
						f.Sync(open[r.IntN(len(open))], r.IntN(2) == 0, r.IntN(5) == 0)
					}
				case 8:
					if len(open) > 0 {
						i := r.IntN(len(open))
						f.Release(open[i])
						open = slices.Delete(open, i, i+1)
					}
				case 9:
					if r.IntN(5) == 0 {
						f.Crash(r, true)
						open = nil
					}
				}
				checkInvariants(t, f)
				if opts.MaxBytes > 0 && f.Used() > opts.MaxBytes {
					t.Fatalf("seed %d step %d: Used %d > MaxBytes", seed, step, f.Used())
				}
			}
		}
	}
}

// BenchmarkAppendSync appends 100-byte records and syncs after each, the
// pattern of a write-ahead log. The file is truncated back to empty once it
// reaches the sub-benchmark's size, so "1MiB" measures the steady state and
// "64MiB" includes growing large buffers.
func BenchmarkAppendSync(b *testing.B) {
	for _, size := range []struct {
		name string
		max  int64
	}{{"1MiB", 1 << 20}, {"64MiB", 64 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			f := New(Options{MaxBytes: 1 << 40})
			ino := create(b, f, "/log", false)
			rec := bytes.Repeat([]byte("r"), 100)
			var off int64
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			for b.Loop() {
				if off >= size.max {
					must(b, f.Truncate(ino, 0))
					off = 0
				}
				if _, err := f.WriteAt(ino, rec, off); err != nil {
					b.Fatal(err)
				}
				off += int64(len(rec))
				if err := f.Sync(ino, false, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
