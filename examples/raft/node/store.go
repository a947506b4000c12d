package main

// A small file-backed raft.LogStore and raft.StableStore.
//
// raft-boltdb and raft-wal do not build for GOOS=wasip1 (bbolt needs mmap, madvise and
// flock), so the example brings its own store, written for crash safety on a POSIX
// filesystem:
//
//   - dir/log is a sequence of records [len u32][crc32c u32][entry]. StoreLogs appends
//     one record per entry in a single write and fsyncs the file before it returns.
//     On open, the records are read back up to the first one that is short or fails
//     its checksum. If no intact record follows it, it is a torn tail (a write torn or
//     lost by a crash before its fsync returned): the file is truncated there and
//     fsynced. If one does, the damage is in the middle of the log, where no crash can
//     put it (every record before the last was fsynced whole): that is corruption, and
//     opening fails with an error naming both offsets rather than dropping fsynced
//     records.
//   - DeleteRange (compaction after a snapshot, or a conflicting suffix) rewrites the
//     remaining entries into dir/log.tmp, fsyncs it, renames it over dir/log and fsyncs
//     dir, so a crash leaves either the old log or the new one.
//   - dir/stable holds the stable store's keys (current term, vote); every Set writes
//     dir/stable.tmp, fsyncs it, renames it over dir/stable and fsyncs dir.
//   - Directories are created durably: the parent is fsynced after each mkdir, and dir
//     after a file is first created in it.
//
// With nosync (the negative control) the log's data is never fsynced: StoreLogs returns
// once its write is in the page cache, and a DeleteRange rewrite is renamed into place
// unsynced. Directories and the stable store are still fsynced.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxRecord bounds a record's length, so that a garbage length is not trusted.
const maxRecord = 64 << 20

type fileStore struct {
	dir    string
	nosync bool

	mu     sync.Mutex
	logs   map[uint64]*raft.Log
	first  uint64 // 0 when empty
	last   uint64
	f      *os.File // dir/log, positioned at its end
	stable map[string][]byte
}

func openFileStore(dir string, nosync bool) (*fileStore, error) {
	s := &fileStore{dir: dir, nosync: nosync, logs: map[uint64]*raft.Log{}, stable: map[string][]byte{}}
	if err := s.mkdirAll(dir); err != nil {
		return nil, err
	}
	// A tmp file is a rewrite that a crash interrupted before its rename.
	for _, name := range []string{"log.tmp", "stable.tmp"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := s.loadStable(); err != nil {
		return nil, err
	}
	if err := s.loadLog(); err != nil {
		return nil, err
	}
	return s, nil
}

// mkdirAll creates dir and its missing parents, fsyncing each new directory's parent.
func (s *fileStore) mkdirAll(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := s.mkdirAll(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return s.syncDir(filepath.Dir(dir))
}

func (s *fileStore) syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// syncLog fsyncs the log file (or, with nosync, does not).
func (s *fileStore) syncLog(f *os.File) error {
	if s.nosync {
		return nil
	}
	return f.Sync()
}

// writeAtomic replaces dir/name with data: tmp file, fsync (unless nosync is set),
// rename, fsync dir.
func (s *fileStore) writeAtomic(name string, data []byte, nosync bool) error {
	path := filepath.Join(s.dir, name)
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && !nosync {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	return s.syncDir(s.dir)
}

func (s *fileStore) loadLog() error {
	path := filepath.Join(s.dir, "log")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		if f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return err
		}
		if err := errors.Join(f.Sync(), s.syncDir(s.dir)); err != nil {
			f.Close()
			return err
		}
	} else if err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return err
	}
	good := 0
	for good < len(data) {
		l, n, ok := decodeRecord(data[good:])
		if !ok {
			break
		}
		s.set(l)
		good += n
	}
	if good < len(data) {
		if next := nextRecord(data, good+1); next >= 0 {
			f.Close()
			return fmt.Errorf("log store: %s is corrupt: the record at offset %d is damaged and an intact record follows at offset %d (only the last record can be a torn write)", path, good, next)
		}
		fmt.Fprintf(os.Stderr, "log store: dropping %d bytes after the last whole record (offset %d)\n", len(data)-good, good)
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		f.Close()
		return err
	}
	s.f = f
	fmt.Fprintf(os.Stderr, "log store: %d entries, first %d, last %d\n", len(s.logs), s.first, s.last)
	return nil
}

// set puts l into the in-memory index (an existing index is overwritten).
func (s *fileStore) set(l *raft.Log) {
	s.logs[l.Index] = l
	if s.first == 0 || l.Index < s.first {
		s.first = l.Index
	}
	s.last = max(s.last, l.Index)
}

func encodeRecord(buf *bytes.Buffer, l *raft.Log) {
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	body := binary.BigEndian.AppendUint64(nil, l.Index)
	body = binary.BigEndian.AppendUint64(body, l.Term)
	body = append(body, byte(l.Type))
	body = binary.BigEndian.AppendUint64(body, uint64(at))
	body = binary.BigEndian.AppendUint32(body, uint32(len(l.Data)))
	body = append(body, l.Data...)
	body = append(body, l.Extensions...)
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(body)))
	binary.BigEndian.PutUint32(hdr[4:], crc32.Checksum(body, castagnoli))
	buf.Write(hdr[:])
	buf.Write(body)
}

// nextRecord returns the first offset at or after from where an intact record starts, or
// -1: a damaged record with an intact one after it is not a torn tail.
func nextRecord(data []byte, from int) int {
	for off := from; off+8 <= len(data); off++ {
		if _, _, ok := decodeRecord(data[off:]); ok {
			return off
		}
	}
	return -1
}

// decodeRecord reads one record from the front of b: the entry, the record's length,
// and false if b does not start with a whole, intact record.
func decodeRecord(b []byte) (*raft.Log, int, bool) {
	const fixed = 8 + 8 + 1 + 8 + 4
	if len(b) < 8 {
		return nil, 0, false
	}
	n := int(binary.BigEndian.Uint32(b[:4]))
	if n < fixed || n > maxRecord || len(b) < 8+n {
		return nil, 0, false
	}
	body := b[8 : 8+n]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[4:8]) {
		return nil, 0, false
	}
	l := &raft.Log{
		Index: binary.BigEndian.Uint64(body[0:]),
		Term:  binary.BigEndian.Uint64(body[8:]),
		Type:  raft.LogType(body[16]),
	}
	if at := int64(binary.BigEndian.Uint64(body[17:])); at != 0 {
		l.AppendedAt = time.Unix(0, at)
	}
	dn := int(binary.BigEndian.Uint32(body[25:]))
	if fixed+dn > n {
		return nil, 0, false
	}
	l.Data = slices.Clone(body[fixed : fixed+dn])
	if ext := body[fixed+dn:]; len(ext) > 0 {
		l.Extensions = slices.Clone(ext)
	}
	return l, 8 + n, true
}

func (s *fileStore) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, nil
}

func (s *fileStore) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, nil
}

func (s *fileStore) GetLog(index uint64, out *raft.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logs[index]
	if !ok {
		return raft.ErrLogNotFound
	}
	*out = *l
	return nil
}

func (s *fileStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs appends the entries in one write and fsyncs before it returns.
func (s *fileStore) StoreLogs(logs []*raft.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	for _, l := range logs {
		encodeRecord(&buf, l)
	}
	if _, err := s.f.Write(buf.Bytes()); err != nil {
		return err
	}
	if err := s.syncLog(s.f); err != nil {
		return err
	}
	for _, l := range logs {
		c := *l
		s.set(&c)
	}
	return nil
}

// DeleteRange removes the entries from min to max inclusive and rewrites the log.
func (s *fileStore) DeleteRange(min, max uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keep []uint64
	for i := range s.logs {
		if i < min || i > max {
			keep = append(keep, i)
		}
	}
	slices.Sort(keep)
	var buf bytes.Buffer
	for _, i := range keep {
		encodeRecord(&buf, s.logs[i])
	}
	if err := s.writeAtomic("log", buf.Bytes(), s.nosync); err != nil {
		return err
	}
	// Appends go to the new file from now on.
	f, err := os.OpenFile(filepath.Join(s.dir, "log"), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return err
	}
	s.f.Close()
	s.f = f
	for i := range s.logs {
		if i >= min && i <= max {
			delete(s.logs, i)
		}
	}
	s.first, s.last = 0, 0
	if len(keep) > 0 {
		s.first, s.last = keep[0], keep[len(keep)-1]
	}
	return nil
}

// The stable file: [crc32c u32] then, per key in sorted order, [klen u32][key][vlen u32][value].
func (s *fileStore) loadStable() error {
	data, err := os.ReadFile(filepath.Join(s.dir, "stable"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	bad := fmt.Errorf("stable store %s is corrupt (%d bytes)", filepath.Join(s.dir, "stable"), len(data))
	if len(data) < 4 || crc32.Checksum(data[4:], castagnoli) != binary.BigEndian.Uint32(data) {
		return bad
	}
	b := data[4:]
	next := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint32(b))
		if len(b) < 4+n {
			return nil, false
		}
		v := slices.Clone(b[4 : 4+n])
		b = b[4+n:]
		return v, true
	}
	for len(b) > 0 {
		k, ok1 := next()
		v, ok2 := next()
		if !ok1 || !ok2 {
			return bad
		}
		s.stable[string(k)] = v
	}
	return nil
}

func (s *fileStore) Set(key, val []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[string][]byte{}
	for k, v := range s.stable {
		next[k] = v
	}
	next[string(key)] = slices.Clone(val)
	var body []byte
	keys := make([]string, 0, len(next))
	for k := range next {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		body = binary.BigEndian.AppendUint32(body, uint32(len(k)))
		body = append(body, k...)
		body = binary.BigEndian.AppendUint32(body, uint32(len(next[k])))
		body = append(body, next[k]...)
	}
	data := binary.BigEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli))
	if err := s.writeAtomic("stable", append(data, body...), false); err != nil {
		return err
	}
	s.stable = next
	return nil
}

// errNotFound is what raft expects from a stable store for a missing key: it compares
// err.Error() with "not found".
var errNotFound = errors.New("not found")

func (s *fileStore) Get(key []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.stable[string(key)]
	if !ok {
		return nil, errNotFound
	}
	return slices.Clone(v), nil
}

func (s *fileStore) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

func (s *fileStore) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("stable store: key %q has %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
