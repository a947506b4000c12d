package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapped exercises flock and mmap under root and prints one line per result: the same
// code runs natively on Linux and in the simulator (seedfall's wasip1 platform layer),
// and the lines must agree. It never touches a mapped page wholly past the end of its
// file, which is SIGBUS on Linux.
func mapped(root string) {
	p := func(name string) string { return filepath.Join(root, name) }
	out := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	step := func(name string, err error) { out("%s: %s", name, errName(err)) }
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(os.MkdirAll(root, 0o755))

	// A read-only shared map of a 6000-byte file, 16 KiB long.
	f, err := os.OpenFile(p("m"), os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	must(err)
	data := make([]byte, 6000)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	_, err = f.Write(data)
	must(err)
	m, err := syscall.Mmap(int(f.Fd()), 0, 16384, syscall.PROT_READ, syscall.MAP_SHARED)
	step("mmap read-only 16384 of a 6000-byte file", err)
	out("map[0:4] %q map[5996:6000] %q", m[0:4], m[5996:6000])
	out("map[6000:6004] past the end, in the last page %q", m[6000:6004])
	step("madvise random", syscall.Madvise(m, syscall.MADV_RANDOM))

	// Writes through the file show in the map.
	_, err = f.WriteAt([]byte("HELLO"), 100)
	must(err)
	out("after pwrite at 100: map[100:105] %q", m[100:105])
	_, err = f.Seek(0, 2)
	must(err)
	_, err = f.Write(make([]byte, 3000))
	must(err)
	_, err = f.WriteAt([]byte("TAIL"), 8996)
	must(err)
	out("after growing to 9000: map[8996:9000] %q map[6000:6004] %q", m[8996:9000], m[6000:6004])
	must(f.Truncate(12288))
	_, err = f.WriteAt([]byte("GROWN"), 12000)
	must(err)
	out("after truncate up and pwrite at 12000: map[12000:12005] %q", m[12000:12005])
	step("munmap", syscall.Munmap(m))
	step("munmap again", syscall.Munmap(m))

	// Stores through a writable shared map reach the file.
	w, err := syscall.Mmap(int(f.Fd()), 4096, 8192, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	step("mmap read-write 8192 at 4096", err)
	copy(w[10:], "STORED")
	buf := make([]byte, 6)
	_, err = f.ReadAt(buf, 4096+10)
	out("pread after a store through the map: %q %s", buf, errName(err))
	copy(w[8000:], "LAST")
	step("msync MS_SYNC", unix.Msync(w, unix.MS_SYNC))
	step("msync MS_ASYNC", unix.Msync(w[4096:], unix.MS_ASYNC))
	_, err = f.WriteAt([]byte("OVER"), 4096+10)
	must(err)
	out("store then pwrite over it: map[10:16] %q", w[10:16])
	step("munmap read-write", syscall.Munmap(w))
	buf = make([]byte, 4)
	_, err = f.ReadAt(buf, 4096+8000)
	out("pread after munmap: %q %s", buf, errName(err))

	// A mapping starts on a page, however short: msync of a small map is not EINVAL.
	small, err := syscall.Mmap(int(f.Fd()), 0, 100, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	step("mmap read-write 100", err)
	out("small map page-aligned: %v", uintptr(unsafe.Pointer(&small[0]))%4096 == 0)
	step("msync MS_SYNC of a small map", unix.Msync(small, unix.MS_SYNC))
	step("munmap small", syscall.Munmap(small))

	// A private map does not write the file.
	pm, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	step("mmap private", err)
	copy(pm, "PRIVATE")
	must(syscall.Munmap(pm))
	_, err = f.ReadAt(buf, 0)
	out("pread after a store through a private map: %q %s", buf, errName(err))

	// Errors.
	ro, err := os.Open(p("m"))
	must(err)
	_, err = syscall.Mmap(int(ro.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	step("mmap PROT_WRITE MAP_SHARED of a read-only fd", err)
	_, err = syscall.Mmap(int(ro.Fd()), 100, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
	step("mmap at an unaligned offset", err)
	_, err = syscall.Mmap(int(ro.Fd()), 0, 0, syscall.PROT_READ, syscall.MAP_SHARED)
	step("mmap of length 0", err)
	d, err := os.Open(root)
	must(err)
	_, err = syscall.Mmap(int(d.Fd()), 0, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
	step("mmap of a directory", err)
	d.Close()
	a, err := syscall.Mmap(-1, 0, 8192, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	step("mmap anonymous", err)
	out("anonymous map is zero: %v", a[0] == 0 && a[8191] == 0)
	step("munmap anonymous", syscall.Munmap(a))

	// flock: per open file description.
	l1, err := os.OpenFile(p("lock"), os.O_CREATE|os.O_RDWR, 0o644)
	must(err)
	l2, err := os.OpenFile(p("lock"), os.O_RDWR, 0o644)
	must(err)
	step("flock fd1 EX|NB", syscall.Flock(int(l1.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	step("flock fd1 EX|NB again", syscall.Flock(int(l1.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	err = syscall.Flock(int(l2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	out("flock fd2 EX|NB: %s (is EWOULDBLOCK %v)", errName(err), err == syscall.EWOULDBLOCK)
	step("flock fd2 SH|NB", syscall.Flock(int(l2.Fd()), syscall.LOCK_SH|syscall.LOCK_NB))
	step("close fd1", l1.Close())
	step("flock fd2 EX|NB after fd1 closed", syscall.Flock(int(l2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	step("flock fd2 UN", syscall.Flock(int(l2.Fd()), syscall.LOCK_UN))
	l3, err := os.Open(p("lock"))
	must(err)
	step("flock fd3 SH|NB", syscall.Flock(int(l3.Fd()), syscall.LOCK_SH|syscall.LOCK_NB))
	step("flock fd2 SH|NB beside it", syscall.Flock(int(l2.Fd()), syscall.LOCK_SH|syscall.LOCK_NB))
	l4, err := os.Open(p("lock"))
	must(err)
	step("flock fd4 EX|NB over two shared", syscall.Flock(int(l4.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	step("flock fd2 converts to EX|NB", syscall.Flock(int(l2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	step("flock fd3 UN", syscall.Flock(int(l3.Fd()), syscall.LOCK_UN))
	step("flock fd4 EX|NB: fd2's failed conversion dropped its lock", syscall.Flock(int(l4.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	step("flock bad how", syscall.Flock(int(l4.Fd()), 0))

	// A blocking lock waits for another goroutine's unlock.
	done := make(chan error)
	go func() { done <- syscall.Flock(int(l2.Fd()), syscall.LOCK_EX) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		out("blocking flock returned early: %s", errName(err))
	default:
		out("blocking flock waits while fd4 holds the lock")
	}
	step("flock fd4 UN", syscall.Flock(int(l4.Fd()), syscall.LOCK_UN))
	step("blocking flock after the unlock", <-done)
	l2.Close()
	l3.Close()
	l4.Close()
	f.Close()
	ro.Close()
}
