package kvstore

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

func record(key, value string) []byte {
	payload := key + "\x00" + value
	rec := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	rec = binary.LittleEndian.AppendUint32(rec, crc32.ChecksumIEEE([]byte(payload)))
	return append(rec, payload...)
}

func mustOpen(t *testing.T, path string, fixed bool) *Store {
	t.Helper()
	s, err := Open(path, fixed)
	if err != nil {
		t.Fatalf("Open(%s, fixed=%v): %v", path, fixed, err)
	}
	return s
}

func wantGet(t *testing.T, s *Store, key, want string, wantOK bool) {
	t.Helper()
	got, ok := s.Get(key)
	if got != want || ok != wantOK {
		t.Errorf("Get(%q) = %q, %v; want %q, %v", key, got, ok, want, wantOK)
	}
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.log")
	s := mustOpen(t, path, true)
	for _, kv := range [][2]string{{"a", "1"}, {"b", "two words"}, {"a", "3"}, {"c", ""}} {
		if err := s.Put(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append("d", "4"); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = mustOpen(t, path, true)
	defer s.Close()
	if got := s.Recovery(); got != (Recovery{Records: 5}) {
		t.Errorf("Recovery() = %+v, want 5 records and no torn tail", got)
	}
	wantGet(t, s, "a", "3", true)
	wantGet(t, s, "b", "two words", true)
	wantGet(t, s, "c", "", true)
	wantGet(t, s, "d", "4", true)
	wantGet(t, s, "e", "", false)
}

func TestPutRejectsNUL(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "kv.log"), true)
	defer s.Close()
	if err := s.Put("a\x00b", "1"); err == nil {
		t.Error("Put of a key with a NUL byte succeeded")
	}
}

// torn tails a crash in the middle of an append (or a bit flip) can leave.
var tails = []struct {
	name string
	tail []byte
}{
	{"partial header", record("x", "torn")[:5]},
	{"header and partial payload", record("x", "torn")[:11]},
	{"bad checksum", func() []byte { r := record("x", "torn"); r[len(r)-1] ^= 0xff; return r }()},
	{"huge length", []byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 'g'}},
}

// writeTornLog writes two good records followed by tail.
func writeTornLog(t *testing.T, tail []byte) (path string, good int64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "kv.log")
	data := append(record("a", "1"), record("b", "2")...)
	good = int64(len(data))
	if err := os.WriteFile(path, append(data, tail...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, good
}

func TestFixedRecoveryTruncatesTornTail(t *testing.T) {
	for _, tc := range tails {
		t.Run(tc.name, func(t *testing.T) {
			path, good := writeTornLog(t, tc.tail)
			s := mustOpen(t, path, true)
			want := Recovery{Records: 2, TornBytes: int64(len(tc.tail))}
			if got := s.Recovery(); got != want {
				t.Errorf("Recovery() = %+v, want %+v", got, want)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() != good {
				t.Fatalf("after Open the log is %v bytes (err %v), want truncated to %d", fi.Size(), err, good)
			}
			if err := s.Put("c", "3"); err != nil {
				t.Fatal(err)
			}
			s.Close()

			s = mustOpen(t, path, true)
			defer s.Close()
			if got := s.Recovery(); got != (Recovery{Records: 3}) {
				t.Errorf("after reopen Recovery() = %+v, want 3 records and no torn tail", got)
			}
			wantGet(t, s, "a", "1", true)
			wantGet(t, s, "b", "2", true)
			wantGet(t, s, "c", "3", true)
		})
	}
}

// TestBuggyRecoveryLosesWriteAfterTornTail is the bug the kvlog example exists to show:
// a write acknowledged after a torn tail is glued onto the garbage and lost at the next
// restart.
func TestBuggyRecoveryLosesWriteAfterTornTail(t *testing.T) {
	for _, tc := range tails {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := writeTornLog(t, tc.tail)
			s := mustOpen(t, path, false)
			if got := s.Recovery().TornBytes; got != int64(len(tc.tail)) {
				t.Errorf("TornBytes = %d, want %d", got, len(tc.tail))
			}
			if err := s.Put("c", "3"); err != nil {
				t.Fatal(err)
			}
			wantGet(t, s, "c", "3", true) // acknowledged and readable until the restart
			s.Close()

			s = mustOpen(t, path, false)
			defer s.Close()
			wantGet(t, s, "a", "1", true)
			wantGet(t, s, "c", "", false)
			if got := s.Recovery(); got.Records != 2 || got.TornBytes <= int64(len(tc.tail)) {
				t.Errorf("after reopen Recovery() = %+v, want 2 records and the new record inside the torn tail", got)
			}
		})
	}
}

func TestMalformedRecordIsCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.log")
	payload := []byte("no separator")
	rec := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	rec = binary.LittleEndian.AppendUint32(rec, crc32.ChecksumIEEE(payload))
	rec = append(rec, payload...)
	if err := os.WriteFile(path, append(rec, record("a", "1")...), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, path, true)
	defer s.Close()
	if got := s.Recovery(); got != (Recovery{Records: 2, Malformed: 1}) {
		t.Errorf("Recovery() = %+v, want 2 records, 1 malformed", got)
	}
	wantGet(t, s, "a", "1", true)
}
