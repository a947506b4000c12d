// Command server is the negative control of the kvcheck read-back: a store that keeps
// each key in a file of its own and rewrites it in place, opening it with O_TRUNC and
// then writing the new value, with an fsync before the acknowledgement but nothing that
// orders the truncate before the write's durability (no temporary file, no rename). A
// crash between the truncate and the write, or in the write, can leave an acknowledged
// key's file durably empty or half-written. The client retries the interrupted PUT on
// the same key, so a checker that writes again before it reads never sees the damage.
//
// With -safe it replaces the file instead (write a temporary file, fsync it, rename it
// over the key's file, fsync the directory): the positive control, which must pass.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"

	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/kv", "`directory` with one file per key")
	safe := flag.Bool("safe", false, "replace a key's file atomically (temporary file, fsync, rename, directory fsync) instead of rewriting it in place")
	flag.Parse()
	if err := run(*addr, *dir, *safe); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func run(addr, dir string, safe bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create store directory: %w", err)
	}
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if safe {
		return kvcheck.Serve(ln, replace(dir))
	}
	return kvcheck.Serve(ln, inPlace(dir))
}

// inPlace is the unsafe store: key k lives in dir/k.
type inPlace string

func (d inPlace) Put(key, value string) error {
	f, err := os.OpenFile(filepath.Join(string(d), key), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(value)); err != nil {
		f.Close()
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

func (d inPlace) Get(key string) (string, bool, error) { return get(string(d), key) }

// replace is the safe store: the same files, each replaced by a rename.
type replace string

func (d replace) Put(key, value string) error {
	tmp := filepath.Join(string(d), key+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(value)); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(string(d), key)); err != nil {
		return err
	}
	dir, err := os.Open(string(d))
	if err != nil {
		return err
	}
	return errors.Join(dir.Sync(), dir.Close())
}

func (d replace) Get(key string) (string, bool, error) { return get(string(d), key) }

func get(dir, key string) (string, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, key))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}
