package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

// The file store, natively on the host's filesystem: what it stores comes back after a
// reopen, DeleteRange rewrites the log, a torn tail is cut at the last whole record,
// and a corrupt stable store is an error rather than an empty one.

func entries(from, to uint64) []*raft.Log {
	var ls []*raft.Log
	for i := from; i <= to; i++ {
		ls = append(ls, &raft.Log{Index: i, Term: 1 + i/10, Type: raft.LogCommand, Data: []byte{byte(i), 'x'}})
	}
	return ls
}

func reopen(t *testing.T, dir string) *fileStore {
	t.Helper()
	s, err := openFileStore(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.f.Close() })
	return s
}

func wantRange(t *testing.T, s *fileStore, first, last uint64) {
	t.Helper()
	f, _ := s.FirstIndex()
	l, _ := s.LastIndex()
	if f != first || l != last {
		t.Fatalf("range %d..%d, want %d..%d", f, l, first, last)
	}
	for i := first; i <= last && first > 0; i++ {
		var got raft.Log
		if err := s.GetLog(i, &got); err != nil || got.Index != i || got.Term != 1+i/10 || string(got.Data) != string([]byte{byte(i), 'x'}) {
			t.Fatalf("entry %d: %+v, %v", i, got, err)
		}
	}
}

func TestStoreReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "raft")
	s := reopen(t, dir)
	if err := s.StoreLogs(entries(1, 20)); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLog(entries(21, 21)[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("n2")); err != nil {
		t.Fatal(err)
	}
	wantRange(t, reopen(t, dir), 1, 21)

	// Compaction, then a conflicting suffix replaced.
	if err := s.DeleteRange(1, 15); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(19, 21); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs(entries(19, 25)); err != nil {
		t.Fatal(err)
	}
	r := reopen(t, dir)
	wantRange(t, r, 16, 25)
	var l raft.Log
	if err := r.GetLog(3, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(3) after compaction: %v, want ErrLogNotFound", err)
	}
	if v, err := r.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("CurrentTerm %d, %v", v, err)
	}
	if v, err := r.Get([]byte("LastVoteCand")); err != nil || string(v) != "n2" {
		t.Fatalf("LastVoteCand %q, %v", v, err)
	}
	if _, err := r.Get([]byte("nope")); err == nil || err.Error() != "not found" {
		t.Fatalf(`missing key: %v, want "not found" (raft compares the text)`, err)
	}
}

func TestStoreTornTail(t *testing.T) {
	dir := t.TempDir()
	s := reopen(t, dir)
	if err := s.StoreLogs(entries(1, 5)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "log")
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs(entries(6, 6)); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every prefix of the last record (and zeros where it was) is cut off at reopen.
	for _, tail := range [][]byte{full[len(whole) : len(full)-1], full[len(whole) : len(whole)+3], make([]byte, len(full)-len(whole))} {
		if err := os.WriteFile(path, append(append([]byte{}, whole...), tail...), 0o644); err != nil {
			t.Fatal(err)
		}
		r := reopen(t, dir)
		wantRange(t, r, 1, 5)
		if fi, _ := os.Stat(path); fi.Size() != int64(len(whole)) {
			t.Fatalf("log is %d bytes after reopen, want %d (truncated at the last whole record)", fi.Size(), len(whole))
		}
		// And appends go after the last whole record.
		if err := r.StoreLogs(entries(6, 7)); err != nil {
			t.Fatal(err)
		}
		r.f.Close()
		wantRange(t, reopen(t, dir), 1, 7)
		if err := os.WriteFile(path, whole, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStoreCorruptStable(t *testing.T) {
	dir := t.TempDir()
	s := reopen(t, dir)
	if err := s.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "stable")
	b, _ := os.ReadFile(path)
	b[len(b)-1] ^= 1
	os.WriteFile(path, b, 0o644)
	if _, err := openFileStore(dir, false); err == nil {
		t.Fatal("a corrupt stable store opened without an error")
	}
}

// A damaged record with intact records after it is corruption, not a torn tail: the
// store refuses to open and names both offsets, and the file is left as it was (the
// old store truncated it there, dropping the fsynced records behind the damage).
func TestStoreCorruptMiddle(t *testing.T) {
	dir := t.TempDir()
	s := reopen(t, dir)
	if err := s.StoreLogs(entries(1, 3)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "log")
	three, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs(entries(4, 6)); err != nil {
		t.Fatal(err)
	}
	s.f.Close()
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Zero the second record's bytes (a misdirected or lost write, a bad sector).
	first := len(three) / 3 // the three records of entries(1, 3) have one length
	bad := append([]byte{}, full...)
	for i := first; i < 2*first; i++ {
		bad[i] = 0
	}
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openFileStore(dir, false)
	want := fmt.Sprintf("log store: %s is corrupt: the record at offset %d is damaged and an intact record follows at offset %d", path, first, 2*first)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("open with a damaged middle record: %v, want %q", err, want)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Fatalf("the log was changed (%d bytes, was %d)", len(got), len(bad))
	}
	// The same damage on the last record is a torn tail: cut off.
	last := append([]byte{}, full...)
	for i := len(full) - first + 8; i < len(full); i++ {
		last[i] = 0
	}
	if err := os.WriteFile(path, last, 0o644); err != nil {
		t.Fatal(err)
	}
	wantRange(t, reopen(t, dir), 1, 5)
}
