// Command server wraps github.com/akrylysov/pogreb behind the line protocol of
// examples/kvcheck, so that seedfall can crash it mid-write and check every
// acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once db.Put returned; BackgroundSyncInterval -1 syncs every write)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// pogreb is opened with BackgroundSyncInterval: -1 ("makes the DB call Sync() after
// every write operation", the strongest option it documents) and FileSystem: fs.OS, or
// with -mmap its default fs.OSMMap (reads through mmap, which seedfall's wasip1
// platform layer provides). pogreb recovers on Open after a crash without the user's
// help; if Open fails the server exits 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/akrylysov/pogreb"
	"github.com/akrylysov/pogreb/fs"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/pogreb", "database `directory`")
	noSync := flag.Bool("nosync", false, "BackgroundSyncInterval 0 (never sync): acknowledge before fsync (negative control)")
	mmap := flag.Bool("mmap", false, "FileSystem fs.OSMMap (pogreb's default) instead of fs.OS")
	flag.Parse()
	fsys := fs.OS
	if *mmap {
		fsys = fs.OSMMap
	}
	if err := run(*addr, *dir, *noSync, fsys); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct{ db *pogreb.DB }

func run(addr, dir string, noSync bool, fsys fs.FileSystem) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	interval := time.Duration(-1)
	if noSync {
		interval = 0
	}
	db, err := pogreb.Open(dir, &pogreb.Options{BackgroundSyncInterval: interval, FileSystem: fsys})
	if err != nil {
		return fmt.Errorf("open pogreb: %w", err)
	}
	fmt.Printf("opened pogreb: %d keys\n", db.Count())
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, &server{db: db})
}

func (s *server) Put(key, value string) error {
	return s.db.Put([]byte(key), []byte(value))
}

func (s *server) Get(key string) (string, bool, error) {
	v, err := s.db.Get([]byte(key))
	if err != nil {
		return "", false, err
	}
	if v == nil {
		return "", false, nil
	}
	return string(v), true, nil
}
