// Command server wraps github.com/syndtr/goleveldb behind the line protocol of
// examples/kvcheck, so that seedfall can crash it mid-write and check every
// acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once db.Put with WriteOptions{Sync: true} returned)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// The database is opened with leveldb.OpenFile and a small write buffer, so the
// memtable is flushed to table files and compacted often (new files, manifest
// rewrites, journal rotation). LevelDB promises that an open after a crash recovers
// from its journal; if OpenFile fails the server prints the error and exits 1, which
// seedfall reports as a failure: every acknowledged write is unreachable.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/leveldb", "database `directory`")
	writeBuffer := flag.Int("write-buffer", 4096, "opt.Options.WriteBuffer in `bytes` (small, so the memtable is flushed often)")
	noSync := flag.Bool("nosync", false, "WriteOptions{Sync: false}: acknowledge before fsync (negative control)")
	flag.Parse()
	if err := run(*addr, *dir, *writeBuffer, *noSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct {
	db *leveldb.DB
	wo *opt.WriteOptions
}

func run(addr, dir string, writeBuffer int, noSync bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	db, err := leveldb.OpenFile(dir, &opt.Options{WriteBuffer: writeBuffer})
	if err != nil {
		return fmt.Errorf("open leveldb: %w", err)
	}
	n := 0
	it := db.NewIterator(nil, nil)
	for it.Next() {
		n++
	}
	it.Release()
	if err := it.Error(); err != nil {
		return fmt.Errorf("iterate leveldb: %w", err)
	}
	fmt.Printf("opened leveldb: %d keys\n", n)
	s := &server{db: db, wo: &opt.WriteOptions{Sync: !noSync}}
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, s)
}

func (s *server) Put(key, value string) error {
	return s.db.Put([]byte(key), []byte(value), s.wo)
}

func (s *server) Get(key string) (string, bool, error) {
	v, err := s.db.Get([]byte(key), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(v), true, nil
}
