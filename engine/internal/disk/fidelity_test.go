package disk

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestTearUnit: with a tear unit, a crash cuts a pending write only at file offsets
// that are multiples of the unit, and a write inside one unit is kept whole or lost.
func TestTearUnit(t *testing.T) {
	for _, tc := range []struct {
		unit     int64
		off, n   int
		wantCuts []int // possible torn lengths of the file, besides off (dropped) and off+n (kept)
	}{
		{512, 100, 15, nil},
		{512, 500, 30, []int{512}},
		{512, 0, 2000, []int{512, 1024, 1536}},
		{512, 0, 1024, []int{512}},
		{1, 3, 4, []int{4, 5, 6}},
	} {
		t.Run(fmt.Sprintf("unit%d@%d+%d", tc.unit, tc.off, tc.n), func(t *testing.T) {
			sizes := map[int]int{}
			for seed := range uint64(400) {
				f := New(Options{TearUnit: tc.unit})
				ino := create(t, f, "/f", false)
				if tc.off > 0 {
					_, err := f.WriteAt(ino, make([]byte, tc.off), 0)
					must(t, err)
					must(t, f.Sync(ino, false, false))
				}
				_, err := f.WriteAt(ino, bytesOf('x', tc.n), int64(tc.off))
				must(t, err)
				f.Crash(rng(seed), true)
				sizes[len(readIno(t, f, ino))]++
			}
			want := append([]int{tc.off, tc.off + tc.n}, tc.wantCuts...)
			slices.Sort(want)
			if got := slices.Sorted(maps.Keys(sizes)); !slices.Equal(got, want) {
				t.Fatalf("sizes after crash %v, want %v (%v)", got, want, sizes)
			}
		})
	}
}

// TestCutPoint: a crash during a write lands 0 bytes or a prefix ending on a unit
// boundary; with unit 1 it draws exactly as before (r.IntN(n)).
func TestCutPoint(t *testing.T) {
	f := New(Options{TearUnit: 512})
	got := map[int]bool{}
	for seed := range uint64(300) {
		got[f.CutPoint(rng(seed), 500, 1100)] = true
	}
	if want := []int{0, 12, 524, 1036}; !slices.Equal(slices.Sorted(maps.Keys(got)), want) {
		t.Fatalf("cuts %v, want %v", slices.Sorted(maps.Keys(got)), want)
	}
	if k := f.CutPoint(rng(1), 10, 20); k != 0 {
		t.Fatalf("write inside a sector cut at %d", k)
	}
	one := New(Options{TearUnit: 1})
	for seed := range uint64(50) {
		if a, b := one.CutPoint(rng(seed), 7, 40), rng(seed).IntN(40); a != b {
			t.Fatalf("seed %d: unit 1 cut %d, want %d", seed, a, b)
		}
	}
}

func bytesOf(c byte, n int) []byte { return []byte(strings.Repeat(string(c), n)) }

// TestRenameExactlyOnePlace: under StrictDirs, whatever the sequence of renames, syncs
// and crashes, a file whose entry was durable is afterwards in exactly one directory,
// and a renamed directory whose own entries were never synced may come back empty.
func TestRenameExactlyOnePlace(t *testing.T) {
	dirs := []string{"/a", "/b", "/c"}
	for _, opts := range []Options{{StrictDirs: true}, {}} {
		for seed := range uint64(200) {
			r := rng(seed + 77)
			f := New(opts)
			for _, d := range dirs {
				create(t, f, d, true)
			}
			must(t, f.Sync(RootIno, false, false))
			// Tracked files, each durable in its directory at the start.
			var tracked []Ino
			for i := range 4 {
				p := fmt.Sprintf("%s/f%d", dirs[i%len(dirs)], i)
				tracked = append(tracked, create(t, f, p, false))
			}
			for _, d := range dirs {
				ino, _ := f.Lookup(d)
				must(t, f.Sync(ino, false, false))
			}
			nextName := 0
			for step := range 60 {
				switch r.IntN(6) {
				case 0, 1, 2: // move a tracked file to a fresh name in some directory
					ino := tracked[r.IntN(len(tracked))]
					from := pathOf(f, ino)
					nextName++
					to := fmt.Sprintf("%s/g%d", dirs[r.IntN(len(dirs))], nextName)
					must(t, f.Rename(from, to))
				case 3: // sync a directory
					ino, _ := f.Lookup(dirs[r.IntN(len(dirs))])
					fail := r.IntN(8) == 0
					f.Sync(ino, false, fail) // sometimes an injected EIO
				case 4: // unrelated churn
					nextName++
					p := fmt.Sprintf("%s/t%d", dirs[r.IntN(len(dirs))], nextName)
					create(t, f, p, false)
					if r.IntN(2) == 0 {
						must(t, f.Unlink(p))
					}
				case 5:
					if r.IntN(3) == 0 {
						f.Crash(r, true)
						checkInvariants(t, f)
						for _, ino := range tracked {
							if n := countNames(f, ino); n != 1 {
								t.Fatalf("opts %+v seed %d step %d: file ino %d in %d places after crash", opts, seed, step, ino, n)
							}
						}
					}
				}
				checkInvariants(t, f)
			}
		}
	}
}

// pathOf finds the volatile path of a file inode by walking the tree.
func pathOf(f *FS, ino Ino) string {
	var walk func(d Ino, prefix string) string
	walk = func(d Ino, prefix string) string {
		ents, _ := f.ReadDir(d)
		for _, e := range ents {
			if e.Ino == ino {
				return prefix + "/" + e.Name
			}
			if e.Dir {
				if p := walk(e.Ino, prefix+"/"+e.Name); p != "" {
					return p
				}
			}
		}
		return ""
	}
	return walk(RootIno, "")
}

func countNames(f *FS, ino Ino) int {
	n := 0
	var walk func(d Ino)
	walk = func(d Ino) {
		ents, _ := f.ReadDir(d)
		for _, e := range ents {
			if e.Ino == ino {
				n++
			}
			if e.Dir {
				walk(e.Ino)
			}
		}
	}
	walk(RootIno)
	return n
}

// TestLinkAndNlink: hard links share an inode and count in nlink; an unlinked open file
// has nlink 0; directories count 2 plus their subdirectories, as on Linux.
func TestLinkAndNlink(t *testing.T) {
	f := New(Options{})
	ino := appendFile(t, f, "/f", "data")
	must(t, f.Link("/f", "/g"))
	if st, _ := f.Stat(ino); st.Nlink != 2 {
		t.Fatalf("nlink after link %d, want 2", st.Nlink)
	}
	if s, _ := read(t, f, "/g"); s != "data" {
		t.Fatalf("/g reads %q", s)
	}
	if err := f.Link("/f", "/g"); err != EEXIST {
		t.Fatalf("link onto existing name: %v, want EEXIST", err)
	}
	create(t, f, "/d", true)
	if err := f.Link("/d", "/e"); err != EPERM {
		t.Fatalf("link of a directory: %v, want EPERM", err)
	}
	if err := f.Link("/missing", "/h"); err != ENOENT {
		t.Fatalf("link of a missing file: %v, want ENOENT", err)
	}
	must(t, f.Unlink("/f"))
	must(t, f.Unlink("/g"))
	if st, _ := f.Stat(ino); st.Nlink != 0 {
		t.Fatalf("nlink after unlinking both names %d, want 0", st.Nlink)
	}
	create(t, f, "/d/x", true)
	create(t, f, "/d/y", false)
	d, _ := f.Lookup("/d")
	if st, _ := f.Stat(d); st.Nlink != 3 {
		t.Fatalf("directory with one subdirectory: nlink %d, want 3", st.Nlink)
	}
	// Both names survive a crash once durable (default mode: at once).
	g := New(Options{})
	ino = appendFile(t, g, "/f", "v")
	must(t, g.Sync(ino, false, false))
	must(t, g.Link("/f", "/g"))
	g.Crash(rng(1), true)
	if st, _ := g.Stat(ino); st.Nlink != 2 {
		t.Fatalf("nlink after crash %d, want 2", st.Nlink)
	}
}

// TestTimes: mtime and ctime follow the clock on writes, atime on reads (relatime).
func TestTimes(t *testing.T) {
	now := int64(1000)
	f := New(Options{Now: func() int64 { return now }})
	ino := create(t, f, "/f", false)
	st, _ := f.Stat(ino)
	if st.Mtime != 1000 || st.Ctime != 1000 || st.Atime != 1000 {
		t.Fatalf("times at create %+v", st)
	}
	now = 2000
	_, err := f.WriteAt(ino, []byte("x"), 0)
	must(t, err)
	st, _ = f.Stat(ino)
	if st.Mtime != 2000 || st.Ctime != 2000 || st.Atime != 1000 {
		t.Fatalf("times after write %+v", st)
	}
	root, _ := f.Stat(RootIno)
	if root.Mtime != 1000 {
		t.Fatalf("root mtime %d, want 1000 (create)", root.Mtime)
	}
	now = 3000
	f.ReadAt(ino, make([]byte, 1), 0)
	if st, _ = f.Stat(ino); st.Atime != 3000 {
		t.Fatalf("atime after read %d, want 3000", st.Atime)
	}
	now = 4000
	f.ReadAt(ino, make([]byte, 1), 0)
	if st, _ = f.Stat(ino); st.Atime != 3000 {
		t.Fatalf("relatime: atime moved to %d on a second read", st.Atime)
	}
	must(t, f.Rename("/f", "/g"))
	if root, _ = f.Stat(RootIno); root.Mtime != 4000 {
		t.Fatalf("root mtime after rename %d, want 4000", root.Mtime)
	}
	if st, _ = f.Stat(ino); st.Ctime != 4000 || st.Mtime != 2000 {
		t.Fatalf("rename: ctime %d mtime %d, want 4000 2000", st.Ctime, st.Mtime)
	}
}

// TestFileLimit: Options.MaxFileBytes caps one file.
func TestFileLimit(t *testing.T) {
	f := New(Options{MaxFileBytes: 100})
	ino := create(t, f, "/f", false)
	if _, err := f.WriteAt(ino, make([]byte, 100), 0); err != nil {
		t.Fatalf("write up to the limit: %v", err)
	}
	if _, err := f.WriteAt(ino, []byte("x"), 100); err != EFBIG {
		t.Fatalf("write past the limit: %v, want EFBIG", err)
	}
	if err := f.Truncate(ino, 101); err != EFBIG {
		t.Fatalf("truncate past the limit: %v, want EFBIG", err)
	}
	if f.MaxFileBytes() != 100 || New(Options{}).MaxFileBytes() != MaxFileSize {
		t.Fatal("MaxFileBytes")
	}
}
