// Command v1.2.9 is ../server built against github.com/tidwall/buntdb v1.2.9: the old
// build of seedfall.upgrade.json and seedfall.rollback.json (a module of its own, to pin
// the older release; the code is a copy of ../server/main.go). PUT answers OK once the
// Update transaction committed; with SyncPolicy Always every commit is fsynced first.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
	"github.com/tidwall/buntdb"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	path := flag.String("db", "/data/bunt.db", "database `file`")
	sync := flag.String("sync", "always", "SyncPolicy: always, everysecond or never (never is a negative control)")
	noShrink := flag.Bool("noshrink", false, "set AutoShrinkDisabled")
	shrinkPct := flag.Int("shrink-percentage", 10, "AutoShrinkPercentage")
	shrinkMin := flag.Int("shrink-min-size", 1024, "AutoShrinkMinSize in `bytes`")
	flag.Parse()
	cfg := buntdb.Config{
		AutoShrinkPercentage: *shrinkPct,
		AutoShrinkMinSize:    *shrinkMin,
		AutoShrinkDisabled:   *noShrink,
	}
	switch *sync {
	case "always":
		cfg.SyncPolicy = buntdb.Always
	case "everysecond":
		cfg.SyncPolicy = buntdb.EverySecond
	case "never":
		cfg.SyncPolicy = buntdb.Never
	default:
		fmt.Fprintf(os.Stderr, "server: -sync=%q: want always, everysecond or never\n", *sync)
		os.Exit(2)
	}
	if err := run(*addr, *path, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func run(addr, path string, cfg buntdb.Config) error {
	if err := createDurable(path); err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	db, err := buntdb.Open(path)
	if err != nil {
		return fmt.Errorf("open buntdb: %w", err)
	}
	if err := db.SetConfig(cfg); err != nil {
		return fmt.Errorf("buntdb config: %w", err)
	}
	n := 0
	db.View(func(tx *buntdb.Tx) error { n, _ = tx.Len(); return nil })
	fmt.Printf("opened %s: %d keys\n", path, n)

	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, store{db})
}

// createDurable creates the database file and its directory and fsyncs the
// directories, so that under strict_dirs the file itself survives a crash. buntdb
// creates a missing file with O_CREATE but never fsyncs the directory; this harness
// takes that step so the shrink bug is what the strict configuration tests.
func createDurable(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		df, err := os.Open(d)
		if err != nil {
			return err
		}
		if err := errors.Join(df.Sync(), df.Close()); err != nil {
			return err
		}
	}
	return nil
}

// store puts buntdb behind the protocol.
type store struct{ db *buntdb.DB }

// Put sets key in one transaction; with SyncPolicy Always the commit fsyncs.
func (st store) Put(key, value string) error {
	return st.db.Update(func(tx *buntdb.Tx) error {
		_, _, err := tx.Set(key, value, nil)
		return err
	})
}

func (st store) Get(key string) (string, bool, error) {
	var v string
	err := st.db.View(func(tx *buntdb.Tx) error {
		var err error
		v, err = tx.Get(key)
		return err
	})
	if errors.Is(err, buntdb.ErrNotFound) {
		return "", false, nil
	}
	return v, err == nil, err
}
