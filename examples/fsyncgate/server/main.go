// Command server is a small durable key-value log behind the kvcheck line protocol:
//
//	PUT key value\n  ->  OK\n  (once the record is appended to the log and fsynced)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// The log is one file, /data/log/current, of records [len u32][crc32 u32][key value].
// On start the server reads the records back up to the first one that is short, empty
// or fails its checksum, and rewrites them into a fresh file (fsync, rename over the
// log, fsync the directory), so that everything it serves from is durable before it
// accepts a request.
//
// What the server does when an fsync fails is the point of the example (-on-eio):
//
//	retry  (the bug) fsync again and, when the retry succeeds, treat the record as
//	       durable and acknowledge it. On Linux a failed fsync marks the dirty pages
//	       clean: the retry succeeds without writing them, and the record is lost at
//	       the next crash (the PostgreSQL "fsyncgate" of 2018).
//	exit   (the fix) stop at once with exit code 1, without acknowledging, as
//	       PostgreSQL has done since: the record's fate is unknown, so the server
//	       restarts and recovers from what the log holds (declared in the config as
//	       a fail-stop node: "on_exit": "restart").
//
// -nosync never fsyncs (the negative control).
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

var (
	onEIO  = flag.String("on-eio", "retry", "what a failed fsync does: `retry` (the bug) or exit (the fix)")
	noSync = flag.Bool("nosync", false, "never fsync (negative control)")
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/log", "log `directory`")
	flag.Parse()
	if *onEIO != "retry" && *onEIO != "exit" {
		fmt.Fprintf(os.Stderr, "-on-eio: %q is not retry or exit\n", *onEIO)
		os.Exit(2)
	}
	if err := run(*addr, *dir); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

// syncFile is the server's only way to fsync a file or a directory; name is what the
// messages call it (the log is synced through the fd it was created with, as
// current.tmp).
func syncFile(f *os.File, name string) error {
	if *noSync {
		return nil
	}
	err := f.Sync()
	if err == nil {
		return nil
	}
	if *onEIO == "exit" {
		// Fail-stop: nothing after a failed fsync can be trusted.
		fmt.Fprintf(os.Stderr, "fsync %s failed: %v: stopping\n", name, err)
		os.Exit(1)
	}
	// The bug: try again, and believe it.
	fmt.Printf("fsync %s failed: %v: retrying\n", name, err)
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(syncFile(d, dir), d.Close())
}

type server struct {
	mu   sync.Mutex
	log  *os.File
	path string
	kv   map[string]string
}

func run(addr, dir string) error {
	if err := mkdirDurable(dir); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	s := &server{kv: map[string]string{}}
	n, err := s.recover(dir)
	if err != nil {
		return err
	}
	fmt.Printf("recovered %d records, %d keys\n", n, len(s.kv))
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, s)
}

// recover reads the log's valid records into s.kv, rewrites them into a fresh file that
// replaces the log, and opens it for appending.
func (s *server) recover(dir string) (int, error) {
	path := filepath.Join(dir, "current")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("read log: %w", err)
	}
	var recs [][]byte
	for len(data) >= 8 {
		n := binary.LittleEndian.Uint32(data)
		sum := binary.LittleEndian.Uint32(data[4:])
		if n == 0 || uint64(n) > uint64(len(data)-8) || crc32.ChecksumIEEE(data[8:8+n]) != sum {
			// A torn tail, or a record the disk lost: stop here. With a correct fsync
			// discipline nothing acknowledged lies beyond it.
			break
		}
		rec := data[8 : 8+n]
		key, value, ok := strings.Cut(string(rec), " ")
		if !ok || key == "" {
			return 0, fmt.Errorf("log record %d: not a record the server wrote: %q", len(recs), rec)
		}
		s.kv[key] = value
		recs = append(recs, rec)
		data = data[8+n:]
	}
	tmp := filepath.Join(dir, "current.tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("rewrite log: %w", err)
	}
	for _, rec := range recs {
		if _, err := f.Write(frame(rec)); err != nil {
			return 0, fmt.Errorf("rewrite log: %w", err)
		}
	}
	if err := syncFile(f, tmp); err != nil {
		return 0, fmt.Errorf("rewrite log: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("rewrite log: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return 0, fmt.Errorf("rewrite log: %w", err)
	}
	// f now names the log: keep appending through it (O_APPEND is not needed, the
	// offset is at its end).
	s.log, s.path = f, path
	return len(recs), nil
}

func frame(rec []byte) []byte {
	b := make([]byte, 8+len(rec))
	binary.LittleEndian.PutUint32(b, uint32(len(rec)))
	binary.LittleEndian.PutUint32(b[4:], crc32.ChecksumIEEE(rec))
	copy(b[8:], rec)
	return b
}

// Put appends the record and fsyncs it; only then is the client told OK.
func (s *server) Put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.log.Write(frame([]byte(key + " " + value))); err != nil {
		return err
	}
	if err := syncFile(s.log, s.path); err != nil {
		return err
	}
	s.kv[key] = value
	return nil
}

// Get answers from the recovered state plus what was acknowledged since.
func (s *server) Get(key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kv[key]
	return v, ok, nil
}

// mkdirDurable creates dir and fsyncs the parent of every directory it creates.
func mkdirDurable(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirDurable(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	return syncDir(filepath.Dir(dir))
}
