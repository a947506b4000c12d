// Package kvstore is the storage of the kvlog example: a key-value map kept in one
// append-only log file.
//
// The log is a sequence of records, each
//
//	[u32 length][u32 crc32(payload)][payload]    (little endian)
//
// where payload is key + "\x00" + value. Open replays the log record by record until
// the end of the file, a short record or a bad checksum. What lies beyond is a torn
// tail, left by a crash in the middle of an append. How Open treats that tail is the
// difference between the buggy and the fixed recovery.
package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

const (
	headerLen = 8
	// maxPayload bounds a record, so a torn header cannot make replay allocate or skip
	// gigabytes.
	maxPayload = 1 << 20
)

// Recovery describes what Open found in the log.
type Recovery struct {
	// Records is the number of valid records replayed.
	Records int
	// TornBytes is the length of the invalid tail after the last valid record.
	TornBytes int64
	// Malformed counts records whose checksum is valid but whose payload has no
	// key separator. It is always 0 for a log written by this package.
	Malformed int
}

// Store is a key-value map backed by an append-only log. It is safe for concurrent use.
type Store struct {
	mu  sync.Mutex
	f   *os.File
	end int64 // the log's length: where the next record goes
	m   map[string]string
	rec Recovery
}

// Open opens or creates the log at path and replays it. With fixed set, a torn tail is
// truncated away before Open returns (made durable by the next Put's fsync); without it, the tail stays and new
// records are appended after it, which is the bug the kvlog example exists to catch.
func Open(path string, fixed bool) (*Store, error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	if created {
		// The new file's directory entry must be durable too (strict_dirs).
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, err
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read log: %w", err)
	}
	s := &Store{f: f, m: map[string]string{}}
	valid := s.replay(data)
	s.end = int64(len(data))
	s.rec.TornBytes = s.end - valid

	// THE BUG: the buggy recovery (fixed == false) skips this block and appends after
	// whatever is there.
	if fixed && s.rec.TornBytes > 0 {
		// Cut the torn tail off, and make the cut durable, before anything is appended:
		// otherwise the next record is glued onto the garbage and the next replay,
		// stopping at the garbage, loses it and everything after it.
		//
		// No fsync is needed right here: a crash before the next Put's fsync may bring the
		// torn tail back, and the next Open cuts it again; the next Put's fsync persists
		// the cut and the new record together, in order. (seedfall mutate found an fsync
		// that used to stand here to be a surviving call-site mutant: unnecessary.)
		if err := f.Truncate(valid); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncate torn tail: %w", err)
		}
		s.end = valid
	}
	return s, nil
}

// replay applies the valid records at the start of data and returns where they end.
func (s *Store) replay(data []byte) (valid int64) {
	off := 0
	for len(data)-off >= headerLen {
		n := int(binary.LittleEndian.Uint32(data[off:]))
		sum := binary.LittleEndian.Uint32(data[off+4:])
		if n > maxPayload || n > len(data)-off-headerLen {
			break // short record
		}
		payload := data[off+headerLen : off+headerLen+n]
		if crc32.ChecksumIEEE(payload) != sum {
			break // bad checksum
		}
		key, value, ok := strings.Cut(string(payload), "\x00")
		if ok {
			s.m[key] = value
		} else {
			s.rec.Malformed++
		}
		s.rec.Records++
		off += headerLen + n
	}
	return int64(off)
}

// Recovery reports what Open found in the log.
func (s *Store) Recovery() Recovery { return s.rec }

// Put appends a record that sets key to value and fsyncs the log: when Put returns nil,
// the value is durable. On error the log is cut back to where the record began, so a
// failed Put leaves nothing behind that a later record could be glued onto.
func (s *Store) Put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := s.end
	err := s.append(key, value)
	if err == nil {
		err = s.f.Sync()
	}
	if err != nil {
		// After a failed fsync the page cache no longer tells what is durable; the
		// record must not count, so cut it off and sync the cut.
		if terr := s.f.Truncate(start); terr == nil {
			s.end = start
			if serr := s.f.Sync(); serr != nil {
				return fmt.Errorf("put %q: %w (then sync after cutting the record back: %v)", key, err, serr)
			}
		}
		return fmt.Errorf("put %q: %w", key, err)
	}
	s.m[key] = value
	return nil
}

// Append appends a record that sets key to value without syncing it. The value is
// visible to Get at once but survives a crash only after a later Sync.
func (s *Store) Append(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.append(key, value); err != nil {
		return fmt.Errorf("append %q: %w", key, err)
	}
	s.m[key] = value
	return nil
}

func (s *Store) append(key, value string) error {
	if strings.Contains(key, "\x00") {
		return errors.New("key contains a NUL byte")
	}
	payload := key + "\x00" + value
	if len(payload) > maxPayload {
		return fmt.Errorf("record of %d bytes exceeds the %d-byte limit", len(payload), maxPayload)
	}
	rec := make([]byte, headerLen, headerLen+len(payload))
	binary.LittleEndian.PutUint32(rec, uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.ChecksumIEEE([]byte(payload)))
	rec = append(rec, payload...)
	n, err := s.f.Write(rec)
	s.end += int64(n)
	return err
}

// Sync makes every record appended so far durable.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	return nil
}

// Get returns the value of key and whether it is set.
func (s *Store) Get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok
}

// Close closes the log without syncing it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Close()
}

// syncDir fsyncs a directory so that entries created in it survive a crash. Windows
// cannot fsync a directory (and needs not).
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open log directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync log directory: %w", err)
	}
	return nil
}
