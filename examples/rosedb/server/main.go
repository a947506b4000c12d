// Command server wraps github.com/rosedblabs/rosedb/v2 behind a tiny line protocol, so
// that seedfall can crash it in the middle of a write and check every acknowledged
// write.
//
//	PUT key value\n  ->  OK\n      (once a batch with BatchOptions.Sync committed)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// If rosedb cannot open its own directory the server prints the library's error
// ("open rosedb: invalid crc") and exits 1, which seedfall reports as a failure.
//
// rosedb imports github.com/gofrs/flock, which does not build for wasip1; this
// module's go.mod replaces it with ./flockshim (see the README).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/rosedblabs/rosedb/v2"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/rosedb", "database `directory`")
	segSize := flag.Int64("segment-size", 4096, "Options.SegmentSize in `bytes` (small, so segments rotate)")
	noSync := flag.Bool("nosync", false, "commit with BatchOptions.Sync false: acknowledge before fsync (negative control)")
	flag.Parse()
	if err := run(*addr, *dir, *segSize, !*noSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func run(addr, dir string, segSize int64, syncWrites bool) error {
	if err := mkdirDurable(dir); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	opts := rosedb.DefaultOptions
	opts.DirPath = dir
	opts.SegmentSize = segSize
	// Options.Sync stays false: in v2.4.0 a DB opened with Sync true never fsyncs a
	// Put (WAL.WriteAll does not sync, and Batch.Commit syncs only when the DB option
	// is false). A batch with BatchOptions.Sync true is what makes a write durable.
	db, err := rosedb.Open(opts)
	if err != nil {
		return fmt.Errorf("open rosedb: %w", err)
	}
	fmt.Printf("opened rosedb: %d keys\n", db.Stat().KeysNum)

	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		go serve(db, conn, syncWrites)
	}
}

// mkdirDurable creates dir and fsyncs the parent of every directory it creates, so
// the directory itself survives a crash under strict_dirs. (The files in it are the
// library's job.)
func mkdirDurable(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirDurable(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	d, err := os.Open(filepath.Dir(dir))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

func serve(db *rosedb.DB, conn net.Conn, syncWrites bool) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := io.WriteString(conn, handle(db, strings.TrimSuffix(line, "\n"), syncWrites)); err != nil {
			return
		}
	}
}

func handle(db *rosedb.DB, line string, syncWrites bool) string {
	cmd, args, _ := strings.Cut(line, " ")
	switch cmd {
	case "PUT":
		key, value, ok := strings.Cut(args, " ")
		if !ok || key == "" {
			return "ERR usage: PUT key value\n"
		}
		b := db.NewBatch(rosedb.BatchOptions{Sync: syncWrites})
		if err := b.Put([]byte(key), []byte(value)); err != nil {
			b.Rollback()
			return "ERR " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n"
		}
		if err := b.Commit(); err != nil {
			return "ERR " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n"
		}
		return "OK\n"
	case "GET":
		v, err := db.Get([]byte(args))
		switch {
		case errors.Is(err, rosedb.ErrKeyNotFound):
			return "NONE\n"
		case err != nil:
			return "ERR " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n"
		}
		return "VAL " + string(v) + "\n"
	}
	return "ERR unknown command\n"
}
