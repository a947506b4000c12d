// Command net is the guest of the network and process fault tests. As -role=server it
// answers "ping N" with "pong N" on :7000 (and, with -heartbeat, also sends "hb N" on
// every connection at that interval). As -role=client it is the workload: it pings the
// -targets in turn and prints each round trip, or counts heartbeats, reconnecting after
// errors, which it names by errno ("reset", "refused"), and exits 0 when done. A server
// with -exit-at N exits (code 3) when ping N arrives, in its first life only.
//
// The ordering tests use two more roles: -role=sink accepts connections and prints, after
// every read, what the connection delivered so far as runs of bytes ("read A1000 B10",
// and at the end "read A1000 B10 EOF"); -role=burst dials -targets,
// waits -wait, writes -pre bytes of 'A', waits -gap, then writes -post bytes of 'B'
// and/or closes (-close), printing each step, and exits 0 after -linger.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	role := flag.String("role", "server", "server or client")
	targets := flag.String("targets", "server:7000", "client: comma-separated addresses to ping in turn")
	n := flag.Int("n", 20, "client: pings (or heartbeats) before exiting")
	every := flag.Duration("every", 20*time.Millisecond, "client: pause between pings")
	timeout := flag.Duration("timeout", 2*time.Second, "client: give up on an answer after this long and reconnect")
	hb := flag.Duration("heartbeat", 0, "server: send a heartbeat at this interval; client: count heartbeats")
	logPings := flag.Bool("log", false, "server: print every ping received")
	exitAt := flag.Int("exit-at", -1, "server: exit with code 3 on receiving this ping, in the first incarnation")
	disk := flag.Bool("disk", false, "server: append every ping to /log and fsync it")
	pre := flag.Int("pre", 1000, "burst: bytes of 'A' written first")
	post := flag.Int("post", 10, "burst: bytes of 'B' written after -gap")
	gap := flag.Duration("gap", 500*time.Microsecond, "burst: pause between the two writes")
	wait := flag.Duration("wait", 100*time.Millisecond, "burst: pause after the dial")
	closeAfter := flag.Bool("close", false, "burst: close the connection after the writes")
	linger := flag.Duration("linger", time.Second, "burst: pause before exiting")
	flag.Parse()
	switch *role {
	case "sink":
		sink()
		return
	case "burst":
		burst(*targets, *pre, *post, *gap, *wait, *closeAfter, *linger)
		return
	}
	if *role == "server" {
		if os.Getenv("SEEDFALL_INCARNATION") != "1" {
			*exitAt = -1
		}
		serve(*hb, *logPings, *disk, *exitAt)
		return
	}
	if *hb > 0 {
		heartbeats(*targets, *n, *hb)
		return
	}
	ping(strings.Split(*targets, ","), *n, *every, *timeout)
}

func serve(hb time.Duration, logPings, disk bool, exitAt int) {
	var log *os.File
	if disk {
		var err error
		if log, err = os.OpenFile("/log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			fmt.Println("open log:", err)
			os.Exit(1)
		}
	}
	ln, err := sim.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Println("accept:", err)
			continue
		}
		if hb > 0 {
			go func() {
				defer c.Close()
				for i := 0; ; i++ {
					if _, err := fmt.Fprintf(c, "hb %d\n", i); err != nil {
						return
					}
					time.Sleep(hb)
				}
			}()
			continue
		}
		go func() {
			defer c.Close()
			r := bufio.NewScanner(c)
			for r.Scan() {
				line := r.Text()
				if logPings {
					fmt.Println("got", line)
				}
				if line == fmt.Sprintf("ping %d", exitAt) {
					fmt.Println("exiting on", line)
					os.Exit(3)
				}
				if log != nil {
					log.WriteString(line + "\n")
					if err := log.Sync(); err != nil {
						fmt.Println("fsync:", err)
					}
				}
				if _, err := fmt.Fprintf(c, "pong%s\n", strings.TrimPrefix(line, "ping")); err != nil {
					return
				}
			}
		}()
	}
}

// classify names a network error by its errno.
func classify(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	}
	return "error " + err.Error()
}

type peer struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
}

func (p *peer) connect() bool {
	if p.c != nil {
		return true
	}
	c, err := sim.Dial("tcp", p.addr)
	if err != nil {
		fmt.Printf("dial %s: %s\n", p.addr, classify(err))
		return false
	}
	p.c, p.r = c, bufio.NewReader(c)
	return true
}

func (p *peer) drop(what string, err error) {
	fmt.Printf("%s %s: %s\n", what, p.addr, classify(err))
	p.c.Close()
	p.c = nil
}

// ping pings each address in turn. An answer that does not come within timeout drops
// the connection: a server that lost power leaves it half-open, and a client that read
// without a deadline would wait for ever (a liveness bug of the client, not the server).
func ping(addrs []string, n int, every, timeout time.Duration) {
	peers := make([]*peer, len(addrs))
	for i, a := range addrs {
		peers[i] = &peer{addr: a}
	}
	for i := 0; i < n; {
		p := peers[i%len(peers)]
		if !p.connect() {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		start := time.Now()
		if _, err := fmt.Fprintf(p.c, "ping %d\n", i); err != nil {
			p.drop("write", err)
			continue
		}
		p.c.SetReadDeadline(start.Add(timeout))
		line, err := p.r.ReadString('\n')
		if err != nil {
			p.drop("read", err)
			continue
		}
		if want := fmt.Sprintf("pong %d\n", i); line != want {
			fmt.Printf("bad answer %q, want %q\n", line, want)
			os.Exit(1)
		}
		fmt.Printf("rtt %s %d %s\n", p.addr, i, time.Since(start).Round(time.Millisecond))
		i++
		time.Sleep(every)
	}
	fmt.Println("done")
}

func heartbeats(addr string, n int, every time.Duration) {
	p := &peer{addr: addr}
	for !p.connect() {
		time.Sleep(50 * time.Millisecond)
	}
	last := time.Now()
	for i := 0; i < n; i++ {
		if _, err := p.r.ReadString('\n'); err != nil {
			p.drop("read", err)
			os.Exit(1)
		}
		if gap := time.Since(last); gap > 2*every {
			fmt.Printf("heartbeat gap %s\n", gap.Round(time.Millisecond))
		}
		last = time.Now()
	}
	fmt.Println("done")
}

// sink prints, per accepted connection, the runs of equal bytes it delivered and how it
// ended ("read A1000 B10 EOF").
func sink() {
	ln, err := sim.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Println("accept:", err)
			continue
		}
		go func() {
			defer c.Close()
			var runs []string
			var cur byte
			n := 0
			buf := make([]byte, 512)
			for {
				k, err := c.Read(buf)
				for _, b := range buf[:k] {
					if n > 0 && b != cur {
						runs = append(runs, fmt.Sprintf("%c%d", cur, n))
						n = 0
					}
					cur = b
					n++
				}
				so := runs
				if n > 0 {
					so = append(so[:len(so):len(so)], fmt.Sprintf("%c%d", cur, n))
				}
				if err != nil {
					end := "EOF"
					if !errors.Is(err, io.EOF) {
						end = classify(err)
					}
					fmt.Printf("read %s\n", strings.Join(append(so, end), " "))
					return
				}
				fmt.Printf("read %s\n", strings.Join(so, " "))
			}
		}()
	}
}

// burst writes pre bytes of 'A', then (after gap) post bytes of 'B' and/or closes.
func burst(addr string, pre, post int, gap, wait time.Duration, closeAfter bool, linger time.Duration) {
	c, err := sim.Dial("tcp", addr)
	if err != nil {
		fmt.Printf("dial %s: %s\n", addr, classify(err))
		os.Exit(1)
	}
	time.Sleep(wait)
	if _, err := c.Write([]byte(strings.Repeat("A", pre))); err != nil {
		fmt.Println("write A:", classify(err))
		os.Exit(1)
	}
	fmt.Println("wrote A")
	time.Sleep(gap)
	if post > 0 {
		if _, err := c.Write([]byte(strings.Repeat("B", post))); err != nil {
			fmt.Println("write B:", classify(err))
			os.Exit(1)
		}
		fmt.Println("wrote B")
	}
	if closeAfter {
		c.Close()
		fmt.Println("closed")
	}
	time.Sleep(linger)
	fmt.Println("done")
}
