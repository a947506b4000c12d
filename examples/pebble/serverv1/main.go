// Command server wraps github.com/cockroachdb/pebble (v1.1.5, unmodified) behind the
// line protocol of examples/kvcheck, so that seedfall can crash it mid-write and check
// every acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once db.Set(k, v, pebble.Sync) returned)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// pebble builds for the simulator through seedfall's Linux personality (its vfs files for
// Linux, amd64's maxArrayLen, x/sys/unix served by the platform layer: docs/overlay.md);
// no port was written for it. The memtable is 256 KiB, so that the runs flush memtables
// to sstables and compact them, and recover from the WAL after every crash. -nosync
// writes with pebble.NoSync (negative control).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/pebble", "database `directory`")
	noSync := flag.Bool("nosync", false, "write with pebble.NoSync: acknowledge before the WAL is synced (negative control)")
	memtable := flag.Uint64("memtable", 256<<10, "MemTableSize in `bytes`")
	flag.Parse()
	if err := run(*addr, *dir, *noSync, *memtable); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct {
	db *pebble.DB
	wo *pebble.WriteOptions
}

func run(addr, dir string, noSync bool, memtable uint64) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	db, err := pebble.Open(dir, &pebble.Options{MemTableSize: memtable, EventListener: events()})
	if err != nil {
		return fmt.Errorf("open pebble: %w", err)
	}
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	wo := pebble.Sync
	if noSync {
		wo = pebble.NoSync
	}
	return kvcheck.Serve(ln, &server{db: db, wo: wo})
}

// events prints the WAL recoveries and flushes, so that a run's trace shows them.
func events() *pebble.EventListener {
	return &pebble.EventListener{
		WALCreated: func(info pebble.WALCreateInfo) {
			fmt.Printf("pebble: WAL %s created\n", info.Path)
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err == nil {
				fmt.Printf("pebble: flushed %d memtable(s) to %d table(s)\n", info.Input, len(info.Output))
			}
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if info.Err == nil {
				fmt.Printf("pebble: compacted into L%d\n", info.Output.Level)
			}
		},
		TableIngested: func(pebble.TableIngestInfo) {},
	}
}

func (s *server) Put(key, value string) error {
	return s.db.Set([]byte(key), []byte(value), s.wo)
}

func (s *server) Get(key string) (string, bool, error) {
	v, closer, err := s.db.Get([]byte(key))
	if err == pebble.ErrNotFound {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer closer.Close()
	return string(v), true, nil
}
