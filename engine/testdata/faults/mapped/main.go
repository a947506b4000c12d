// Command mapped is the guest of the mmap and flock crash tests (the wasip1 platform
// layer). Its first incarnation does what -mode says, prints "ready" and waits to be
// crashed; a later one reports what survived.
//
// Modes:
//
//	store  write /m (4096 bytes of "old!"), fsync it and "/", map it read-write and
//	       shared, store "NEW!" at 0 through the map; -msync then calls msync(MS_SYNC),
//	       -fsync fsyncs the file instead. After a crash: "after crash: NEW!" or
//	       "after crash: old!".
//	lock   open /lock and take flock(LOCK_EX|LOCK_NB); every incarnation does, and
//	       prints the result: a crash releases the lock, so the next life gets it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	mode := flag.String("mode", "store", "store or lock")
	doMsync := flag.Bool("msync", false, "store: msync(MS_SYNC) after the store")
	doFsync := flag.Bool("fsync", false, "store: fsync the file after the store")
	flag.Parse()
	time.Sleep(100 * time.Millisecond)
	switch *mode {
	case "store":
		store(*doMsync, *doFsync)
	case "lock":
		lock()
	default:
		fmt.Println("unknown mode", *mode)
		os.Exit(2)
	}
	for {
		time.Sleep(time.Hour) // wait to be crashed
	}
}

func must(err error) {
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

func store(doMsync, doFsync bool) {
	if b, err := os.ReadFile("/m"); err == nil {
		fmt.Printf("after crash: %s\n", b[:4])
		if !bytes.Equal(b[4:], bytes.Repeat([]byte("old!"), 1023)) {
			fmt.Println("the rest of the page changed")
		}
		os.Exit(0)
	}
	f, err := os.OpenFile("/m", os.O_CREATE|os.O_RDWR, 0o644)
	must(err)
	_, err = f.Write(bytes.Repeat([]byte("old!"), 1024))
	must(err)
	must(f.Sync())
	d, err := os.Open("/")
	must(err)
	must(d.Sync())
	m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	must(err)
	copy(m, "NEW!")
	if doMsync {
		must(unix.Msync(m, unix.MS_SYNC))
	}
	if doFsync {
		must(f.Sync())
	}
	fmt.Println("ready")
}

func lock() {
	f, err := os.OpenFile("/lock", os.O_CREATE|os.O_RDWR, 0o644)
	must(err)
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	fmt.Printf("flock EX|NB: %v\n", err)
	g, err := os.Open("/lock")
	must(err)
	err = syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	fmt.Printf("flock EX|NB of a second open: %v\n", err)
	fmt.Println("ready")
}
