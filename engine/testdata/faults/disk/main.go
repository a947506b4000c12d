// Command disk is the guest of the disk and crash fault tests. Its first incarnation
// does what -mode says and prints "ready"; a later incarnation (after a crash) checks
// what survived, prints it and exits 1 ("LOST ...") if the data the first incarnation
// trusted is gone, which fails the run. Lines are kept short and stable: the tests
// read them from the trace.
//
// Modes:
//
//	rename     write a file, fsync it, rename it into place; -dirsync fsyncs "/" after
//	dirrename  build a directory with a synced file inside, rename the directory into
//	           place and fsync its parent; -dirsync also fsyncs the directory itself
//	           before the rename (the hashicorp/raft snapshot case)
//	fsyncgate  write, fsync; on EIO -on-eio=retry fsyncs again and trusts it,
//	           -on-eio=rewrite writes the data again and fsyncs
//	sync       write without fsync; -flag=osync opens with O_SYNC, -flag=dsync sets
//	           the O_DSYNC fd flag, -flag=fdatasync calls fd_datasync after the write,
//	           -flag=none does nothing (the negative control)
//	zeros      extend a file with truncate and fsync it, then write its head without
//	           a sync: after a crash the size is there, the data maybe not
//	allocate   fd_allocate 8192 bytes; -sync fsyncs afterwards
//	log        append a record and fsync it every 10ms (-n records); after a crash
//	           report how many whole records survived and the torn tail
//	sectors    sync 100 bytes, then write 1500 more without a sync; after a crash
//	           report the file's size (where a tear cut it)
//	renamed    write through an fd after renaming its file, then its directory
//	fill       append 64 KiB blocks until a write fails, and print the error
//	failstop   (every incarnation) count its lives in /count, written without an
//	           fsync; the first -exits lives stop on purpose (exit 1, or a panic with
//	           -panic), as a server does on an fsync error; later ones print "ready"
//	spray      (every incarnation) append to /data/wal/seg and /data/meta/m, fsync
//	           both, fsync /data/wal, rename /data/meta/tmp over /data/meta/cur and
//	           fsync /data, -n times; fsync errors are printed, not fatal
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

var payload = []byte("durable-data-0123456789")

func main() {
	mode := flag.String("mode", "rename", "what to do (see the package doc)")
	dirsync := flag.Bool("dirsync", false, "fsync the directories (rename, dirrename)")
	onEIO := flag.String("on-eio", "retry", "fsyncgate: retry or rewrite")
	how := flag.String("flag", "none", "sync: osync, dsync, fdatasync or none")
	doSync := flag.Bool("sync", false, "allocate: fsync after fd_allocate")
	n := flag.Int("n", 20, "log: records to append")
	delay := flag.Duration("delay", 100*time.Millisecond, "wait this long before starting (so a plan can act first)")
	exits := flag.Int("exits", 1, "failstop: lives that stop on purpose")
	doPanic := flag.Bool("panic", false, "failstop: panic instead of exit 1")
	flag.Parse()
	switch *mode {
	case "failstop":
		failStop(*exits, *doPanic)
		return
	case "spray":
		spray(*n)
		return
	}
	if os.Getenv("SEEDFALL_INCARNATION") != "1" {
		check(*mode)
		return
	}
	time.Sleep(*delay)
	switch *mode {
	case "rename":
		f := must(os.Create("/tmp.db"))
		must(f.Write(payload))
		try(f.Sync())
		try(f.Close())
		try(os.Rename("/tmp.db", "/final.db"))
		if *dirsync {
			syncDir("/")
		}
	case "dirrename":
		try(os.Mkdir("/snap.tmp", 0o755))
		f := must(os.Create("/snap.tmp/state.bin"))
		must(f.Write(payload))
		try(f.Sync())
		try(f.Close())
		if *dirsync {
			syncDir("/snap.tmp")
		}
		try(os.Rename("/snap.tmp", "/snap"))
		syncDir("/")
	case "fsyncgate":
		f := must(os.Create("/wal"))
		must(f.Write(payload))
		if err := f.Sync(); err != nil {
			fmt.Printf("fsync: %v\n", err)
			if *onEIO == "rewrite" {
				must(f.WriteAt(payload, 0))
			}
			if err := f.Sync(); err != nil {
				fmt.Printf("fsync again: %v\n", err)
				sleepForever()
			}
			fmt.Println("second fsync ok")
		}
	case "sync":
		flags := os.O_CREATE | os.O_WRONLY
		if *how == "osync" {
			flags |= os.O_SYNC
		}
		f := must(os.OpenFile("/data", flags, 0o644))
		if *how == "dsync" {
			if e := fdFdstatSetFlags(uint32(f.Fd()), fdflagDsync); e != 0 {
				fail("set O_DSYNC: errno %d", e)
			}
		}
		must(f.Write(payload))
		if *how == "fdatasync" {
			if e := fdDatasync(uint32(f.Fd())); e != 0 {
				fail("fd_datasync: errno %d", e)
			}
		}
	case "zeros":
		f := must(os.Create("/table"))
		try(f.Truncate(4096))
		try(f.Sync())
		must(f.WriteAt(payload, 0))
	case "allocate":
		f := must(os.Create("/prealloc"))
		if e := fdAllocate(uint32(f.Fd()), 0, 8192); e != 0 {
			fail("fd_allocate: errno %d", e)
		}
		if *doSync {
			try(f.Sync())
		}
	case "sectors":
		// A synced 100-byte head, then one pending write of 1500 bytes that crosses the
		// sector boundaries at 512, 1024 and 1536.
		f := must(os.Create("/sectors"))
		must(f.Write(bytes.Repeat([]byte("h"), 100)))
		try(f.Sync())
		syncDir("/")
		must(f.Write(bytes.Repeat([]byte("w"), 1500)))
	case "renamed":
		// Writes through fds whose file, and then whose directory, were renamed.
		try(os.Mkdir("/data", 0o755))
		f := must(os.Create("/data/wal.tmp"))
		must(f.Write([]byte("head")))
		try(os.Rename("/data/wal.tmp", "/data/wal"))
		must(f.Write([]byte("after file rename")))
		try(f.Sync())
		d := must(os.Open("/data"))
		try(os.Rename("/data", "/store"))
		must(f.Write([]byte("after dir rename")))
		try(f.Sync())
		try(d.Sync())
		try(d.Close())
		must(f.Write([]byte("last")))
	case "fill":
		// Append 64 KiB blocks until a write fails.
		f := must(os.Create("/fill"))
		block := make([]byte, 64<<10)
		total := 0
		for {
			n, err := f.Write(block)
			total += n
			if err != nil {
				fmt.Printf("write failed after %d bytes: %v\n", total, err)
				break
			}
		}
	case "log":
		f := must(os.OpenFile("/log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644))
		for i := 0; i < *n; i++ {
			must(fmt.Fprintf(f, "rec-%04d\n", i))
			try(f.Sync())
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Printf("appended %d records\n", *n)
	default:
		fail("unknown mode %q", *mode)
	}
	fmt.Println("ready")
	sleepForever()
}

// check runs in a later incarnation and reports what survived the crash.
func check(mode string) {
	switch mode {
	case "rename":
		expect("/final.db")
	case "dirrename":
		expect("/snap/state.bin")
	case "fsyncgate":
		expect("/wal")
	case "sync":
		expect("/data")
	case "zeros":
		b, err := os.ReadFile("/table")
		if err != nil {
			fail("LOST /table: %v", err)
		}
		head := "data"
		if len(b) < len(payload) {
			head = "short"
		} else if bytes.Equal(b[:len(payload)], make([]byte, len(payload))) {
			head = "zeros"
		}
		fmt.Printf("size %d head %s\n", len(b), head)
	case "sectors":
		st, err := os.Stat("/sectors")
		if err != nil {
			fail("LOST /sectors: %v", err)
		}
		fmt.Printf("size %d\n", st.Size())
	case "allocate":
		st, err := os.Stat("/prealloc")
		if err != nil {
			fail("LOST /prealloc: %v", err)
		}
		fmt.Printf("size %d\n", st.Size())
	case "log":
		b, err := os.ReadFile("/log")
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fail("read log: %v", err)
		}
		whole := 0
		for i := 0; ; i++ {
			rec := fmt.Sprintf("rec-%04d\n", i)
			if !strings.HasPrefix(string(b[whole*9:]), rec) {
				break
			}
			whole++
		}
		fmt.Printf("recovered %d records, tail %d bytes\n", whole, len(b)-whole*9)
	}
	sleepForever()
}

func expect(path string) {
	b, err := os.ReadFile(path)
	switch {
	case err != nil:
		fail("LOST %s: %v", path, err)
	case !bytes.Equal(b, payload):
		fail("LOST %s: content %q", path, b)
	}
	fmt.Printf("intact %s\n", path)
}

func syncDir(path string) {
	d := must(os.Open(path))
	try(d.Sync())
	try(d.Close())
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func must[T any](v T, err error) T {
	try(err)
	return v
}

func try(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
	os.Exit(1)
}

const fdflagDsync = 2

//go:wasmimport wasi_snapshot_preview1 fd_datasync
func fdDatasync(fd uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_allocate
func fdAllocate(fd uint32, off, n uint64) uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_set_flags
func fdFdstatSetFlags(fd uint32, flags uint32) uint32

func failStop(exits int, doPanic bool) {
	b, err := os.ReadFile("/count")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fail("read count: %v", err)
	}
	lives := len(b) + 1
	// No fsync: a process's own exit loses nothing of the page cache.
	f := must(os.OpenFile("/count", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644))
	must(f.Write([]byte("x")))
	try(f.Close())
	fmt.Printf("life %d\n", lives)
	if lives <= exits {
		if doPanic {
			panic(fmt.Sprintf("fsync failed in life %d", lives))
		}
		fmt.Printf("stopping: fsync failed in life %d\n", lives)
		os.Exit(1)
	}
	fmt.Println("ready")
	sleepForever()
}

func spray(n int) {
	try(os.MkdirAll("/data/wal", 0o755))
	try(os.MkdirAll("/data/meta", 0o755))
	note := func(what string, err error) {
		if err != nil {
			fmt.Printf("%s: %v\n", what, err)
		}
	}
	wal := must(os.OpenFile("/data/wal/seg", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644))
	meta := must(os.OpenFile("/data/meta/m", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644))
	for i := 0; i < n; i++ {
		must(wal.Write(payload))
		note("fsync wal", wal.Sync())
		must(meta.Write(payload))
		note("fsync meta", meta.Sync())
		d := must(os.Open("/data/wal"))
		note("fsync wal dir", d.Sync())
		try(d.Close())
		try(os.WriteFile("/data/meta/tmp", payload, 0o644))
		try(os.Rename("/data/meta/tmp", "/data/meta/cur"))
		d = must(os.Open("/data"))
		note("fsync data dir", d.Sync())
		try(d.Close())
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("ready")
	sleepForever()
}
