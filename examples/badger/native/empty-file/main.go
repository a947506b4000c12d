// Command empty-file reproduces the badger finding natively, on the host, against the
// real github.com/dgraph-io/badger/v4 (no seedfall): a process killed between creating
// a memtable WAL (*.mem) or value-log file (*.vlog) and its ftruncate to the mapped
// size leaves an empty file, and every later badger.Open fails on it.
//
//	go run ./native/empty-file                   # both states: Open fails
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-empty-file.patch ./native/empty-file   # both open, keys intact
//
// For each state a child process opens a new database with SyncWrites, puts ten keys
// (values past ValueThreshold, so they go to the value log) and exits without Close, as
// a killed process does (its synced writes survive; no power loss is involved). The
// program then creates the next file empty, as a kill between ristretto's
// OpenMmapFile's create (z/file.go:68) and its truncate (z/file.go:37) leaves it: the
// next memtable's WAL (00002.mem) in one state, the next value-log file (000002.vlog)
// in the other. Then it opens the directory and reads the ten keys back.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	badger "github.com/dgraph-io/badger/v4"
)

const keys = 10

func main() {
	child := flag.String("child", "", "put the keys into this `directory` and exit without Close")
	flag.Parse()
	if *child != "" {
		if err := put(*child); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0) // no Close: the process just ends, as a killed one does
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func options(dir string) badger.Options {
	return badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil).
		WithMemTableSize(1 << 20).WithValueLogFileSize(1 << 20).WithValueThreshold(64)
}

func value(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 100) }

func put(dir string) error {
	db, err := badger.Open(options(dir))
	if err != nil {
		return err
	}
	for i := range keys {
		if err := db.Update(func(txn *badger.Txn) error {
			return txn.Set([]byte(fmt.Sprintf("k%d", i)), value(i))
		}); err != nil {
			return err
		}
	}
	return nil
}

func run() error {
	base, err := os.MkdirTemp("", "badger-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, s := range []struct{ name, file string }{
		{"empty memtable WAL", "00002.mem"},
		{"empty value log", "000002.vlog"},
	} {
		dir := filepath.Join(base, filepath.Ext(s.file)[1:])
		if out, err := exec.Command(self, "-child", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: child: %v\n%s", s.name, err, out)
		}
		if err := os.WriteFile(filepath.Join(dir, s.file), nil, 0o666); err != nil {
			return err
		}
		fmt.Printf("%s: %s\n", s.name, reopen(dir))
	}
	return nil
}

// reopen opens dir twice (the second time after a clean Close) and reads the keys back.
func reopen(dir string) string {
	for range 2 {
		db, err := badger.Open(options(dir))
		if err != nil {
			return fmt.Sprintf("Open: %v", err)
		}
		found := 0
		err = db.View(func(txn *badger.Txn) error {
			for i := range keys {
				item, err := txn.Get([]byte(fmt.Sprintf("k%d", i)))
				if err == badger.ErrKeyNotFound {
					continue
				}
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if bytes.Equal(v, value(i)) {
					found++
				}
			}
			return nil
		})
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Sprintf("Open ok, then: %v", err)
		}
		if found != keys {
			return fmt.Sprintf("Open ok, %d of %d keys", found, keys)
		}
	}
	return fmt.Sprintf("Open ok, reopened, %d of %d keys", keys, keys)
}
