// Command basic is a guest of the engine's tests: one small program whose first argument
// picks what it does, so that many tests share one build. It reports through stdout
// (one line per result, compared by the tests) and its exit code.
//
// Modes that touch files take a root directory, so that the same code also runs natively
// over a real temporary directory: the tests compare both outputs line by line.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: basic <mode> [args]")
		os.Exit(2)
	}
	args := os.Args[2:]
	arg := func(i int, def string) string {
		if i < len(args) {
			return args[i]
		}
		return def
	}
	switch os.Args[1] {
	case "idle":
		// idle [duration] [exit code]: the workload of tests about the other nodes.
		d, err := time.ParseDuration(arg(0, "1s"))
		must(err)
		time.Sleep(d)
		code, err := strconv.Atoi(arg(1, "0"))
		must(err)
		fmt.Printf("idle done after %s\n", d)
		os.Exit(code)
	case "exit":
		code, err := strconv.Atoi(arg(0, "0"))
		must(err)
		fmt.Printf("exiting with %d\n", code)
		os.Exit(code)
	case "disk":
		disk(arg(0, "/d"))
	case "diskops":
		diskops(arg(0, "/d"))
	case "args":
		fmt.Printf("args %q\n", os.Args)
		env := os.Environ()
		fmt.Printf("environ sorted: %v\n", sort.StringsAreSorted(env))
		for _, kv := range env {
			fmt.Printf("env %s\n", kv)
		}
		fmt.Printf("node %s incarnation %d in simulation %v\n", sim.Node(), sim.Incarnation(), sim.InSimulation())
		wd, err := os.Getwd()
		fmt.Printf("getwd %q %v\n", wd, err)
	case "clock":
		clock()
	case "random":
		random()
	case "files":
		files(arg(0, "/w"))
	case "meta":
		meta(arg(0, "/w"))
	case "timers":
		timers()
	case "yield":
		yield()
	case "sockets":
		sockets()
	case "sleep-forever":
		fmt.Println("sleeping forever")
		for {
			time.Sleep(time.Hour)
		}
	case "block-forever":
		// Wait on a socket that never becomes ready: no timer, so the world has nothing
		// left to run.
		ln, err := sim.Listen("tcp", ":9")
		must(err)
		fmt.Println("blocked in accept")
		ln.Accept()
		fmt.Println("accept returned")
	case "panic":
		time.Sleep(100 * time.Millisecond)
		panic("boom: the server gave up")
	case "flood":
		n, err := strconv.Atoi(arg(0, "100000"))
		must(err)
		line := strings.Repeat("x", 100)
		if arg(1, "") == "one-write" {
			// All lines in one write call.
			var buf bytes.Buffer
			for i := range n {
				fmt.Fprintf(&buf, "flood %d %s\n", i, line)
			}
			os.Stdout.Write(buf.Bytes())
		} else {
			for i := range n {
				fmt.Printf("flood %d %s\n", i, line)
			}
		}
		fmt.Fprintln(os.Stderr, "flood done")
	case "alloc":
		var keep [][]byte
		for i := 0; ; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(i + j)
			}
			keep = append(keep, b)
			if i%16 == 0 {
				fmt.Printf("allocated %d MiB\n", i+1)
			}
		}
	case "lin-hard":
		// lin-hard [n]: record a register history that is not linearizable but hard to
		// prove so: n concurrent writes of distinct values, then a read of a value none
		// wrote (the checker must try the orders of the writes).
		n, err := strconv.Atoi(arg(0, "12"))
		must(err)
		var ops []*sim.Op
		for i := range n {
			ops = append(ops, sim.Call(i, map[string]string{"op": "write", "value": fmt.Sprintf("v%d", i)}))
		}
		time.Sleep(time.Millisecond)
		for _, op := range ops {
			op.Return(map[string]string{})
		}
		sim.Call(n, map[string]string{"op": "read"}).Return(map[string]string{"value": "never written"})
		fmt.Printf("recorded %d operations\n", n+1)
	case "busy":
		// busy [n]: n clock reads (host calls) without ever blocking: slow, but progress.
		n, err := strconv.Atoi(arg(0, "1000000"))
		must(err)
		var t time.Time
		for range n {
			t = time.Now()
		}
		fmt.Println("busy done", t.IsZero())
	case "compute":
		// compute [n]: n loop iterations without a host call, then done: a long stretch
		// of guest CPU that ends.
		n, err := strconv.Atoi(arg(0, "1000000000"))
		must(err)
		fmt.Println("computing")
		fmt.Println("computed", compute(n) != 0)
	case "spin":
		// spin [seed]: spin without host calls when the run's seed is that seed ("all":
		// on every seed).
		fmt.Println("started")
		time.Sleep(10 * time.Millisecond)
		if s := arg(0, ""); s == "all" || os.Getenv("SEEDFALL_SEED") == s {
			fmt.Println("spinning")
			spin()
		}
		fmt.Println("done")
	default:
		fmt.Fprintf(os.Stderr, "basic: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

//go:noinline
func compute(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x | 1
}

//go:noinline
func spin() {
	for {
	}
}

func must(err error) {
	if err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(3)
	}
}

// Record contents written by the disk modes: the tests check what survives a crash.
var (
	synced   = []byte("SYNCED-" + strings.Repeat("s", 25))   // 32 bytes, fsynced
	unsynced = []byte("UNSYNCED-" + strings.Repeat("u", 55)) // 64 bytes, written after the fsync
)

// disk writes synced then unsynced data in incarnation 1 and idles; a later incarnation
// prints what it finds.
func disk(dir string) {
	f := filepath.Join(dir, "f")
	if sim.Incarnation() > 1 {
		report(f)
		idleForever()
	}
	must(os.MkdirAll(dir, 0o755))
	fh, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	must(err)
	_, err = fh.Write(synced)
	must(err)
	must(fh.Sync())
	_, err = fh.Write(unsynced)
	must(err)
	fmt.Println("written")
	idleForever()
}

// diskops does a fixed sequence of disk ops, one per line of its output, so a plan can
// name op #N: #1 mkdir, #2 create, #3 write synced, #4 fsync, #5 write unsynced,
// #6 fsync.
func diskops(dir string) {
	f := filepath.Join(dir, "f")
	if sim.Incarnation() > 1 {
		report(f)
		idleForever()
	}
	must(os.Mkdir(dir, 0o755))
	fh, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY, 0o644)
	must(err)
	_, err = fh.Write(synced)
	must(err)
	fmt.Println("after op 3")
	must(fh.Sync())
	fmt.Println("after op 4")
	_, err = fh.Write(unsynced)
	must(err)
	fmt.Println("after op 5")
	must(fh.Sync())
	fmt.Println("after op 6")
	idleForever()
}

func report(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Printf("read error %v\n", err)
		return
	}
	fmt.Printf("read %d %q\n", len(b), b)
}

func idleForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func clock() {
	start := time.Now()
	wall0 := time.Now().Round(0)
	fmt.Printf("year %d\n", wall0.UTC().Year())
	back := 0
	prev := time.Now()
	for range 20000 {
		now := time.Now()
		if now.Before(prev) {
			back++
		}
		prev = now
	}
	fmt.Printf("monotonic went back %d times\n", back)
	fmt.Printf("clock advanced during the loop: %v\n", time.Since(start) > 0)
	t0 := time.Now()
	time.Sleep(10 * time.Second)
	el := time.Since(t0)
	fmt.Printf("slept 10s: elapsed >= 10s %v, < 10.1s %v\n", el >= 10*time.Second, el < 10*time.Second+100*time.Millisecond)
	wall1 := time.Now().Round(0)
	d := wall1.Sub(wall0)
	fmt.Printf("wall clock moved %s\n", d.Round(time.Second))
}

func random() {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	must(err)
	fmt.Printf("crypto/rand %x\n", b)
	fmt.Printf("math/rand %d %d\n", mrand.IntN(1_000_000), mrand.Uint64())
	m := map[int]bool{}
	for i := range 16 {
		m[i] = true
	}
	var order []string
	for k := range m {
		order = append(order, strconv.Itoa(k))
	}
	fmt.Printf("map order %s\n", strings.Join(order, ","))
	// select picks randomly among ready cases.
	a, c := make(chan int, 1), make(chan int, 1)
	var picks []string
	for range 16 {
		a <- 1
		c <- 1
		select {
		case <-a:
			picks = append(picks, "a")
			<-c
		case <-c:
			picks = append(picks, "c")
			<-a
		}
	}
	fmt.Printf("select picks %s\n", strings.Join(picks, ""))
}

func timers() {
	start := time.Now()
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for _, s := range []struct {
		name string
		d    time.Duration
	}{{"a", 30 * time.Millisecond}, {"b", 10 * time.Millisecond}, {"c", 20 * time.Millisecond}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(s.d)
			mu.Lock()
			order = append(order, s.name)
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Printf("sleepers woke in order %s\n", strings.Join(order, ""))

	fired := make(chan string, 4)
	time.AfterFunc(15*time.Millisecond, func() { fired <- "afterfunc" })
	stopped := time.NewTimer(5 * time.Millisecond)
	fmt.Printf("stop before firing: %v\n", stopped.Stop())
	reset := time.NewTimer(time.Hour)
	reset.Reset(25 * time.Millisecond)
	select {
	case s := <-fired:
		fmt.Printf("first: %s\n", s)
	case <-reset.C:
		fmt.Println("first: reset timer")
	}
	select {
	case s := <-fired:
		fmt.Printf("second: %s\n", s)
	case <-reset.C:
		fmt.Println("second: reset timer")
	}
	select {
	case <-stopped.C:
		fmt.Println("stopped timer fired")
	case <-time.After(50 * time.Millisecond):
		fmt.Println("stopped timer stayed silent")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	<-ctx.Done()
	el := time.Since(t0)
	fmt.Printf("context: %v after >= 75ms %v\n", ctx.Err(), el >= 75*time.Millisecond)

	tk := time.NewTicker(10 * time.Millisecond)
	t0 = time.Now()
	for range 5 {
		<-tk.C
	}
	tk.Stop()
	el = time.Since(t0)
	fmt.Printf("5 ticks of 10ms took >= 50ms %v, < 60ms %v\n", el >= 50*time.Millisecond, el < 60*time.Millisecond)
	fmt.Printf("total virtual time < 1s %v\n", time.Since(start) < time.Second)
}

// sockets talks to itself over the simulated network: the netpoller waits in
// poll_oneoff on fd subscriptions, with and without a clock subscription (deadlines).
func sockets() {
	ln, err := sim.Listen("tcp", ":7")
	must(err)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c) // echo until EOF
				c.Close()
			}()
		}
	}()
	c, err := sim.Dial("tcp", "localhost:7")
	must(err)
	_, err = c.Write([]byte("hello"))
	must(err)
	buf := make([]byte, 16)
	n, err := io.ReadAtLeast(c, buf, 5)
	fmt.Printf("echo %q %s\n", buf[:n], errName(err))
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	t0 := time.Now()
	_, err = c.Read(buf)
	var ne interface{ Timeout() bool }
	fmt.Printf("read with nothing to read: timeout %v after >= 100ms %v\n", errors.As(err, &ne) && ne.Timeout(), time.Since(t0) >= 100*time.Millisecond)
	c.SetReadDeadline(time.Time{})
	// A reader blocked without a deadline wakes when the data arrives.
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.Write([]byte("late"))
	}()
	n, err = io.ReadAtLeast(c, buf, 4)
	fmt.Printf("blocked read woke with %q %s\n", buf[:n], errName(err))
	must(c.(interface{ CloseWrite() error }).CloseWrite())
	n, err = c.Read(buf)
	fmt.Printf("after close-write the echo ends: %d %s\n", n, errName(err))
	c.Close()
	ln.Close()
	_, err = sim.Dial("tcp", "localhost:7")
	fmt.Printf("dial after the listener closed: refused %v\n", errors.Is(err, syscall.ECONNREFUSED))
	_, err = sim.Dial("tcp", "nosuchnode:7")
	fmt.Printf("dial an unknown node: unreachable %v\n", errors.Is(err, syscall.EHOSTUNREACH))
}

func yield() {
	t0 := time.Now()
	var errnos []uint32
	for range 1000 {
		if e := schedYield(); e != 0 {
			errnos = append(errnos, e)
		}
	}
	fmt.Printf("sched_yield errors %v\n", errnos)
	fmt.Printf("1000 yields moved the clock >= 1ms %v\n", time.Since(t0) >= time.Millisecond)
	// Two goroutines that hand the processor back and forth finish: yields schedule.
	runtime.GOMAXPROCS(1)
	var n [2]int
	done := make(chan bool)
	for g := range 2 {
		go func() {
			for range 100 {
				n[g]++
				runtime.Gosched()
			}
			done <- true
		}()
	}
	<-done
	<-done
	fmt.Printf("gosched ping-pong %d %d\n", n[0], n[1])
}

// files runs file-system operations under root and prints one line per result. The
// output must be the same natively and in the simulator, except lines starting "sim:".
func files(root string) {
	p := func(name string) string { return filepath.Join(root, name) }
	out := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	step := func(name string, err error) { out("%s: %s", name, errName(err)) }

	step("mkdirall root", os.MkdirAll(root, 0o755))
	step("mkdir d", os.Mkdir(p("d"), 0o755))
	step("mkdir d again", os.Mkdir(p("d"), 0o755))
	step("mkdir in missing parent", os.Mkdir(p("nope/x"), 0o755))

	f, err := os.OpenFile(p("d/a"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	step("create excl", err)
	_, err = os.OpenFile(p("d/a"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	step("create excl again", err)
	n, err := f.Write([]byte("hello world"))
	out("write %d %s", n, errName(err))
	off, err := f.Seek(0, io.SeekCurrent)
	out("seek current %d %s", off, errName(err))
	off, err = f.Seek(-5, io.SeekEnd)
	out("seek end-5 %d %s", off, errName(err))
	off, err = f.Seek(2, io.SeekStart)
	out("seek start+2 %d %s", off, errName(err))
	_, err = f.Seek(-100, io.SeekCurrent)
	step("seek before start", err)
	_, err = f.Write([]byte("XY"))
	step("write at 2", err)
	n, err = f.WriteAt([]byte("ZZ"), 20)
	out("pwrite past end %d %s", n, errName(err))
	st, err := f.Stat()
	out("fstat size %d dir %v regular %v %s", st.Size(), st.IsDir(), st.Mode().IsRegular(), errName(err))
	buf := make([]byte, 5)
	n, err = f.ReadAt(buf, 0)
	out("pread 0 %d %q %s", n, buf[:n], errName(err))
	buf = make([]byte, 10)
	n, err = f.ReadAt(buf, 18)
	out("pread 18 %d %q %s", n, buf[:n], errName(err))
	off, _ = f.Seek(0, io.SeekCurrent)
	out("pread/pwrite left the offset at %d", off)
	step("fsync", f.Sync())
	step("close", f.Close())
	step("close again", f.Close())

	b, err := os.ReadFile(p("d/a"))
	out("readfile %q %s", b, errName(err))

	ro, err := os.Open(p("d/a"))
	step("open read-only", err)
	_, err = ro.Write([]byte("nope"))
	step("write to read-only fd", err)
	_, err = ro.WriteAt([]byte("nope"), 1)
	step("pwrite to read-only fd", err)
	step("ftruncate read-only fd", ro.Truncate(1))
	all, err := io.ReadAll(ro)
	out("read all %d %s", len(all), errName(err))
	n, err = ro.Read(buf)
	out("read at eof %d %s", n, errName(err))
	ro.Close()

	wo, err := os.OpenFile(p("d/a"), os.O_WRONLY, 0)
	step("open write-only", err)
	_, err = wo.Read(buf)
	step("read from write-only fd", err)
	wo.Close()

	ap, err := os.OpenFile(p("d/a"), os.O_APPEND|os.O_WRONLY, 0)
	step("open append", err)
	ap.Seek(0, io.SeekStart)
	_, err = ap.Write([]byte("!!"))
	step("append write after seek 0", err)
	_, err = ap.WriteAt([]byte("??"), 0)
	step("pwrite on append fd", err)
	ap.Close()
	b, _ = os.ReadFile(p("d/a"))
	out("after append %q", b)

	tr, err := os.OpenFile(p("d/a"), os.O_TRUNC|os.O_RDWR, 0)
	step("open trunc", err)
	st, _ = tr.Stat()
	out("size after trunc %d", st.Size())
	tr.Write([]byte("new"))
	tr.Close()
	step("truncate path to 6", os.Truncate(p("d/a"), 6))
	b, _ = os.ReadFile(p("d/a"))
	out("after grow %q", b)
	tf, _ := os.OpenFile(p("d/a"), os.O_RDWR, 0)
	step("ftruncate to 2", tf.Truncate(2))
	tf.Seek(5, io.SeekStart)
	tf.Write([]byte("H"))
	tf.Close()
	b, _ = os.ReadFile(p("d/a"))
	out("after shrink and write past end %q", b)
	step("truncate missing", os.Truncate(p("d/missing"), 1))

	st, err = os.Stat(p("d"))
	out("stat dir: dir %v %s", st != nil && st.IsDir(), errName(err))
	_, err = os.Stat(p("d/missing"))
	step("stat missing", err)
	_, err = os.Stat(p("d/a/x"))
	step("stat below a file", err)
	_, err = os.Open(p("d/missing"))
	step("open missing", err)

	for _, name := range []string{"c", "b", "e", "zz", "m"} {
		must(os.WriteFile(p("d/"+name), []byte("content of "+name), 0o644))
	}
	step("mkdir d/sub", os.Mkdir(p("d/sub"), 0o755))
	must(os.WriteFile(p("d/sub/inner"), []byte("inner"), 0o644))
	ents, err := os.ReadDir(p("d"))
	out("readdir %s %s", entNames(ents), errName(err))
	dh, err := os.Open(p("d"))
	step("open dir", err)
	names, err := dh.Readdirnames(-1)
	out("readdirnames count %d %s", len(names), errName(err))
	if sim.InSimulation() {
		out("sim: readdirnames in host order %s, sorted %v", strings.Join(names, " "), slices.IsSorted(names))
	}
	// Read in small batches: the cookie must carry on where the last batch ended.
	dh2, _ := os.Open(p("d"))
	var batched []string
	for {
		nb, err := dh2.Readdirnames(2)
		batched = append(batched, nb...)
		if err != nil {
			out("batched readdir end %s", errName(err))
			break
		}
	}
	dh2.Close()
	slices.Sort(batched)
	out("batched readdir %s", strings.Join(batched, " "))
	step("fsync dir", dh.Sync())
	_, err = dh.Read(buf)
	out("read a dir fd fails: %v", err != nil) // EISDIR natively; Go itself may say EINVAL
	dh.Close()
	_, err = os.ReadDir(p("d/a"))
	step("readdir of a file", err)

	step("rename b -> b2", os.Rename(p("d/b"), p("d/b2")))
	_, err = os.Stat(p("d/b"))
	step("stat old name", err)
	step("rename c over e", os.Rename(p("d/c"), p("d/e")))
	b, _ = os.ReadFile(p("d/e"))
	out("e now %q", b)
	step("rename missing", os.Rename(p("d/missing"), p("d/x")))
	step("rename file over dir", os.Rename(p("d/e"), p("d/sub")))
	step("rename dir over file", os.Rename(p("d/sub"), p("d/e")))
	step("rename dir into itself", os.Rename(p("d/sub"), p("d/sub/deeper")))
	step("mkdir d/full", os.Mkdir(p("d/full"), 0o755))
	must(os.WriteFile(p("d/full/x"), nil, 0o644))
	step("rename dir over non-empty dir", os.Rename(p("d/sub"), p("d/full")))
	step("rename dir", os.Rename(p("d/sub"), p("d/sub2")))
	b, err = os.ReadFile(p("d/sub2/inner"))
	out("through renamed dir %q %s", b, errName(err))
	step("rename across dirs", os.Rename(p("d/sub2/inner"), p("d/inner")))
	ents, _ = os.ReadDir(p("d/sub2"))
	out("sub2 now %s", entNames(ents))

	step("remove b2", os.Remove(p("d/b2")))
	step("remove b2 again", os.Remove(p("d/b2")))
	step("remove non-empty dir", os.Remove(p("d/full")))
	step("remove empty dir", os.Remove(p("d/sub2")))
	step("rmdir missing", syscallRmdir(p("d/sub2")))

	// An unlinked file stays readable through an open fd.
	h, err := os.Open(p("d/m"))
	step("open m", err)
	step("unlink open m", os.Remove(p("d/m")))
	all, err = io.ReadAll(h)
	out("read unlinked %q %s", all, errName(err))
	st, err = h.Stat()
	out("fstat unlinked size %d %s", st.Size(), errName(err))
	h.Close()
	_, err = os.Stat(p("d/m"))
	step("stat unlinked", err)

	// Two fds on one unlinked file: closing one leaves the other usable.
	h1, err := os.Open(p("d/zz"))
	step("open zz once", err)
	h2, err := os.Open(p("d/zz"))
	step("open zz twice", err)
	step("unlink zz", os.Remove(p("d/zz")))
	step("close first fd", h1.Close())
	all, err = io.ReadAll(h2)
	out("read through second fd %q %s", all, errName(err))
	h2.Close()

	// Two fds on one file see each other's writes; O_CREATE keeps what is there.
	w1, err := os.OpenFile(p("d/shared"), os.O_CREATE|os.O_RDWR, 0o644)
	step("create shared", err)
	w1.Write([]byte("first"))
	w2, err := os.OpenFile(p("d/shared"), os.O_CREATE|os.O_RDWR, 0o644)
	step("open shared again with O_CREATE", err)
	all, err = io.ReadAll(w2)
	out("second fd reads %q %s", all, errName(err))
	n, err = w2.Write(nil)
	out("empty write %d %s", n, errName(err))
	off, err = w1.Seek(10, io.SeekEnd)
	out("seek past end %d %s", off, errName(err))
	w1.Write([]byte("!"))
	st, _ = w2.Stat()
	out("size seen by the other fd %d", st.Size())
	step("ftruncate through one fd", w1.Truncate(3))
	buf = make([]byte, 8)
	n, err = w2.ReadAt(buf, 0)
	out("other fd after truncate %d %q %s", n, buf[:n], errName(err))
	w1.Close()
	w2.Close()
	step("rename onto itself", os.Rename(p("d/shared"), p("d/shared")))
	step("chtimes", os.Chtimes(p("d/shared"), time.Unix(1e9, 0), time.Unix(1e9, 0)))
	step("mkdirall deep", os.MkdirAll(p("d/x/y/z"), 0o755))
	step("mkdirall deep again", os.MkdirAll(p("d/x/y/z"), 0o755))
	step("write deep", os.WriteFile(p("d/x/y/z/f"), []byte("deep"), 0o644))
	// A file open in a directory that is renamed stays usable.
	df, err := os.OpenFile(p("d/x/y/z/f"), os.O_RDWR, 0)
	step("open deep", err)
	step("rename x", os.Rename(p("d/x"), p("d/x2")))
	df.WriteAt([]byte("DE"), 0)
	df.Close()
	b, err = os.ReadFile(p("d/x2/y/z/f"))
	out("deep after rename %q %s", b, errName(err))
	step("removeall x2", os.RemoveAll(p("d/x2")))

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	step("write 1MiB", os.WriteFile(p("d/big"), big, 0o644))
	got, err := os.ReadFile(p("d/big"))
	out("read 1MiB: equal %v len %d %s", bytes.Equal(got, big), len(got), errName(err))
	sum := sha256.Sum256(got)
	out("sha256 %x", sum[:8])

	step("removeall d", os.RemoveAll(p("d")))
	_, err = os.Stat(p("d"))
	step("stat removed d", err)
	ents, err = os.ReadDir(root)
	out("root now %s %s", entNames(ents), errName(err))
}

// meta exercises file metadata the Linux way: hard links and link counts, times that
// follow the clock, and the errors of a trailing slash on a file and of opening a
// directory for writing. It prints only what must agree natively and in simulation.
func meta(root string) {
	p := func(name string) string { return filepath.Join(root, name) }
	out := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	step := func(name string, err error) { out("%s: %s", name, errName(err)) }
	stat := func(name string) os.FileInfo {
		fi, err := os.Stat(p(name))
		must(err)
		return fi
	}
	nl := func(name string) { out("nlink %s %d", name, nlink(stat(name))) }

	step("mkdirall root", os.MkdirAll(root, 0o755))
	must(os.WriteFile(p("f"), []byte("one"), 0o644))
	nl("f")
	step("link f g", os.Link(p("f"), p("g")))
	nl("f")
	nl("g")
	out("f and g same file %v", os.SameFile(stat("f"), stat("g")))
	step("link f g again", os.Link(p("f"), p("g")))
	step("link missing h", os.Link(p("missing"), p("h")))
	step("link into missing dir", os.Link(p("f"), p("nodir/h")))
	step("mkdir d", os.Mkdir(p("d"), 0o755))
	step("link dir", os.Link(p("d"), p("d2")))
	must(os.WriteFile(p("g"), []byte("written via g"), 0o644))
	b, err := os.ReadFile(p("f"))
	out("f reads %q %s", b, errName(err))
	nl("d")
	step("mkdir d/sub", os.Mkdir(p("d/sub"), 0o755))
	step("mkdir d/sub2", os.Mkdir(p("d/sub2"), 0o755))
	nl("d")
	must(os.WriteFile(p("d/file"), nil, 0o644))
	nl("d")
	step("rename f d/f", os.Rename(p("f"), p("d/f")))
	nl("g")
	step("remove g", os.Remove(p("g")))
	nl("d/f")

	tmp, err := os.Create(p("tmp"))
	must(err)
	step("remove open tmp", os.Remove(p("tmp")))
	fi, err := tmp.Stat()
	must(err)
	out("nlink of an unlinked open file %d", nlink(fi))
	_, err = tmp.Write([]byte("still writable"))
	step("write unlinked open file", err)
	tmp.Close()

	_, err = os.Open(p("d/f") + "/")
	step("open file/", err)
	_, err = os.Stat(p("d/f") + "/")
	step("stat file/", err)
	_, err = os.OpenFile(p("new")+"/", os.O_CREATE|os.O_WRONLY, 0o644)
	step("create new/", err)
	step("remove file/", os.Remove(p("d/f")+"/"))
	step("rename file/", os.Rename(p("d/f")+"/", p("d/x")))
	dd, err := os.Open(p("d") + "/")
	step("open dir/", err)
	if err == nil {
		dd.Close()
	}
	_, err = os.OpenFile(p("d"), os.O_WRONLY, 0)
	step("open dir write-only", err)
	_, err = os.OpenFile(p("d"), os.O_RDWR, 0)
	step("open dir read-write", err)
	_, err = os.OpenFile(p("d"), os.O_RDONLY|os.O_CREATE, 0o644)
	step("open dir with O_CREATE", err)

	// Times: they follow the wall clock, and writes move mtime and ctime forward.
	before := stat("d/f")
	out("mtime within a minute of now %v", time.Since(before.ModTime()).Abs() < time.Minute)
	time.Sleep(50 * time.Millisecond)
	af, err := os.OpenFile(p("d/f"), os.O_APPEND|os.O_WRONLY, 0)
	must(err)
	_, err = af.Write([]byte("!"))
	must(err)
	af.Close()
	after := stat("d/f")
	out("write moved mtime forward %v", after.ModTime().After(before.ModTime()))
	out("write moved ctime forward %v", ctime(after).After(ctime(before)))
	out("mtime moved by at least the sleep %v", after.ModTime().Sub(before.ModTime()) >= 40*time.Millisecond)
	dir0 := stat("d")
	time.Sleep(50 * time.Millisecond)
	must(os.WriteFile(p("d/new"), nil, 0o644))
	out("create moved the directory's mtime forward %v", stat("d").ModTime().After(dir0.ModTime()))
	time.Sleep(50 * time.Millisecond)
	_, err = os.ReadFile(p("d/f"))
	must(err)
	out("read moved atime past mtime %v", atime(stat("d/f")).After(after.ModTime()))
	c0 := ctime(stat("d/f"))
	time.Sleep(50 * time.Millisecond)
	set := time.Date(2020, 2, 3, 4, 5, 6, 0, time.UTC)
	step("chtimes", os.Chtimes(p("d/f"), set, set))
	got := stat("d/f")
	out("chtimes set mtime %v atime %v", got.ModTime().Equal(set), atime(got).Equal(set))
	out("chtimes moved ctime forward %v", ctime(got).After(c0))
}

func entNames(ents []os.DirEntry) string {
	var s []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		s = append(s, n)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func syscallRmdir(path string) error {
	return syscall.Rmdir(path)
}

// errName names an error by its errno, so native and simulated runs print the same.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	for _, e := range []struct {
		target error
		name   string
	}{
		{io.EOF, "EOF"},
		{os.ErrClosed, "closed"},
		{syscall.EEXIST, "EEXIST"},
		{syscall.ENOENT, "ENOENT"},
		{syscall.ENOTEMPTY, "ENOTEMPTY"},
		{syscall.EISDIR, "EISDIR"},
		{syscall.ENOTDIR, "ENOTDIR"},
		{syscall.EBADF, "EBADF"},
		{syscall.EINVAL, "EINVAL"},
		{syscall.EXDEV, "EXDEV"},
		{syscall.EPERM, "EPERM"},
		{syscall.EACCES, "EACCES"},
		{fs.ErrExist, "exist"},
		{fs.ErrNotExist, "notexist"},
	} {
		if errors.Is(err, e.target) {
			return e.name
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return "other(" + pe.Err.Error() + ")"
	}
	return "other(" + err.Error() + ")"
}
