// Command torn-tail reproduces finding 1 natively, on the host, against the real
// github.com/tidwall/wal v1.2.1 (no seedfall): a log whose last segment ends in a
// partial entry cannot be opened at all, so every acknowledged entry before it is
// unreachable.
//
//	go run ./native/torn-tail                      # Open fails: log corrupt
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-truncate-and-dirsync.patch ./native/torn-tail   # 10 of 10 read back
//
// The partial entry is written by this program (a length prefix of 100 and 3 of the
// 100 bytes), as a power loss during Write leaves it when the file size reached the
// disk before the data, or a writer killed inside a write(2) of more than a page leaves
// it (Linux returns a short write when a fatal signal arrives between pages).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tidwall/wal"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "tidwall-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	l, err := wal.Open(dir, nil) // default options: every Write is fsynced
	if err != nil {
		return err
	}
	for i := uint64(1); i <= 10; i++ {
		if err := l.Write(i, []byte(fmt.Sprintf("entry %d", i))); err != nil {
			return err
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	fmt.Println("wrote entries 1..10 (each fsynced), closed the log")
	segs, err := filepath.Glob(filepath.Join(dir, "0*"))
	if err != nil || len(segs) == 0 {
		return fmt.Errorf("no segment in %s", dir)
	}
	last := segs[len(segs)-1]
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte{100, 'e', 'n', 't'}); err != nil { // uvarint 100, then 3 of 100 bytes
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("appended a 4-byte partial entry 11 to %s, as an interrupted Write leaves it\n", filepath.Base(last))
	l, err = wal.Open(dir, nil)
	if err != nil {
		fmt.Printf("wal.Open: %v: 0 of 10 acknowledged entries readable\n", err)
		return nil
	}
	defer l.Close()
	n := 0
	for i := uint64(1); i <= 10; i++ {
		if data, err := l.Read(i); err == nil && string(data) == fmt.Sprintf("entry %d", i) {
			n++
		}
	}
	last11, _ := l.LastIndex()
	fmt.Printf("wal.Open: ok, %d of 10 acknowledged entries read back, last index %d\n", n, last11)
	if err := l.Write(11, []byte("entry 11")); err != nil {
		return fmt.Errorf("write 11 after the repair: %w", err)
	}
	fmt.Println("entry 11 written again after the repair")
	return nil
}
