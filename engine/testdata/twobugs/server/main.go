// Command server is a key-value server (kvcheck's line protocol) with two distinct bugs,
// for TestSignatureTwoBugs:
//
//   - a PUT of an even key (k0, k2, ...) is acknowledged before it is synced: a power loss
//     loses it ("acknowledged write lost");
//   - a server that finds the marker its previous process left unsynced (so the previous
//     process was killed, not powered off: a kill keeps the page cache) answers every GET
//     of a key numbered 1 mod 4 with an error ("read of acknowledged key ... fails").
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

const dir = "/data/kv"

func main() {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	marker := filepath.Join(dir, "started")
	_, err := os.Stat(marker)
	s := &store{killed: err == nil}
	// Written and never synced: only a process death (not a power loss) keeps it.
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := sim.Listen("tcp", ":7000")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(kvcheck.Serve(ln, s))
}

type store struct{ killed bool }

func number(key string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(key, "k"))
	return n
}

func (s *store) Put(key, value string) error {
	path := filepath.Join(dir, key)
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if number(key)%2 == 1 {
		err = errors.Join(err, f.Sync())
	}
	if err := errors.Join(err, f.Close()); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	if number(key)%2 == 1 {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		return errors.Join(d.Sync(), d.Close())
	}
	return nil
}

func (s *store) Get(key string) (string, bool, error) {
	if s.killed && number(key)%4 == 1 {
		return "", false, errors.New("checksum mismatch")
	}
	data, err := os.ReadFile(filepath.Join(dir, key))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	return string(data), err == nil, err
}
