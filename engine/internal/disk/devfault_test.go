package disk

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

func readAll(t *testing.T, f *FS, ino Ino, off int64, n int) ([]byte, error) {
	t.Helper()
	b := make([]byte, n)
	k, err := f.ReadAt(ino, b, off)
	return b[:k], err
}

// TestLatentSectorError: reads reaching a bad range stop short before it or fail with
// EIO, also after a crash, until a write covering the range remaps it; a partial write
// does not, a shrinking truncate frees it; the negative control reads a clean file.
func TestLatentSectorError(t *testing.T) {
	f := New(Options{TearUnit: 4})
	ino := appendFile(t, f, "/f", "0123456789abcdef")
	must(t, f.Sync(ino, false, false))
	if b, err := readAll(t, f, ino, 0, 16); err != nil || string(b) != "0123456789abcdef" {
		t.Fatalf("clean read: %q %v", b, err)
	}
	must(t, f.MarkBad(ino, 8, 4))
	if b, err := readAll(t, f, ino, 0, 16); err != nil || string(b) != "01234567" {
		t.Fatalf("read across the bad range: %q %v, want the short read 01234567", b, err)
	}
	if _, err := readAll(t, f, ino, 9, 4); !errors.Is(err, EIO) {
		t.Fatalf("read inside the bad range: %v, want EIO", err)
	}
	if b, err := readAll(t, f, ino, 12, 4); err != nil || string(b) != "cdef" {
		t.Fatalf("read past the bad range: %q %v", b, err)
	}
	f.Crash(rand.New(rand.NewPCG(1, 2)), true)
	if _, err := readAll(t, f, ino, 8, 1); !errors.Is(err, EIO) {
		t.Fatalf("after a crash: %v, want EIO (the device keeps the bad sector)", err)
	}
	if _, err := f.WriteAt(ino, []byte("XX"), 8); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, f, ino, 8, 1); !errors.Is(err, EIO) {
		t.Fatalf("after a partial write: %v, want EIO still", err)
	}
	if _, err := f.WriteAt(ino, []byte("WXYZ"), 8); err != nil {
		t.Fatal(err)
	}
	if b, err := readAll(t, f, ino, 0, 16); err != nil || string(b) != "01234567WXYZcdef" {
		t.Fatalf("after a covering write: %q %v, want the range readable again", b, err)
	}
	must(t, f.MarkBad(ino, 12, 4))
	must(t, f.MarkBad(ino, 14, 4)) // overlapping ranges merge
	if got := f.BadRanges(ino); len(got) != 1 || got[0] != [2]int64{12, 6} {
		t.Fatalf("merged ranges: %v", got)
	}
	must(t, f.Truncate(ino, 12))
	if got := f.BadRanges(ino); len(got) != 0 {
		t.Fatalf("after truncate to 12: bad ranges %v, want none", got)
	}
}

// TestLostWrite: a lost write is readable, survives its sync in the page cache only, and
// is gone after the crash, while the writes before and after it (coalesced appends)
// persist; the control without the lost write keeps everything.
func TestLostWrite(t *testing.T) {
	for _, lose := range []bool{false, true} {
		f := New(Options{})
		ino := appendFile(t, f, "/f", "aaaa")
		var err error
		if lose {
			_, err = f.WriteAtLost(ino, []byte("bbbb"), 4)
		} else {
			_, err = f.WriteAt(ino, []byte("bbbb"), 4)
		}
		must(t, err)
		_, err = f.WriteAt(ino, []byte("cccc"), 8)
		must(t, err)
		if b, _ := readAll(t, f, ino, 0, 12); string(b) != "aaaabbbbcccc" {
			t.Fatalf("lose=%v: before the crash %q", lose, b)
		}
		must(t, f.Sync(ino, false, false))
		f.Crash(rand.New(rand.NewPCG(1, 2)), true)
		want := "aaaabbbbcccc"
		if lose {
			want = "aaaa\x00\x00\x00\x00cccc"
		}
		if b, _ := readAll(t, f, ino, 0, 12); string(b) != want {
			t.Fatalf("lose=%v: after the crash %q, want %q", lose, b, want)
		}
	}
}

// TestCorruptDurable: Corrupt changes the durable bytes seen after a crash, clipped to
// the file, and refuses a file with pending writes.
func TestCorruptDurable(t *testing.T) {
	f := New(Options{})
	ino := appendFile(t, f, "/f", "hello world")
	must(t, f.Sync(ino, false, false))
	f.Crash(rand.New(rand.NewPCG(1, 2)), true)
	n, err := f.Corrupt(ino, 6, 512, func(b []byte) {
		for i := range b {
			b[i] = 0
		}
	})
	if err != nil || n != 5 {
		t.Fatalf("Corrupt: %d %v, want 5 bytes (clipped to the file)", n, err)
	}
	if b, _ := readAll(t, f, ino, 0, 11); !bytes.Equal(b, []byte("hello \x00\x00\x00\x00\x00")) {
		t.Fatalf("after Corrupt: %q", b)
	}
	f.Crash(rand.New(rand.NewPCG(1, 2)), true)
	if b, _ := readAll(t, f, ino, 0, 11); !bytes.Equal(b, []byte("hello \x00\x00\x00\x00\x00")) {
		t.Fatalf("the corruption is durable: after another crash %q", b)
	}
	if n, _ := f.Corrupt(ino, 100, 4, func([]byte) { t.Fatal("called past the end") }); n != 0 {
		t.Fatalf("past the end: %d", n)
	}
	appendFile(t, f, "/f", "x")
	if _, err := f.Corrupt(ino, 0, 1, func([]byte) {}); !errors.Is(err, EINVAL) {
		t.Fatalf("with pending writes: %v, want EINVAL", err)
	}
}
