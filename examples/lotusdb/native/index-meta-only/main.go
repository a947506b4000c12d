// Command index-meta-only shows the index finding's result natively, on the host,
// against the real github.com/lotusdblabs/lotusdb/v2 v2.1.0 (no seedfall): the state a
// power loss leaves when the disk kept the meta page of the bbolt commit lotusdb.Open
// makes (bptree.go:53-61, NoSync true, never synced) but not the new pages it points
// to. The program writes that state itself: it opens and closes a new DB (bbolt's init
// pages 0-3 of each INDEX file are fdatasynced by bbolt; the commit's are not), zeroes
// in INDEX.0 the root and freelist pages the newest meta page names (pages 4 and up,
// the commit's own, as if they never reached the disk), and opens the DB again:
// lotusdb.Open panics "invalid freelist page: 0, page type is unknown<00>", in each of
// two restarts (new processes).
//
// The state is made by hand, so a patched lotusdb panics on it too. The patch
// (patches/lotusdb-fix-index-nosync.patch) keeps the state from arising: bbolt then
// fdatasyncs the pages before it writes the meta page (native/index-commit).
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/lotusdblabs/lotusdb/v2"
)

func main() {
	// lotusdb's package init makes an empty directory (options.go:147): remove it.
	os.Remove(lotusdb.DefaultOptions.DirPath)
	if len(os.Args) == 3 && os.Args[1] == "open" {
		// A restart: a new process opens the directory (the one that panicked
		// still holds lotusdb's file lock).
		fmt.Println(open(options(os.Args[2])))
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "lotusdb-index-meta-only-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := lotusdb.Open(options(dir))
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}

	path := filepath.Join(dir, "INDEX.0")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// A meta page: the page header (16 bytes), then magic, version, pageSize, flags,
	// the root bucket {root pgid, sequence}, freelist pgid, pgid, txid, checksum.
	ps := int(binary.LittleEndian.Uint32(b[16+8 : 16+12]))
	best, bestTx := -1, uint64(0)
	for m := 0; m < 2; m++ {
		tx := binary.LittleEndian.Uint64(b[m*ps+16+48:])
		if best < 0 || tx > bestTx {
			best, bestTx = m, tx
		}
	}
	meta := b[best*ps+16:]
	root := binary.LittleEndian.Uint64(meta[16:24])
	free := binary.LittleEndian.Uint64(meta[32:40])
	fmt.Printf("INDEX.0: page size %d, newest meta page %d (txid %d): root page %d, freelist page %d\n", ps, best, bestTx, root, free)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	for _, pg := range []uint64{root, free} {
		if pg < 4 {
			return fmt.Errorf("page %d was written by bbolt's synced init, not by the unsynced commit", pg)
		}
		if _, err := f.WriteAt(make([]byte, ps), int64(pg)*int64(ps)); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("pages %d and %d zeroed: the commit's unsynced pages lost, its meta page kept\n", root, free)
	for i := 1; i <= 2; i++ {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		out, err := exec.Command(self, "open", dir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		fmt.Printf("restart %d, lotusdb.Open: %s", i, out)
	}
	return nil
}

func options(dir string) lotusdb.Options {
	opts := lotusdb.DefaultOptions
	opts.DirPath = dir
	opts.Sync = true
	return opts
}

func open(opts lotusdb.Options) (result string) {
	defer func() {
		if r := recover(); r != nil {
			result = fmt.Sprintf("panic: %v", r)
		}
	}()
	db, err := lotusdb.Open(opts)
	if err != nil {
		return err.Error()
	}
	db.Close()
	return "ok"
}
