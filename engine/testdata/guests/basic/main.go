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
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
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
	case "mapped":
		mapped(arg(0, "/w"))
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
	case "signal-echo":
		// signal-echo [n] [yield]: signal.Notify, as servers and lotusdb do, then n echo
		// round trips 100ms apart over a socket of its own. With "yield", a goroutine
		// also waits the way wasip1's runtime waits for a signal (sched_yield and
		// Gosched in a loop): the spinner the platform layer's os/signal edit removes.
		n, err := strconv.Atoi(arg(0, "20"))
		must(err)
		signalEcho(n, arg(1, "") == "yield")
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
	ln := echoServer()
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

// echoServer listens on port 7 and echoes every connection until EOF.
func echoServer() net.Listener {
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
	return ln
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

// signalEcho: see mode signal-echo.
func signalEcho(n int, yieldLoop bool) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	if yieldLoop {
		go func() {
			for {
				schedYield()
				runtime.Gosched()
			}
		}()
	}
	echoServer()
	c, err := sim.Dial("tcp", "localhost:7")
	must(err)
	buf := make([]byte, 8)
	for i := range n {
		time.Sleep(100 * time.Millisecond)
		msg := fmt.Sprintf("m%03d", i)
		_, err := c.Write([]byte(msg))
		must(err)
		c.SetReadDeadline(time.Now().Add(time.Second))
		k, err := io.ReadAtLeast(c, buf, len(msg))
		if err != nil || string(buf[:k]) != msg {
			fmt.Printf("round trip %d: got %q, %v\n", i, buf[:k], err)
			os.Exit(1)
		}
	}
	fmt.Printf("%d round trips\n", n)
}
