// Command server wraps github.com/recoilme/pudge behind the line protocol of
// examples/kvcheck, so that seedfall can crash it mid-write and check every
// acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once db.Set returned and, with -sync, the syncer ran)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// pudge has no per-write fsync ("No fsync on every insert", its README): its strongest
// documented setting is Config.SyncInterval, a background goroutine that fsyncs the
// index and the value file every SyncInterval seconds (README: "SyncInterval: 1 //
// every second fsync"). So that an acknowledgement means what pudge promises to make
// durable, the server answers OK to a PUT only SyncInterval+500ms after Set returned (of
// virtual time, which costs nothing): the syncer takes the database lock, fsyncs both
// files, unlocks and sleeps SyncInterval, so a whole round starts after Set returned
// and ends within that wait (a round's two fsyncs take milliseconds; the wait stays
// under the client's 2s request timeout). The client sends one PUT at a time, so at most one write is
// outside the promise when a crash comes. -sync 0 (pudge's default, "0 - disable sync")
// acknowledges at once and never syncs: the negative control.
//
// Values are stored as []byte (no gob), so a GET returns exactly the bytes pudge reads
// at the recorded offset and size. If Open fails the server exits 1; if it panics, the
// panic is the run's failure.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/recoilme/pudge"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	file := flag.String("file", "/data/pudge/db", "database `file` (its index is FILE.idx)")
	syncSec := flag.Int("sync", 1, "Config.SyncInterval in `seconds`; 0 never syncs and acknowledges at once (negative control)")
	flag.Parse()
	if err := run(*addr, *file, *syncSec); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct {
	db *pudge.Db
	// wait is how long a PUT waits after Set before it is acknowledged: long enough
	// for a whole round of pudge's background syncer to start and end after it.
	wait time.Duration
}

func run(addr, file string, syncSec int) error {
	if err := kvcheck.MkdirDurable("/data/pudge"); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	db, err := pudge.Open(file, &pudge.Config{SyncInterval: syncSec})
	if err != nil {
		return fmt.Errorf("open pudge: %w", err)
	}
	n, _ := db.Count()
	fmt.Printf("opened pudge: %d keys\n", n)
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, &server{db: db, wait: syncWait(syncSec)})
}

func (s *server) Put(key, value string) error {
	if err := s.db.Set([]byte(key), []byte(value)); err != nil {
		return err
	}
	time.Sleep(s.wait)
	return nil
}

func (s *server) Get(key string) (string, bool, error) {
	var v []byte
	err := s.db.Get([]byte(key), &v)
	if errors.Is(err, pudge.ErrKeyNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(v), true, nil
}

// syncWait is the wait before an acknowledgement: none without a syncer, else one
// SyncInterval (the syncer's sleep) and 500ms for its round of two fsyncs.
func syncWait(syncSec int) time.Duration {
	if syncSec <= 0 {
		return 0
	}
	return time.Duration(syncSec)*time.Second + 500*time.Millisecond
}
