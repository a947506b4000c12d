// Package kvfile is the log-structured store of the upgrade example: one append-only
// file of records, each in a record format that the build which wrote it chose.
//
// Format 1 (written by v1):
//
//	byte 1 | uint32 length of payload | uint32 CRC-32C of the above and the payload | "key=value"
//
// Format 2 (written by v2): the payload carries the key's length, so keys may hold any
// byte, and the record a sequence number:
//
//	byte 2 | uint32 length of payload | uint32 CRC-32C | uvarint seq | uvarint key length | key | value
//
// Every record starts with its format byte, so one file can hold both (v2 appends
// format 2 after the format 1 records v1 left). A build opens the file only if it reads
// every format in it: a valid record of a format it does not read is an error naming
// the format and the offset, never something it skips. A torn last record (short, or
// failing its checksum) is cut off: it was never acknowledged.
package kvfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

const headerLen = 9

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options say which formats a build reads and which one it writes.
type Options struct {
	Reads []int
	Write int
}

// Store is an open log and its contents.
type Store struct {
	mu   sync.Mutex
	f    *os.File
	opt  Options
	m    map[string]string
	seq  uint64
	size int64
}

// Recovery says what Open found.
type Recovery struct {
	Records   int
	ByFormat  map[int]int
	TornBytes int64
}

// Open opens (or creates) the log at path and replays it.
func Open(path string, opt Options) (*Store, Recovery, error) {
	rec := Recovery{ByFormat: map[int]int{}}
	if !slices.Contains(opt.Reads, opt.Write) {
		return nil, rec, fmt.Errorf("write format %d is not one this build reads", opt.Write)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, rec, err
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, rec, err
	}
	if statErr != nil {
		// A new file: make its directory entry durable before any record is acknowledged.
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, rec, err
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, rec, err
	}
	s := &Store{f: f, opt: opt, m: map[string]string{}}
	off := int64(0)
	for off < int64(len(data)) {
		rest := data[off:]
		if len(rest) < headerLen {
			break // torn header
		}
		n := int64(binary.LittleEndian.Uint32(rest[1:5]))
		if int64(len(rest)) < headerLen+n {
			break // torn payload
		}
		payload := rest[headerLen : headerLen+n]
		sum := crc32.Update(crc32.Checksum(rest[:5], castagnoli), castagnoli, payload)
		if sum != binary.LittleEndian.Uint32(rest[5:9]) {
			break // torn: a prefix of the record with stale bytes after it
		}
		format := int(rest[0])
		if !slices.Contains(opt.Reads, format) {
			f.Close()
			return nil, rec, fmt.Errorf("%s: record %d at offset %d is in format %d; this build reads format %s",
				path, rec.Records+1, off, format, formats(opt.Reads))
		}
		key, value, seq, err := decode(format, payload)
		if err != nil {
			f.Close()
			return nil, rec, fmt.Errorf("%s: record %d at offset %d: %w", path, rec.Records+1, off, err)
		}
		s.m[key] = value
		s.seq = max(s.seq, seq)
		rec.Records++
		rec.ByFormat[format]++
		off += headerLen + n
	}
	if torn := int64(len(data)) - off; torn > 0 {
		rec.TornBytes = torn
		if err := f.Truncate(off); err != nil {
			f.Close()
			return nil, rec, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, rec, err
		}
	}
	s.size = off
	return s, rec, nil
}

func formats(fs []int) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprint(f))
	}
	return strings.Join(out, " and ")
}

func decode(format int, p []byte) (key, value string, seq uint64, err error) {
	switch format {
	case 1:
		k, v, ok := strings.Cut(string(p), "=")
		if !ok {
			return "", "", 0, errors.New("format 1 record without '='")
		}
		return k, v, 0, nil
	case 2:
		seq, n := binary.Uvarint(p)
		if n <= 0 {
			return "", "", 0, errors.New("format 2 record with a bad sequence number")
		}
		p = p[n:]
		kl, n := binary.Uvarint(p)
		if n <= 0 || uint64(len(p)-n) < kl {
			return "", "", 0, errors.New("format 2 record with a bad key length")
		}
		p = p[n:]
		return string(p[:kl]), string(p[kl:]), seq, nil
	}
	return "", "", 0, fmt.Errorf("unknown format %d", format)
}

func encode(format int, key, value string, seq uint64) []byte {
	var p []byte
	switch format {
	case 1:
		p = []byte(key + "=" + value)
	case 2:
		p = binary.AppendUvarint(p, seq)
		p = binary.AppendUvarint(p, uint64(len(key)))
		p = append(append(p, key...), value...)
	default:
		panic(fmt.Sprintf("kvfile: no encoder for format %d", format))
	}
	rec := make([]byte, headerLen, headerLen+len(p))
	rec[0] = byte(format)
	binary.LittleEndian.PutUint32(rec[1:5], uint32(len(p)))
	sum := crc32.Update(crc32.Checksum(rec[:5], castagnoli), castagnoli, p)
	binary.LittleEndian.PutUint32(rec[5:9], sum)
	return append(rec, p...)
}

// Put appends a record in the write format and fsyncs it; only then is the write
// acknowledged.
func (s *Store) Put(key, value string) error {
	if s.opt.Write == 1 && strings.Contains(key, "=") {
		return errors.New("format 1 keys may not contain '='")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	rec := encode(s.opt.Write, key, value, s.seq)
	if _, err := s.f.WriteAt(rec, s.size); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	s.size += int64(len(rec))
	s.m[key] = value
	return nil
}

// Get returns key's value.
func (s *Store) Get(key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.f.Close() }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Main is the server of every version: it opens /data/kv.log with the version's
// formats and answers the line protocol of examples/kvcheck on :7000. A log it cannot
// read ends it with exit code 1 and the reason on stderr.
func Main(version string, opt Options) {
	if err := serve(version, opt); err != nil {
		fmt.Fprintf(os.Stderr, "server %s: %v\n", version, err)
		os.Exit(1)
	}
}

func serve(version string, opt Options) error {
	if err := kvcheck.MkdirDurable("/data"); err != nil {
		return err
	}
	s, rec, err := Open("/data/kv.log", opt)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Printf("server %s: recovered %d records (format 1: %d, format 2: %d, torn tail: %d bytes); writing format %d\n",
		version, rec.Records, rec.ByFormat[1], rec.ByFormat[2], rec.TornBytes, opt.Write)
	ln, err := sim.Listen("tcp", ":7000")
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, s)
}
