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
