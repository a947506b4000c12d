package netsim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// fakeWorld is the least a World must be: a clock, an event queue ordered by (time,
// sequence), a trace and a random stream. The tests drive the network through it
// alone, without the engine.
type fakeWorld struct {
	now   int64
	seq   int
	q     []fakeEvent
	trace []string
	rng   *rand.Rand
}

type fakeEvent struct {
	at  int64
	seq int
	fn  func()
}

func (w *fakeWorld) Now() int64 { return w.now }
func (w *fakeWorld) Schedule(at int64, fn func()) {
	w.seq++
	w.q = append(w.q, fakeEvent{max(at, w.now), w.seq, fn})
}
func (w *fakeWorld) Tracef(who, format string, args ...any) {
	w.trace = append(w.trace, fmt.Sprintf("%d %s %s", w.now, who, fmt.Sprintf(format, args...)))
}
func (w *fakeWorld) NetRand() *rand.Rand { return w.rng }

// runUntil fires the events due up to t, in order.
func (w *fakeWorld) runUntil(t int64) {
	for len(w.q) > 0 {
		sort.Slice(w.q, func(i, j int) bool {
			if w.q[i].at != w.q[j].at {
				return w.q[i].at < w.q[j].at
			}
			return w.q[i].seq < w.q[j].seq
		})
		e := w.q[0]
		if e.at > t {
			break
		}
		w.q = w.q[1:]
		w.now = e.at
		e.fn()
	}
	w.now = t
}

type fakeOwner struct {
	h     *Host
	done  bool
	woken int
}

func (o *fakeOwner) Host() *Host   { return o.h }
func (o *fakeOwner) Label() string { return o.h.Name }
func (o *fakeOwner) Done() bool    { return o.done }
func (o *fakeOwner) Wake()         { o.woken++ }
func (o *fakeOwner) Where() string { return "" }

const ms = int64(1e6)

// pair is a network of two hosts, a and b, with 5ms links, and a listener on b:7000.
func pair(t *testing.T) (*fakeWorld, *Network, *fakeOwner, *fakeOwner, *Sock) {
	t.Helper()
	w := &fakeWorld{rng: rand.New(rand.NewPCG(1, 2))}
	a := &fakeOwner{h: &Host{Idx: 0, Name: "a"}}
	b := &fakeOwner{h: &Host{Idx: 1, Name: "b"}}
	nw := New(w, Config{Latency: 5 * ms, SendBuf: 64 << 10, RecvBuf: 64 << 10, Lookup: func(h string) *Host {
		switch h {
		case "a":
			return a.h
		case "b":
			return b.h
		}
		return nil
	}})
	ln, e := nw.Listen(b, 7000)
	if e != 0 {
		t.Fatalf("listen: errno %d", e)
	}
	return w, nw, a, b, ln
}

func readAll(s *Sock) string {
	var out strings.Builder
	buf := make([]byte, 64)
	for {
		n, e := s.Read(buf)
		out.Write(buf[:n])
		if n == 0 || e != 0 {
			return out.String()
		}
	}
}

// A connection completes after a round trip and carries bytes after the latency.
func TestConnectAndDeliver(t *testing.T) {
	w, nw, a, b, ln := pair(t)
	c, e := nw.Dial(a, "b:7000")
	if e != 0 {
		t.Fatalf("dial: errno %d", e)
	}
	w.runUntil(5 * ms)
	srv, e := ln.Accept(b)
	if e != 0 || c.Established() {
		t.Fatalf("at 5ms: accept errno %d, client established %v; want the SYN in, the SYN-ACK not back", e, c.Established())
	}
	w.runUntil(10 * ms)
	if !c.Established() || a.woken == 0 {
		t.Fatalf("at 10ms the client is not established (woken %d)", a.woken)
	}
	if n, e := c.Write([]byte("hello")); n != 5 || e != 0 {
		t.Fatalf("write: %d, errno %d", n, e)
	}
	w.runUntil(14 * ms)
	if srv.Readable() {
		t.Fatal("data arrived before the link's latency")
	}
	w.runUntil(15 * ms)
	if got := readAll(srv); got != "hello" {
		t.Fatalf("server read %q, want hello", got)
	}
}

// A partition holds the segments on the link and the heal delivers them in order; a
// dial to a port nobody listens on is refused; a host going down resets its peers.
func TestPartitionRefuseReset(t *testing.T) {
	w, nw, a, b, ln := pair(t)
	c, _ := nw.Dial(a, "b:7000")
	w.runUntil(10 * ms)
	srv, _ := ln.Accept(b)
	nw.SetCut(a.h, b.h, 1)
	c.Write([]byte("AAA"))
	w.runUntil(12 * ms)
	c.Write([]byte("BB"))
	c.ShutdownWrite()
	w.runUntil(100 * ms)
	if srv.Readable() {
		t.Fatalf("the server got %q across the partition", readAll(srv))
	}
	nw.SetCut(a.h, b.h, -1)
	w.runUntil(105 * ms)
	if got := readAll(srv); got != "AAABB" {
		t.Fatalf("after the heal the server read %q, want AAABB (in order, then EOF)", got)
	}

	d, _ := nw.Dial(a, "b:7001")
	w.runUntil(120 * ms)
	if e := d.Err(); e != ECONNREFUSED {
		t.Fatalf("dial to b:7001: errno %d, want ECONNREFUSED", e)
	}

	b.done = true
	nw.NodeDown(b, []*Sock{ln, srv})
	w.runUntil(130 * ms)
	if e := c.Err(); e != EPIPE && e != ECONNRESET {
		t.Fatalf("after b went down the client sees errno %d, want a reset", e)
	}
	if _, e := nw.Listen(a, 0); e != 0 {
		t.Fatalf("listen on a free port: errno %d", e)
	}
}

// Jitter comes from the world's stream only: the same stream, the same arrival times.
func TestJitterFromWorldStream(t *testing.T) {
	arrivals := func(seed uint64) []int64 {
		w, nw, a, b, ln := pair(t)
		w.rng = rand.New(rand.NewPCG(seed, 2))
		nw.cfg.Jitter = 3 * ms
		c, _ := nw.Dial(a, "b:7000")
		w.runUntil(20 * ms)
		srv, _ := ln.Accept(b)
		var at []int64
		for i := 0; i < 5; i++ {
			c.Write([]byte{'x'})
			for !srv.HasData() {
				w.runUntil(w.now + 100_000)
			}
			readAll(srv)
			at = append(at, w.now)
		}
		return at
	}
	x, y, z := arrivals(7), arrivals(7), arrivals(8)
	if fmt.Sprint(x) != fmt.Sprint(y) {
		t.Fatalf("same stream, different arrivals: %v vs %v", x, y)
	}
	if fmt.Sprint(x) == fmt.Sprint(z) {
		t.Fatalf("another stream, the same arrivals %v: jitter is not drawn from it", x)
	}
}

// connected returns an established connection a->b:7000 and its accepted end.
func connected(t *testing.T) (*fakeWorld, *Network, *fakeOwner, *fakeOwner, *Sock, *Sock) {
	t.Helper()
	w, nw, a, b, ln := pair(t)
	c, _ := nw.Dial(a, "b:7000")
	w.runUntil(10 * ms)
	srv, e := ln.Accept(b)
	if e != 0 || !c.Established() {
		t.Fatalf("accept errno %d, established %v", e, c.Established())
	}
	return w, nw, a, b, c, srv
}

// A power loss sends nothing: the peer's reads wait, and while b is off its segments are
// held; once b is back, the first segment gets a reset. A process exit closes with a
// FIN at once. Each is the other's control.
func TestPowerLossAndProcessExit(t *testing.T) {
	t.Run("power loss", func(t *testing.T) {
		w, nw, _, b, c, srv := connected(t)
		nw.PowerLoss(b.h, b, []*Sock{srv})
		w.runUntil(100 * ms)
		if c.Readable() {
			t.Fatal("the peer of a machine that lost power heard of it")
		}
		c.Write([]byte("ping"))
		w.runUntil(200 * ms)
		if c.Readable() {
			t.Fatal("a segment to a machine without power was answered")
		}
		nw.PowerOn(b.h)
		w.runUntil(220 * ms)
		if _, e := c.Read(make([]byte, 8)); e != ECONNRESET {
			t.Fatalf("after the power came back: read errno %d, want ECONNRESET", e)
		}
		if !strings.Contains(strings.Join(w.trace, "\n"), "no such connection (lost with the power)") {
			t.Fatalf("no reset traced:\n%s", strings.Join(w.trace, "\n"))
		}
	})
	t.Run("process exit", func(t *testing.T) {
		w, nw, _, _, c, srv := connected(t)
		nw.ProcessExit([]*Sock{srv})
		w.runUntil(20 * ms)
		if n, e := c.Read(make([]byte, 8)); n != 0 || e != 0 {
			t.Fatalf("after the peer's process exited: read %d, errno %d, want EOF", n, e)
		}
	})
}

// shutdown(SHUT_RD) makes reads return buffered data, then EOF at once, and wakes the
// owner; linger 0 makes close send a reset instead of a FIN.
func TestShutdownReadAndLinger(t *testing.T) {
	w, _, a, _, c, srv := connected(t)
	srv.Write([]byte("hi"))
	w.runUntil(20 * ms)
	woken := a.woken
	c.ShutdownRead()
	if a.woken == woken || !c.Readable() {
		t.Fatal("shutting down the read half did not wake the reader")
	}
	if got := readAll(c); got != "hi" {
		t.Fatalf("read %q after SHUT_RD, want the buffered hi then EOF", got)
	}
	if n, e := c.Read(make([]byte, 8)); n != 0 || e != 0 {
		t.Fatalf("read %d, errno %d, want EOF", n, e)
	}
	c.SetLinger(true, 0)
	c.Close()
	w.runUntil(30 * ms)
	if _, e := srv.Read(make([]byte, 8)); e != ECONNRESET {
		t.Fatalf("the peer of a linger-0 close: errno %d, want ECONNRESET", e)
	}
}
