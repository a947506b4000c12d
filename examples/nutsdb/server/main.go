// Command server wraps github.com/nutsdb/nutsdb behind the line protocol of
// examples/kvcheck, so that seedfall can crash it mid-write and check every
// acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once db.Update committed: SyncEnable, the default, fsyncs)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// nutsdb is opened in its default FileIO mode (WASI has no mmap) with SyncEnable true
// and a small segment size, so data files roll over often. If nutsdb.Open fails the
// server exits 1 with the error: the acknowledged writes in it are unreachable.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/nutsdb/nutsdb"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

const bucket = "kv"

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/nutsdb", "database `directory`")
	segSize := flag.Int64("segment-size", 16*1024, "nutsdb segment size in `bytes` (small, so data files roll over)")
	noSync := flag.Bool("nosync", false, "SyncEnable false: acknowledge before fsync (negative control)")
	flag.Parse()
	if err := run(*addr, *dir, *segSize, *noSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct{ db *nutsdb.DB }

func run(addr, dir string, segSize int64, noSync bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	db, err := nutsdb.Open(nutsdb.DefaultOptions,
		nutsdb.WithDir(dir),
		nutsdb.WithSegmentSize(segSize),
		nutsdb.WithSyncEnable(!noSync),
		nutsdb.WithRWMode(nutsdb.FileIO))
	if err != nil {
		return fmt.Errorf("open nutsdb: %w", err)
	}
	err = db.Update(func(tx *nutsdb.Tx) error {
		if tx.ExistBucket(nutsdb.DataStructureBTree, bucket) {
			return nil
		}
		return tx.NewBucket(nutsdb.DataStructureBTree, bucket)
	})
	if err != nil {
		return fmt.Errorf("create bucket: %w", err)
	}
	fmt.Println("opened nutsdb")
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, &server{db: db})
}

func (s *server) Put(key, value string) error {
	return s.db.Update(func(tx *nutsdb.Tx) error {
		return tx.Put(bucket, []byte(key), []byte(value), nutsdb.Persistent)
	})
}

func (s *server) Get(key string) (string, bool, error) {
	var v []byte
	err := s.db.View(func(tx *nutsdb.Tx) error {
		var err error
		v, err = tx.Get(bucket, []byte(key))
		return err
	})
	if errors.Is(err, nutsdb.ErrNotFoundKey) || errors.Is(err, nutsdb.ErrKeyNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(v), true, nil
}
