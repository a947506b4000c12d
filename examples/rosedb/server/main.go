// Command server wraps github.com/rosedblabs/rosedb/v2 behind a tiny line protocol, so
// that seedfall can crash it in the middle of a write and check every acknowledged
// write.
//
//	PUT key value\n  ->  OK\n      (once a batch with BatchOptions.Sync committed)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// If rosedb cannot open its own directory the server prints the library's error
// ("open rosedb: invalid crc") and exits 1, which seedfall reports as a failure.
//
// rosedb imports github.com/gofrs/flock, whose syscall.Flock builds for wasip1 through
// seedfall's wasip1 platform layer (see the README).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/rosedblabs/rosedb/v2"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/rosedb", "database `directory`")
	segSize := flag.Int64("segment-size", 4096, "Options.SegmentSize in `bytes` (small, so segments rotate)")
	noSync := flag.Bool("nosync", false, "commit with BatchOptions.Sync false: acknowledge before fsync (negative control)")
	dbSync := flag.Bool("dbsync", false, "open with Options.Sync true and write with DB.Put, as rosedb documents it (finding 18: never fsyncs)")
	flag.Parse()
	if *dbSync && *noSync {
		fmt.Fprintln(os.Stderr, "-dbsync and -nosync exclude each other")
		os.Exit(2)
	}
	if err := run(*addr, *dir, *segSize, !*noSync, *dbSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func run(addr, dir string, segSize int64, syncWrites, dbSync bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	opts := rosedb.DefaultOptions
	opts.DirPath = dir
	opts.SegmentSize = segSize
	// Options.Sync stays false: in v2.4.0 a DB opened with Sync true never fsyncs a
	// Put (WAL.WriteAll does not sync, and Batch.Commit syncs only when the DB option
	// is false). A batch with BatchOptions.Sync true is what makes a write durable.
	// With -dbsync the server does what Options.Sync documents instead ("Sync being true
	// means write followed by fsync") and writes with DB.Put.
	opts.Sync = dbSync
	db, err := rosedb.Open(opts)
	if err != nil {
		return fmt.Errorf("open rosedb: %w", err)
	}
	fmt.Printf("opened rosedb: %d keys\n", db.Stat().KeysNum)

	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, store{db, syncWrites, dbSync})
}

// store puts rosedb behind the protocol.
type store struct {
	db         *rosedb.DB
	syncWrites bool
	dbPut      bool
}

// Put commits a one-entry batch; with BatchOptions.Sync the commit fsyncs. With
// -dbsync it is DB.Put on a DB opened with Options.Sync.
func (st store) Put(key, value string) error {
	if st.dbPut {
		return st.db.Put([]byte(key), []byte(value))
	}
	b := st.db.NewBatch(rosedb.BatchOptions{Sync: st.syncWrites})
	if err := b.Put([]byte(key), []byte(value)); err != nil {
		b.Rollback()
		return err
	}
	return b.Commit()
}

func (st store) Get(key string) (string, bool, error) {
	v, err := st.db.Get([]byte(key))
	if errors.Is(err, rosedb.ErrKeyNotFound) {
		return "", false, nil
	}
	return string(v), err == nil, err
}
