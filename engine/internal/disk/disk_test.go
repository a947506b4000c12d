package disk

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
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
	// Room for one file (a page and its pending bytes) at a time.
	f := New(Options{MaxBytes: 2 * PageSize})
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
		{"a write counts whole pages", Options{MaxBytes: PageSize}, func(f *FS, ino Ino) error {
			_, err := f.WriteAt(ino, []byte("x"), 0)
			return err
		}, ENOSPC},
		{"a truncate beyond MaxBytes allocates nothing", Options{MaxBytes: 100}, func(f *FS, ino Ino) error {
			if err := f.Truncate(ino, 64<<20); err != nil {
				return err
			}
			if err := f.Sync(ino, false, false); err != nil {
				return err
			}
			if f.Used() != 0 {
				return fmt.Errorf("Used %d after a preallocating truncate", f.Used())
			}
			return nil
		}, nil},
		{"unsynced overwrites are bounded", Options{MaxBytes: PageSize + 100}, func(f *FS, ino Ino) error {
			for range 100 {
				if _, err := f.WriteAt(ino, make([]byte, 10), 0); err != nil {
					return err
				}
			}
			return nil
		}, ENOSPC},
		{"synced overwrites fit", Options{MaxBytes: PageSize + 100}, func(f *FS, ino Ino) error {
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
			if f.MaxBytes() != DefaultMaxBytes {
				return fmt.Errorf("MaxBytes %d", f.MaxBytes())
			}
			// The hole before a sparse write counts nothing.
			if _, err := f.WriteAt(ino, []byte("x"), DefaultMaxBytes); err != nil {
				return fmt.Errorf("sparse write at 256 MiB: %v", err)
			}
			if f.Used() != PageSize+1 {
				return fmt.Errorf("Used %d after a 1-byte sparse write", f.Used())
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
