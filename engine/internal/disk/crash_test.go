package disk

import (
	"strings"
	"testing"
)

func TestCrashData(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*FS)
		// want maps each acceptable /f content to whether it must occur for
		// some of the 200 seeds.
		want map[string]bool
	}{
		{"synced survives", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "durable"), false, false))
		}, map[string]bool{"durable": true}},
		{"datasync survives", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "durable"), true, false))
		}, map[string]bool{"durable": true}},
		{"unsynced kept or dropped", func(f *FS) {
			appendFile(t, f, "/f", "volatile")
		}, map[string]bool{"": true, "volatile": true}},
		{"unsynced tail after synced head", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "head"), false, false))
			appendFile(t, f, "/f", "tail")
		}, map[string]bool{"head": true, "headtail": true}},
		{"size outlives data", func(f *FS) {
			ino := appendFile(t, f, "/f", "")
			f.WriteAt(ino, []byte("AA"), 0)
			f.WriteAt(ino, []byte("BB"), 4)
		}, map[string]bool{"": true, "AA": true, "\x00\x00\x00\x00BB": true, "AA\x00\x00BB": true}},
		{"unsynced truncate", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "abcdef"), false, false))
			ino, _ := f.Lookup("/f")
			must(t, f.Truncate(ino, 2))
		}, map[string]bool{"abcdef": true, "ab": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := outcomes(t, 200, Options{}, false, tc.setup, func(f *FS) string {
				s, ok := read(t, f, "/f")
				if !ok {
					return "<missing>"
				}
				return s
			})
			for s, n := range got {
				if _, ok := tc.want[s]; !ok {
					t.Errorf("unexpected content %q (%d seeds)", s, n)
				}
			}
			for s, needed := range tc.want {
				if needed && got[s] == 0 {
					t.Errorf("content %q never occurred: %v", s, got)
				}
			}
		})
	}
}

func TestTornWrites(t *testing.T) {
	const data = "0123456789abcdef"
	for _, torn := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[torn], func(t *testing.T) {
			tornSeeds := 0
			for seed := range uint64(500) {
				f := New(Options{})
				appendFile(t, f, "/f", data)
				rep := f.Crash(rng(seed), torn)
				got, _ := read(t, f, "/f")
				isTorn := len(got) > 0 && len(got) < len(data)
				if !strings.HasPrefix(data, got) {
					t.Fatalf("seed %d: %q is not a prefix of the write", seed, got)
				}
				if isTorn != (rep.WritesTorn == 1) {
					t.Fatalf("seed %d: content %q but report %v", seed, got, rep)
				}
				if isTorn && rep.TornBytesKept+rep.TornBytesLost != int64(len(data)) {
					t.Fatalf("seed %d: torn byte counts %v", seed, rep)
				}
				if isTorn {
					tornSeeds++
				}
			}
			if !torn && tornSeeds > 0 {
				t.Fatalf("%d torn writes without torn=true", tornSeeds)
			}
			if torn && tornSeeds == 0 {
				t.Fatal("no torn write in 500 seeds with torn=true")
			}
		})
	}
	t.Run("one-byte writes never tear", func(t *testing.T) {
		for seed := range uint64(100) {
			f := New(Options{})
			appendFile(t, f, "/f", "x")
			if rep := f.Crash(rng(seed), true); rep.WritesTorn != 0 {
				t.Fatalf("seed %d: %v", seed, rep)
			}
		}
	})
}

func TestFsyncEIO(t *testing.T) {
	cases := []struct {
		name  string
		setup func(f *FS, ino Ino)
		want  string
	}{
		{"write lost by failed sync is not persisted by a later sync", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("A"), 0)
			if err := f.Sync(ino, false, true); err != EIO {
				t.Fatalf("failed sync = %v, want EIO", err)
			}
			if got := readIno(t, f, ino); got != "A" {
				t.Fatalf("after EIO volatile = %q, want still readable", got)
			}
			must(t, f.Sync(ino, false, false))
		}, ""},
		{"write after failed sync is persisted", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("A"), 0)
			f.Sync(ino, false, true)
			f.WriteAt(ino, []byte("B"), 1)
			must(t, f.Sync(ino, false, false))
		}, "\x00B"},
		{"earlier synced data stays", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("S"), 0)
			must(t, f.Sync(ino, false, false))
			f.WriteAt(ino, []byte("A"), 1)
			f.Sync(ino, true, true)
			must(t, f.Sync(ino, true, false))
		}, "S"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(50) {
				f := New(Options{})
				ino := create(t, f, "/f", false)
				tc.setup(f, ino)
				f.Crash(rng(seed), true)
				if got, _ := read(t, f, "/f"); got != tc.want {
					t.Fatalf("seed %d: after crash %q, want %q", seed, got, tc.want)
				}
			}
		})
	}
}

func TestDefaultNamespaceDurable(t *testing.T) {
	// paths lists the named paths of a Dump, without contents.
	paths := func(dump string) string {
		var out []string
		for _, l := range strings.Split(dump, "\n") {
			if strings.HasPrefix(l, "/") {
				out = append(out, strings.Fields(l)[0])
			}
		}
		return strings.Join(out, " ")
	}
	cases := []struct {
		name  string
		setup func(*FS)
		want  string
	}{
		{"create is durable but empty", func(f *FS) {
			appendFile(t, f, "/f", "unsynced")
		}, "/ /f"},
		{"mkdir and rename", func(f *FS) {
			create(t, f, "/d", true)
			must(t, f.Sync(appendFile(t, f, "/d/tmp", "v2"), false, false))
			must(t, f.Rename("/d/tmp", "/d/cur"))
			must(t, f.Rename("/d", "/e"))
		}, "/ /e /e/cur"},
		{"unlink and rmdir", func(f *FS) {
			create(t, f, "/d", true)
			appendFile(t, f, "/d/f", "x")
			appendFile(t, f, "/g", "x")
			must(t, f.Unlink("/d/f"))
			must(t, f.Rmdir("/d"))
		}, "/ /g"},
		{"rename dir over empty dir", func(f *FS) {
			create(t, f, "/a", true)
			create(t, f, "/b", true)
			appendFile(t, f, "/a/f", "x")
			must(t, f.Rename("/a", "/b"))
		}, "/ /b /b/f"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(50) {
				f := New(Options{})
				tc.setup(f)
				if got := paths(f.Dump()); got != tc.want {
					t.Fatalf("before crash: %s, want %s", got, tc.want)
				}
				f.Crash(rng(seed), true)
				if got := paths(f.Dump()); got != tc.want {
					t.Fatalf("seed %d: after crash %s, want %s", seed, got, tc.want)
				}
			}
		})
	}
	t.Run("rename result content", func(t *testing.T) {
		for seed := range uint64(50) {
			f := New(Options{})
			must(t, f.Sync(appendFile(t, f, "/cur", "v1"), false, false))
			must(t, f.Sync(appendFile(t, f, "/tmp", "v2"), false, false))
			must(t, f.Rename("/tmp", "/cur"))
			f.Crash(rng(seed), true)
			if got, _ := read(t, f, "/cur"); got != "v2" {
				t.Fatalf("seed %d: /cur = %q", seed, got)
			}
			if _, ok := read(t, f, "/tmp"); ok {
				t.Fatalf("seed %d: /tmp survived", seed)
			}
		}
	})
}

func TestStrictDirs(t *testing.T) {
	strict := Options{StrictDirs: true}
	exists := func(path string) func(*FS) string {
		return func(f *FS) string {
			s, ok := read(t, f, path)
			if !ok {
				return "missing"
			}
			return "present:" + s
		}
	}
	cases := []struct {
		name  string
		setup func(*FS)
		check func(*FS) string
		want  map[string]bool // acceptable outcomes; true = must occur
	}{
		{"file synced, dir not: may vanish", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "data"), false, false))
		}, exists("/f"), map[string]bool{"missing": true, "present:data": true}},
		{"file and dir synced: never vanishes", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "data"), false, false))
			must(t, f.Sync(RootIno, false, false))
		}, exists("/f"), map[string]bool{"present:data": true}},
		{"dir synced before data: present, data may be lost", func(f *FS) {
			appendFile(t, f, "/f", "data")
			must(t, f.Sync(RootIno, false, false))
		}, exists("/f"), map[string]bool{"present:": true, "present:data": true}},
		{"unlink not durable until dir sync", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "data"), false, false))
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Unlink("/f"))
		}, exists("/f"), map[string]bool{"missing": true, "present:data": true}},
		{"unlink durable after dir sync", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "data"), false, false))
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Unlink("/f"))
			must(t, f.Sync(RootIno, false, false))
		}, exists("/f"), map[string]bool{"missing": true}},
		{"new dir needs its parent synced", func(f *FS) {
			d := create(t, f, "/d", true)
			must(t, f.Sync(appendFile(t, f, "/d/f", "x"), false, false))
			must(t, f.Sync(d, false, false))
		}, exists("/d/f"), map[string]bool{"missing": true, "present:x": true}},
		{"whole chain synced", func(f *FS) {
			d := create(t, f, "/d", true)
			must(t, f.Sync(appendFile(t, f, "/d/f", "x"), false, false))
			must(t, f.Sync(d, false, false))
			must(t, f.Sync(RootIno, false, false))
		}, exists("/d/f"), map[string]bool{"present:x": true}},
		{"dir renamed with unsynced entries comes back empty", func(f *FS) {
			create(t, f, "/d", true)
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Sync(appendFile(t, f, "/d/f", "x"), false, false))
			must(t, f.Rename("/d", "/e"))
			must(t, f.Sync(RootIno, false, false))
		}, func(f *FS) string {
			if _, err := f.Lookup("/d"); err == nil {
				return "old name"
			}
			ino, err := f.Lookup("/e")
			if err != nil {
				return "new name missing"
			}
			ents, _ := f.ReadDir(ino)
			if len(ents) == 0 {
				return "empty"
			}
			s, _ := read(t, f, "/e/f")
			return "has f:" + s
		}, map[string]bool{"empty": true, "has f:x": true}},
		{"dir renamed after its entries were synced keeps them", func(f *FS) {
			d := create(t, f, "/d", true)
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Sync(appendFile(t, f, "/d/f", "x"), false, false))
			must(t, f.Sync(d, false, false))
			must(t, f.Rename("/d", "/e"))
			must(t, f.Sync(RootIno, false, false))
		}, exists("/e/f"), map[string]bool{"present:x": true}},
		{"cross-dir rename pending in both: exactly one place", func(f *FS) {
			a := create(t, f, "/a", true)
			create(t, f, "/b", true)
			must(t, f.Sync(appendFile(t, f, "/a/f", "x"), false, false))
			must(t, f.Sync(a, false, false))
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Rename("/a/f", "/b/f"))
		}, func(f *FS) string {
			_, inA := read(t, f, "/a/f")
			_, inB := read(t, f, "/b/f")
			return map[bool]string{true: "a", false: "-"}[inA] + map[bool]string{true: "b", false: "-"}[inB]
		}, map[string]bool{"a-": true, "-b": true}},
		{"cross-dir rename durable once either dir is synced", func(f *FS) {
			a := create(t, f, "/a", true)
			create(t, f, "/b", true)
			must(t, f.Sync(appendFile(t, f, "/a/f", "x"), false, false))
			must(t, f.Sync(a, false, false))
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Rename("/a/f", "/b/f"))
			must(t, f.Sync(a, false, false))
		}, func(f *FS) string {
			_, inA := read(t, f, "/a/f")
			_, inB := read(t, f, "/b/f")
			return map[bool]string{true: "a", false: "-"}[inA] + map[bool]string{true: "b", false: "-"}[inB]
		}, map[string]bool{"-b": true}},
		{"same-dir rename is atomic", func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/cur", "v1"), false, false))
			must(t, f.Sync(appendFile(t, f, "/tmp", "v2"), false, false))
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Rename("/tmp", "/cur"))
		}, func(f *FS) string {
			cur, _ := read(t, f, "/cur")
			_, tmp := read(t, f, "/tmp")
			return cur + map[bool]string{true: "+tmp", false: ""}[tmp]
		}, map[string]bool{"v1+tmp": true, "v2": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := outcomes(t, 200, strict, false, tc.setup, tc.check)
			for s, n := range got {
				if _, ok := tc.want[s]; !ok {
					t.Errorf("unexpected outcome %q (%d seeds)", s, n)
				}
			}
			for s, needed := range tc.want {
				if needed && got[s] == 0 {
					t.Errorf("outcome %q never occurred: %v", s, got)
				}
			}
		})
	}
}

// TestMutations checks that each mutation operator produces a crash outcome
// the correct model never produces: the negative control for durability
// tests written against this package.
func TestMutations(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Options)
		base   Options
		setup  func(*FS)
		// bad reports an outcome the unmutated model must never give.
		bad func(*FS) bool
	}{
		{"FsyncNoop", func(o *Options) { o.FsyncNoop = true }, Options{}, func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "data"), false, false))
		}, func(f *FS) bool { s, _ := read(t, f, "/f"); return s != "data" }},
		{"FdatasyncNoop", func(o *Options) { o.FdatasyncNoop = true }, Options{}, func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "data"), true, false))
		}, func(f *FS) bool { s, _ := read(t, f, "/f"); return s != "data" }},
		{"DirFsyncNoop", func(o *Options) { o.DirFsyncNoop = true }, Options{StrictDirs: true}, func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/f", "data"), false, false))
			must(t, f.Sync(RootIno, false, false))
		}, func(f *FS) bool { _, ok := read(t, f, "/f"); return !ok }},
		{"RenameNonAtomic", func(o *Options) { o.RenameNonAtomic = true }, Options{}, func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/cur", "v1"), false, false))
			must(t, f.Sync(appendFile(t, f, "/tmp", "v2"), false, false))
			must(t, f.Rename("/tmp", "/cur"))
			if s, _ := read(t, f, "/cur"); s != "v2" {
				t.Fatalf("volatile /cur = %q", s)
			}
		}, func(f *FS) bool { s, _ := read(t, f, "/cur"); return s != "v2" }},
		{"RenameNonAtomic strict", func(o *Options) { o.RenameNonAtomic = true }, Options{StrictDirs: true}, func(f *FS) {
			must(t, f.Sync(appendFile(t, f, "/cur", "v1"), false, false))
			must(t, f.Sync(appendFile(t, f, "/tmp", "v2"), false, false))
			must(t, f.Sync(RootIno, false, false))
			must(t, f.Rename("/tmp", "/cur"))
		}, func(f *FS) bool {
			_, cur := read(t, f, "/cur")
			_, tmp := read(t, f, "/tmp")
			return !cur && !tmp
		}},
		{"ReorderSync", func(o *Options) { o.ReorderSync = true }, Options{}, func(f *FS) {
			ino := appendFile(t, f, "/f", "a")
			f.WriteAt(ino, []byte("b"), 5)
			must(t, f.Sync(ino, false, false))
		}, func(f *FS) bool { s, _ := read(t, f, "/f"); return s != "a\x00\x00\x00\x00b" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mutated := tc.base
			tc.mutate(&mutated)
			for _, m := range []struct {
				opts Options
				want bool // some seed gives a bad outcome
			}{{tc.base, false}, {mutated, true}} {
				badSeeds := 0
				for seed := range uint64(200) {
					f := New(m.opts)
					tc.setup(f)
					f.Crash(rng(seed), true)
					if tc.bad(f) {
						badSeeds++
					}
				}
				if (badSeeds > 0) != m.want {
					t.Errorf("opts %+v: %d of 200 seeds bad, want any=%v", m.opts, badSeeds, m.want)
				}
			}
		})
	}
	t.Run("FdatasyncNoop leaves fsync working", func(t *testing.T) {
		for seed := range uint64(100) {
			f := New(Options{FdatasyncNoop: true})
			must(t, f.Sync(appendFile(t, f, "/f", "data"), false, false))
			f.Crash(rng(seed), true)
			if s, _ := read(t, f, "/f"); s != "data" {
				t.Fatalf("seed %d: %q", seed, s)
			}
		}
	})
	t.Run("ReorderSync persists the earlier ops", func(t *testing.T) {
		f := New(Options{ReorderSync: true})
		ino := appendFile(t, f, "/f", "a")
		f.WriteAt(ino, []byte("b"), 5)
		must(t, f.Sync(ino, false, false))
		if got := f.DumpDurable(); !strings.Contains(got, `head="a"`) {
			t.Fatalf("durable after reordered sync:\n%s", got)
		}
	})
}

func TestCrashAccounting(t *testing.T) {
	// After a crash the footprint equals the pages of the surviving files.
	for seed := range uint64(20) {
		f := New(Options{StrictDirs: true})
		scenario(t, f)
		f.Crash(rng(seed), true)
		// Sum each reachable file once: a rename persisted in both
		// directories leaves two names for one inode.
		var want int64
		seen := map[Ino]bool{}
		var walk func(Ino)
		walk = func(dir Ino) {
			ents, err := f.ReadDir(dir)
			must(t, err)
			for _, e := range ents {
				if seen[e.Ino] {
					continue
				}
				seen[e.Ino] = true
				if e.Dir {
					walk(e.Ino)
					continue
				}
				st, err := f.Stat(e.Ino)
				must(t, err)
				// A file whose writes were all lost but whose truncate
				// survived is a hole: it spans pages but holds none.
				pages := f.inodes[e.Ino].data.pages()
				if spans := (st.Size + PageSize - 1) / PageSize; pages > spans {
					t.Fatalf("seed %d: ino %d of size %d holds %d pages", seed, e.Ino, st.Size, pages)
				}
				want += pages * PageSize
			}
		}
		walk(RootIno)
		if f.Used() != want {
			t.Fatalf("seed %d: Used = %d, want %d\n%s", seed, f.Used(), want, f.Dump())
		}
	}
}

func TestWriteAtPartial(t *testing.T) {
	kept := 0
	for seed := range uint64(100) {
		f := New(Options{})
		ino := create(t, f, "/f", false)
		n, err := f.WriteAtPartial(ino, []byte("abcdef"), 0, 3)
		if err != nil || n != 3 {
			t.Fatalf("WriteAtPartial = %d, %v", n, err)
		}
		if got := readIno(t, f, ino); got != "abc" {
			t.Fatalf("volatile %q", got)
		}
		f.Crash(rng(seed), false)
		switch got, _ := read(t, f, "/f"); got {
		case "abc":
			kept++
		case "":
		default:
			t.Fatalf("seed %d: %q", seed, got)
		}
	}
	if kept == 0 {
		t.Fatal("partial write never kept")
	}
	f := New(Options{})
	ino := create(t, f, "/f", false)
	if _, err := f.WriteAtPartial(ino, []byte("ab"), 0, 3); err != EINVAL {
		t.Fatalf("n > len(p): %v", err)
	}
}
