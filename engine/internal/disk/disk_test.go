package disk

import (
	"bytes"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eedfa11)) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func create(t testing.TB, f *FS, path string, dir bool) Ino {
	t.Helper()
	ino, err := f.Create(path, dir)
	must(t, err)
	return ino
}

// read returns the content at path, or ok=false if the path does not exist.
func read(t testing.TB, f *FS, path string) (string, bool) {
	t.Helper()
	ino, err := f.Lookup(path)
	if errors.Is(err, ENOENT) {
		return "", false
	}
	must(t, err)
	return readIno(t, f, ino), true
}

func readIno(t testing.TB, f *FS, ino Ino) string {
	t.Helper()
	st, err := f.Stat(ino)
	must(t, err)
	buf := make([]byte, st.Size)
	n, err := f.ReadAt(ino, buf, 0)
	must(t, err)
	return string(buf[:n])
}

// appendFile creates path if needed and appends s.
func appendFile(t testing.TB, f *FS, path, s string) Ino {
	t.Helper()
	ino, err := f.Lookup(path)
	if errors.Is(err, ENOENT) {
		ino, err = f.Create(path, false)
	}
	must(t, err)
	st, err := f.Stat(ino)
	must(t, err)
	_, err = f.WriteAt(ino, []byte(s), st.Size)
	must(t, err)
	return ino
}

// outcomes runs setup on a fresh FS for each seed, crashes, and collects
// check's verdicts.
func outcomes(t *testing.T, seeds int, opts Options, torn bool, setup func(*FS), check func(*FS) string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for seed := range uint64(seeds) {
		f := New(opts)
		setup(f)
		f.Crash(rng(seed), torn)
		got[check(f)]++
	}
	return got
}

func TestErrors(t *testing.T) {
	setup := func(t *testing.T) *FS {
		f := New(Options{})
		create(t, f, "/d", true)
		create(t, f, "/d/f", false)
		create(t, f, "/e", true)
		create(t, f, "/g", false)
		return f
	}
	cases := []struct {
		name string
		op   func(*FS) error
		want error
	}{
		{"create existing", func(f *FS) error { _, err := f.Create("/d/f", false); return err }, EEXIST},
		{"create root", func(f *FS) error { _, err := f.Create("/", true); return err }, EEXIST},
		{"create missing parent", func(f *FS) error { _, err := f.Create("/x/y", false); return err }, ENOENT},
		{"create under file", func(f *FS) error { _, err := f.Create("/g/y", false); return err }, ENOTDIR},
		{"relative path", func(f *FS) error { _, err := f.Lookup("d/f"); return err }, EINVAL},
		{"unclean path", func(f *FS) error { _, err := f.Lookup("/d/../d"); return err }, EINVAL},
		{"trailing slash", func(f *FS) error { _, err := f.Lookup("/d/"); return err }, EINVAL},
		{"lookup missing", func(f *FS) error { _, err := f.Lookup("/nope"); return err }, ENOENT},
		{"lookup through file", func(f *FS) error { _, err := f.Lookup("/g/x"); return err }, ENOTDIR},
		{"unlink dir", func(f *FS) error { return f.Unlink("/d") }, EISDIR},
		{"unlink root", func(f *FS) error { return f.Unlink("/") }, EISDIR},
		{"unlink missing", func(f *FS) error { return f.Unlink("/nope") }, ENOENT},
		{"rmdir nonempty", func(f *FS) error { return f.Rmdir("/d") }, ENOTEMPTY},
		{"rmdir file", func(f *FS) error { return f.Rmdir("/g") }, ENOTDIR},
		{"rmdir root", func(f *FS) error { return f.Rmdir("/") }, EINVAL},
		{"rename missing", func(f *FS) error { return f.Rename("/nope", "/x") }, ENOENT},
		{"rename file over dir", func(f *FS) error { return f.Rename("/g", "/e") }, EISDIR},
		{"rename dir over file", func(f *FS) error { return f.Rename("/e", "/g") }, ENOTDIR},
		{"rename dir over nonempty dir", func(f *FS) error { return f.Rename("/e", "/d") }, ENOTEMPTY},
		{"rename dir into itself", func(f *FS) error { return f.Rename("/d", "/d/sub") }, EINVAL},
		{"rename root", func(f *FS) error { return f.Rename("/", "/x") }, EINVAL},
		{"rename dir over empty dir", func(f *FS) error { return f.Rename("/d", "/e") }, nil},
		{"rename to self", func(f *FS) error { return f.Rename("/g", "/g") }, nil},
		{"read dir", func(f *FS) error { _, err := f.ReadAt(RootIno, make([]byte, 1), 0); return err }, EISDIR},
		{"write dir", func(f *FS) error { _, err := f.WriteAt(RootIno, []byte("x"), 0); return err }, EISDIR},
		{"readdir file", func(f *FS) error { ino, _ := f.Lookup("/g"); _, err := f.ReadDir(ino); return err }, ENOTDIR},
		{"stat unknown", func(f *FS) error { _, err := f.Stat(999); return err }, EBADF},
		{"sync unknown", func(f *FS) error { return f.Sync(999, false, false) }, EBADF},
		{"negative offset", func(f *FS) error { ino, _ := f.Lookup("/g"); _, err := f.WriteAt(ino, []byte("x"), -1); return err }, EINVAL},
		{"negative truncate", func(f *FS) error { ino, _ := f.Lookup("/g"); return f.Truncate(ino, -1) }, EINVAL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op(setup(t))
			if err != tc.want {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	if got := ENOENT.Error(); !strings.HasPrefix(got, "ENOENT") {
		t.Errorf("ENOENT.Error() = %q", got)
	}
}

func TestReadWrite(t *testing.T) {
	cases := []struct {
		name string
		ops  func(f *FS, ino Ino)
		want string
	}{
		{"append", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("abc"), 0)
			f.WriteAt(ino, []byte("def"), 3)
		}, "abcdef"},
		{"overwrite", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("abcdef"), 0)
			f.WriteAt(ino, []byte("XY"), 2)
		}, "abXYef"},
		{"extend with zeros", func(f *FS, ino Ino) { f.WriteAt(ino, []byte("x"), 3) }, "\x00\x00\x00x"},
		{"truncate grow", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("ab"), 0)
			f.Truncate(ino, 4)
		}, "ab\x00\x00"},
		{"shrink then write past end zeroes old bytes", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("abcdefgh"), 0)
			f.Truncate(ino, 2)
			f.WriteAt(ino, []byte("Z"), 6)
		}, "ab\x00\x00\x00\x00Z"},
		{"shrink then truncate grow zeroes old bytes", func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("abcdefgh"), 0)
			f.Truncate(ino, 2)
			f.Truncate(ino, 5)
		}, "ab\x00\x00\x00"},
		{"empty write does not extend", func(f *FS, ino Ino) { f.WriteAt(ino, nil, 10) }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, synced := range []bool{false, true} {
				f := New(Options{})
				ino := create(t, f, "/f", false)
				tc.ops(f, ino)
				if got := readIno(t, f, ino); got != tc.want {
					t.Fatalf("volatile = %q, want %q", got, tc.want)
				}
				if !synced {
					continue
				}
				// The durable replay of the same ops must agree.
				must(t, f.Sync(ino, false, false))
				f.Crash(rng(1), true)
				if got, _ := read(t, f, "/f"); got != tc.want {
					t.Fatalf("after sync+crash = %q, want %q", got, tc.want)
				}
			}
		})
	}
	t.Run("short read at EOF", func(t *testing.T) {
		f := New(Options{})
		ino := appendFile(t, f, "/f", "hello")
		buf := make([]byte, 10)
		n, err := f.ReadAt(ino, buf, 3)
		if err != nil || n != 2 || string(buf[:n]) != "lo" {
			t.Fatalf("ReadAt(3) = %d %v %q", n, err, buf[:n])
		}
		n, err = f.ReadAt(ino, buf, 9)
		if err != nil || n != 0 {
			t.Fatalf("ReadAt past EOF = %d %v", n, err)
		}
	})
}

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

func TestUnlinkKeepsOpenInode(t *testing.T) {
	for _, opts := range []Options{{}, {StrictDirs: true}} {
		f := New(opts)
		ino := appendFile(t, f, "/f", "hello")
		must(t, f.Unlink("/f"))
		if _, err := f.Lookup("/f"); err != ENOENT {
			t.Fatalf("Lookup after unlink = %v", err)
		}
		if _, err := f.WriteAt(ino, []byte(" world"), 5); err != nil {
			t.Fatal(err)
		}
		if got := readIno(t, f, ino); got != "hello world" {
			t.Fatalf("open inode reads %q", got)
		}
		st, _ := f.Stat(ino)
		if st.Nlink != 0 {
			t.Fatalf("Nlink = %d", st.Nlink)
		}
		if !strings.Contains(f.Dump(), "(unlinked ino") {
			t.Fatalf("Dump misses unlinked inode:\n%s", f.Dump())
		}
		if !opts.StrictDirs {
			// Gone durably at once, so the crash discards it.
			f.Crash(rng(0), false)
			if _, err := f.Stat(ino); err != EBADF {
				t.Fatalf("Stat after crash = %v, want EBADF", err)
			}
		}
	}
}

func TestRelease(t *testing.T) {
	f := New(Options{MaxBytes: 1000})
	for i := range 50 {
		ino := appendFile(t, f, "/tmp", strings.Repeat("x", 100))
		must(t, f.Unlink("/tmp"))
		if i%2 == 0 {
			must(t, f.Sync(ino, false, false))
		}
		must(t, f.Release(ino))
		if _, err := f.Stat(ino); err != EBADF {
			t.Fatalf("released inode still present: %v", err)
		}
	}
	if f.Used() != 0 {
		t.Fatalf("Used = %d after releasing everything", f.Used())
	}
	// Linked inodes and, with StrictDirs, durably named ones stay.
	s := New(Options{StrictDirs: true})
	ino := appendFile(t, s, "/f", "x")
	must(t, s.Sync(RootIno, false, false))
	must(t, s.Unlink("/f"))
	must(t, s.Release(ino))
	if _, err := s.Stat(ino); err != nil {
		t.Fatalf("durably named inode released: %v", err)
	}
}

func TestReadDirSorted(t *testing.T) {
	f := New(Options{})
	for _, name := range []string{"zeta", "alpha", "Mid", "beta", "a"} {
		create(t, f, "/"+name, name == "beta")
	}
	ents, err := f.ReadDir(RootIno)
	must(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
		if e.Dir != (e.Name == "beta") {
			t.Errorf("%s: Dir = %v", e.Name, e.Dir)
		}
	}
	if got := strings.Join(names, ","); got != "Mid,a,alpha,beta,zeta" {
		t.Fatalf("ReadDir order %s", got)
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

func TestCrashAccounting(t *testing.T) {
	// After a crash the footprint equals the sum of the surviving files.
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
				want += st.Size
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

func TestLimits(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		op   func(f *FS, ino Ino) error
		want error
	}{
		{"write past 1 GiB", Options{}, func(f *FS, ino Ino) error {
			_, err := f.WriteAt(ino, []byte("x"), MaxFileSize)
			return err
		}, EFBIG},
		{"write up to 1 GiB boundary is a size check, not a space one", Options{MaxBytes: 10}, func(f *FS, ino Ino) error {
			_, err := f.WriteAt(ino, []byte("xy"), MaxFileSize-1)
			return err
		}, EFBIG},
		{"truncate past 1 GiB", Options{}, func(f *FS, ino Ino) error { return f.Truncate(ino, MaxFileSize+1) }, EFBIG},
		{"write beyond MaxBytes", Options{MaxBytes: 100}, func(f *FS, ino Ino) error {
			_, err := f.WriteAt(ino, make([]byte, 101), 0)
			return err
		}, ENOSPC},
		{"sparse write beyond MaxBytes", Options{MaxBytes: 100}, func(f *FS, ino Ino) error {
			_, err := f.WriteAt(ino, []byte("x"), 200)
			return err
		}, ENOSPC},
		{"truncate beyond MaxBytes", Options{MaxBytes: 100}, func(f *FS, ino Ino) error { return f.Truncate(ino, 101) }, ENOSPC},
		{"unsynced overwrites are bounded", Options{MaxBytes: 100}, func(f *FS, ino Ino) error {
			for range 100 {
				if _, err := f.WriteAt(ino, make([]byte, 10), 0); err != nil {
					return err
				}
			}
			return nil
		}, ENOSPC},
		{"synced overwrites fit", Options{MaxBytes: 100}, func(f *FS, ino Ino) error {
			for range 100 {
				if _, err := f.WriteAt(ino, make([]byte, 10), 0); err != nil {
					return err
				}
				if err := f.Sync(ino, false, false); err != nil {
					return err
				}
			}
			return nil
		}, nil},
		{"default cap is 256 MiB", Options{}, func(f *FS, ino Ino) error {
			if _, err := f.WriteAt(ino, []byte("x"), DefaultMaxBytes); err != ENOSPC {
				return errors.New("sparse write at 256 MiB accepted")
			}
			return nil
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := New(tc.opts)
			ino := create(t, f, "/f", false)
			if err := tc.op(f, ino); err != tc.want {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if f.Used() > max(tc.opts.MaxBytes, 0) && tc.opts.MaxBytes > 0 {
				t.Fatalf("Used %d exceeds MaxBytes %d", f.Used(), tc.opts.MaxBytes)
			}
		})
	}
}

func TestDump(t *testing.T) {
	f := New(Options{})
	create(t, f, "/data", true)
	appendFile(t, f, "/data/kv.log", "hello")
	got := f.Dump()
	want := "/ dir\n/data dir\n/data/kv.log size=5 sha=2cf24dba5fb0 head=\"hello\"\n"
	if got != want {
		t.Fatalf("Dump:\n%s\nwant\n%s", got, want)
	}
	if !bytes.Contains([]byte(f.DumpDurable()), []byte("/data/kv.log size=0")) {
		t.Fatalf("DumpDurable:\n%s", f.DumpDurable())
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
	for _, opts := range []Options{{}, {StrictDirs: true}, {StrictDirs: true, RenameNonAtomic: true, ReorderSync: true}, {MaxBytes: 300}} {
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
						f.WriteAt(open[r.IntN(len(open))], make([]byte, r.IntN(40)), int64(r.IntN(60)))
					}
				case 6:
					if len(open) > 0 {
						f.Truncate(open[r.IntN(len(open))], int64(r.IntN(50)))
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
