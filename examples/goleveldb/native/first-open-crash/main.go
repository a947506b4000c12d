// Command first-open-crash reproduces the goleveldb finding natively, on the host,
// against the real github.com/syndtr/goleveldb (no seedfall): a process killed inside
// the first leveldb.OpenFile of a new directory, after it created MANIFEST-000000 and
// before it renamed CURRENT.0 to CURRENT, leaves a directory that no later OpenFile
// opens.
//
//	go run ./native/first-open-crash                   # both states: Open fails
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-incomplete-first-current.patch ./native/first-open-crash   # both open
//
// The states are written by this program, as a SIGKILL leaves them on any Linux
// filesystem (no power loss needed: a killed process's completed writes survive):
//   - "manifest only": killed between creating MANIFEST-000000 and creating CURRENT.0
//     (ops 9-12 of the first Open in the seedfall trace): an empty MANIFEST-000000;
//   - "empty CURRENT.0": killed between creating CURRENT.0 and writing it (op 13-14):
//     a synced manifest (copied from a real first Open) and an empty CURRENT.0.
//
// Nothing was acknowledged in either state: the first OpenFile never returned.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/syndtr/goleveldb/leveldb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	base, err := os.MkdirTemp("", "goleveldb-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)

	// A real first Open's manifest, for the second state.
	ref := filepath.Join(base, "ref")
	db, err := leveldb.OpenFile(ref, nil)
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	cur, err := os.ReadFile(filepath.Join(ref, "CURRENT"))
	if err != nil {
		return err
	}
	manifest, err := os.ReadFile(filepath.Join(ref, strings.TrimSpace(string(cur))))
	if err != nil {
		return err
	}

	states := []struct {
		name  string
		files map[string][]byte
	}{
		{"manifest only", map[string][]byte{"MANIFEST-000000": nil}},
		{"empty CURRENT.0", map[string][]byte{"MANIFEST-000000": manifest, "CURRENT.0": nil}},
	}
	for i, s := range states {
		dir := filepath.Join(base, fmt.Sprintf("db%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		for name, data := range s.files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("%s: %s\n", s.name, tryOpen(dir))
	}
	return nil
}

// tryOpen opens dir twice (a start, then a restart) and writes and reads a key.
func tryOpen(dir string) string {
	for range 2 {
		db, err := leveldb.OpenFile(dir, nil)
		if err != nil {
			return "OpenFile: " + err.Error()
		}
		if err := db.Put([]byte("k"), []byte("v"), nil); err != nil {
			db.Close()
			return "Put: " + err.Error()
		}
		if err := db.Close(); err != nil {
			return "Close: " + err.Error()
		}
	}
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		return "OpenFile: " + err.Error()
	}
	defer db.Close()
	v, err := db.Get([]byte("k"), nil)
	if err != nil {
		return "Get: " + err.Error()
	}
	return fmt.Sprintf("OpenFile ok, reopened twice, k=%s", v)
}
