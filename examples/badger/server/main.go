// Command server wraps github.com/dgraph-io/badger/v4 behind the line protocol of
// examples/kvcheck:
//
//	PUT key value\n  ->  OK\n      (once db.Update returned with SyncWrites: the value log is fsynced)
//	GET key\n        ->  VAL value\n  or  NONE\n   (db.View)
//
// badger maps its memtable files (*.mem) and value-log files read-write through
// ristretto's z.OpenMmapFile, which seedfall's platform layer serves (docs/overlay.md).
// Its defaults are sized for servers (64 MiB memtables, 1 GiB value-log files, each mapped
// whole): here they are 1 MiB, so that a run flushes memtables into SSTables, rotates
// the value log and compacts levels in seconds, within wasm's memory. Values longer than
// 64 bytes go to the value log. badger replays its memtable WALs and value log on Open
// after a crash; if Open fails the server exits 1.
package main

import (
	"flag"
	"fmt"
	"os"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/badger", "database `directory`")
	noSync := flag.Bool("nosync", false, "SyncWrites false: acknowledge before fsync (negative control)")
	flag.Parse()
	if err := run(*addr, *dir, *noSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct{ db *badger.DB }

func run(addr, dir string, noSync bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(!noSync).
		WithMemTableSize(1 << 20).WithValueLogFileSize(1 << 20).WithBaseTableSize(256 << 10).
		WithNumMemtables(2).WithNumLevelZeroTables(2).WithNumLevelZeroTablesStall(4).
		WithValueThreshold(64).WithBlockCacheSize(1 << 20).WithIndexCacheSize(0).
		WithNumCompactors(2).WithLogger(nil)
	db, err := badger.Open(opts)
	if err != nil {
		return fmt.Errorf("open badger: %w", err)
	}
	fmt.Println("opened badger")
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, &server{db: db})
}

func (s *server) Put(key, value string) error {
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(key), []byte(value)) })
}

func (s *server) Get(key string) (value string, found bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(key))
		if err == badger.ErrKeyNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		value, found = string(v), true
		return err
	})
	return value, found, err
}
