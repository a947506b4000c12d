// Package boltkv is a key-value server over go.etcd.io/bbolt, behind the line protocol
// of examples/kvcheck: PUT is one db.Update (a read-write transaction, committed, so
// fdatasync'ed unless NoSync), GET one db.View. bbolt is unmodified: it builds for
// wasip1 through seedfall's wasip1 platform layer (flock, mmap; docs/overlay.md).
//
// It is a package, not a main, so that one server serves the bbolt versions this
// example runs (v1.4.3 here, v1.5.0 in ./v1.5).
package boltkv

import (
	"flag"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

var bucket = []byte("kv")

// Main parses the server's flags, opens the database (bbolt recovers on Open: it picks
// the newer valid meta page) and serves it; a failed Open exits 1.
func Main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	path := flag.String("db", "/data/bolt.db", "database `file`")
	noSync := flag.Bool("nosync", false, "DB.NoSync: commit without fdatasync (negative control)")
	noFreelistSync := flag.Bool("nofreelistsync", false, "Options.NoFreelistSync: rebuild the freelist on open instead of writing it")
	freelist := flag.String("freelist", "array", "Options.FreelistType: array or map")
	flag.Parse()
	opts := &bolt.Options{
		// Linux's page size: on wasm os.Getpagesize() is a 64 KiB wasm page, which
		// bbolt would take as its page size otherwise.
		PageSize:       4096,
		NoFreelistSync: *noFreelistSync,
		FreelistType:   bolt.FreelistArrayType,
	}
	if *freelist == "map" {
		opts.FreelistType = bolt.FreelistMapType
	}
	if err := run(*addr, *path, *noSync, opts); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct{ db *bolt.DB }

func run(addr, path string, noSync bool, opts *bolt.Options) error {
	if err := kvcheck.MkdirDurable("/data"); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	db, err := bolt.Open(path, 0o600, opts)
	if err != nil {
		return fmt.Errorf("open bbolt: %w", err)
	}
	db.NoSync = noSync
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		return fmt.Errorf("create bucket: %w", err)
	}
	var keys int
	db.View(func(tx *bolt.Tx) error { keys = tx.Bucket(bucket).Stats().KeyN; return nil })
	fmt.Printf("opened bbolt %s: %d keys\n", path, keys)
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, &server{db: db})
}

func (s *server) Put(key, value string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).Put([]byte(key), []byte(value))
	})
}

func (s *server) Get(key string) (value string, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucket).Get([]byte(key)); v != nil {
			value, ok = string(v), true
		}
		return nil
	})
	return value, ok, err
}
