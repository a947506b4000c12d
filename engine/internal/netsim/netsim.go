// Package netsim is the simulated network: TCP-like stream sockets between nodes, with
// Linux's bounded send and receive buffers, in-order links with latency and jitter,
// partitions that stall a link's segments until it heals, resets and refusals.
//
// It owns the sockets, listeners, links and segments in transit. It may not read a
// clock or draw randomness of its own: virtual time, the event queue and the random
// stream come from the World (the engine's scheduler), and a socket's owner (an
// incarnation) is told of changes only through Owner.Wake. It never blocks: a call
// that cannot proceed returns EAGAIN and the WASI host decides whether to park.
package netsim

import (
	"math/rand/v2"
	"slices"

	"github.com/seedfall/seedfall/engine/internal/errno"
)

// Errno is a socket error, numbered as in WASI preview 1 (the one table,
// internal/errno), so the host returns it to the guest unchanged. 0 is success.
type Errno = uint16

// The errnos the network returns.
const (
	EADDRINUSE   = Errno(errno.EADDRINUSE)
	EAGAIN       = Errno(errno.EAGAIN)
	ECONNREFUSED = Errno(errno.ECONNREFUSED)
	ECONNRESET   = Errno(errno.ECONNRESET)
	EHOSTUNREACH = Errno(errno.EHOSTUNREACH)
	EINVAL       = Errno(errno.EINVAL)
	EPIPE        = Errno(errno.EPIPE)
)

// World is what the network needs of the simulation around it: virtual time, the event
// queue, the trace and the network's random stream (for jitter).
type World interface {
	Now() int64
	// Schedule runs fn on the scheduler at virtual time at (not before Now).
	Schedule(at int64, fn func())
	Tracef(who, format string, args ...any)
	// NetRand is the network's random stream; the world may replace it mid-run (cause).
	NetRand() *rand.Rand
}

// Owner is the process that holds a socket: one incarnation of a node.
type Owner interface {
	Host() *Host
	Label() string // "server#2", for the trace
	Done() bool    // stopped: a SYN to its listener is refused
	Wake()         // a socket it may be waiting on changed (no-op unless blocked)
	Where() string // " at file:line" of the guest's current call, or ""
}

// Host is one node's network identity.
type Host struct {
	Idx   int
	Name  string
	ports int // ports handed out so far (listeners from 30000, dialers from 40000)
	// Sent counts the segments the host has put on a link (data, SYN, SYN-ACK, FIN,
	// RST): between two equal counts it told nobody anything (the crash-state probe's
	// equivalence, engine/crashstates.go).
	Sent int64
	// down: the machine lost power (PowerLoss) and has not come back (PowerOn).
	// Segments to it are held on their links, like a partition's, and delivered when it
	// is back: a peer's retransmission reaches the restarted machine.
	down bool
}

// Config is the network's fixed configuration.
type Config struct {
	Latency, Jitter  int64 // per segment, nanoseconds
	SendBuf, RecvBuf int   // bytes per connection end
	// Lookup maps a host name of an address (a node name or the IP the net overlay
	// gave it) to a node; nil if there is none.
	Lookup func(host string) *Host
}

type segKind uint8

const (
	segSYN segKind = iota
	segSYNACK
	segData
	segFIN
	segRST
)

type segment struct {
	kind segKind
	from *Sock // sending socket
	data []byte
}

type linkKey struct{ from, to int }

// link carries segments from one node to another, in order (FIFO): a segment is
// delivered only after every segment sent before it on the link.
type link struct {
	lastAt   int64
	cut      int        // active partitions cutting this direction
	q        []*transit // on the link, oldest first
	extraLat int64
}

// transit is a segment on a link.
type transit struct {
	seg     segment
	stalled bool // held by a partition: scheduled again, in order, when the link heals
	due     bool // its arrival time has come; delivered once the segments ahead of it are
}

// Network is the simulated network: listeners by (node, port), links with latency and
// partitions.
type Network struct {
	w         World
	cfg       Config
	listeners map[linkKey]*Sock // (node idx, port)
	links     map[linkKey]*link
	nextID    int
	orphans   []*Sock // closed connections still sending their data or FIN
}

// New returns an empty network.
func New(w World, cfg Config) *Network {
	return &Network{w: w, cfg: cfg, listeners: map[linkKey]*Sock{}, links: map[linkKey]*link{}}
}

func (nw *Network) link(from, to *Host) *link {
	k := linkKey{from.Idx, to.Idx}
	l := nw.links[k]
	if l == nil {
		l = &link{}
		nw.links[k] = l
	}
	return l
}

func (nw *Network) latency(l *link) int64 {
	lat := nw.cfg.Latency + l.extraLat
	if nw.cfg.Jitter > 0 {
		lat += nw.w.NetRand().Int64N(nw.cfg.Jitter + 1)
	}
	return lat
}

// send puts a segment on the link from->to, after the link's latency and behind every
// segment already on it. On a cut link the segment is held (stalled) until the heal.
func (nw *Network) send(from, to *Host, seg segment) {
	from.Sent++
	l := nw.link(from, to)
	tr := &transit{seg: seg}
	l.q = append(l.q, tr)
	if l.cut > 0 || to.down {
		tr.stalled = true
		return
	}
	nw.schedule(to, l, tr)
}

// schedule sets a segment's arrival. A segment that arrives while the link is cut is
// held where it is in the link's queue, ahead of every later one.
func (nw *Network) schedule(to *Host, l *link, tr *transit) {
	at := max(nw.w.Now()+nw.latency(l), l.lastAt)
	l.lastAt = at
	nw.w.Schedule(at, func() {
		if l.cut > 0 || to.down {
			tr.stalled = true
			return
		}
		tr.due = true
		nw.flush(to, l)
	})
}

// flush delivers the segments at the head of the link whose time has come.
func (nw *Network) flush(to *Host, l *link) {
	for len(l.q) > 0 && l.q[0].due {
		tr := l.q[0]
		l.q[0] = nil
		l.q = l.q[1:]
		nw.deliver(to, tr.seg)
	}
	if len(l.q) == 0 {
		l.q = nil
	}
}

func (nw *Network) deliver(to *Host, seg segment) {
	w := nw.w
	from := seg.from
	switch seg.kind {
	case segSYN:
		ln := nw.listeners[linkKey{to.Idx, from.remotePort}]
		if ln == nil || ln.owner.Done() || ln.closed {
			w.Tracef("net", "%s:%d refused %s", to.Name, from.remotePort, from.owner.Label())
			nw.send(to, from.owner.Host(), segment{kind: segRST, from: &Sock{peer: from, err: ECONNREFUSED}})
			return
		}
		nw.nextID++
		srv := &Sock{id: nw.nextID, nw: nw, owner: ln.owner, port: from.remotePort, remote: from.owner.Host(),
			remotePort: from.port, peer: from, established: true}
		nw.setCaps(srv)
		from.peer = srv
		ln.backlog = append(ln.backlog, srv)
		ln.owner.Wake()
		nw.send(to, from.owner.Host(), segment{kind: segSYNACK, from: srv})
	case segSYNACK:
		c := from.peer
		if c != nil && c.vanished {
			nw.noSuchConnection(c)
			return
		}
		if c == nil || c.closed {
			return
		}
		c.established = true
		c.owner.Wake()
	case segData:
		could := from.canWrite()
		from.inflight -= len(seg.data)
		nw.sent(from, could)
		c := from.peer
		if c == nil {
			return
		}
		if c.vanished {
			nw.noSuchConnection(c)
			return
		}
		if c.closed || c.dead {
			// Data that reaches a closed socket is answered with a reset, as on Linux.
			if !c.dead {
				w.Tracef("net", "%s reset %s: data after close", c.LocalAddr(), c.RemoteAddr())
			}
			nw.abort(c)
			return
		}
		c.rbuf = append(c.rbuf, seg.data...)
		c.owner.Wake()
	case segFIN:
		from.finAcked = true
		nw.sent(from, true)
		c := from.peer
		if c == nil {
			return
		}
		if c.vanished {
			nw.noSuchConnection(c)
			return
		}
		c.eof = true
		c.owner.Wake()
	case segRST:
		c := from.peer
		if c == nil || c.dead {
			return
		}
		c.dead = true
		c.sndq = nil
		switch {
		case c.closed:
			// An orphan: nobody is left to see the error.
			nw.sent(c, true)
		case from.err != 0:
			c.err = from.err // a refused connect
		case c.eof && c.finAcked:
			// Both FINs are through: the connection is closed already.
		case c.eof && !c.wrClosed:
			c.err = EPIPE // CLOSE_WAIT: Linux reports EPIPE
		default:
			c.err = ECONNRESET
		}
		c.owner.Wake()
	}
}

// noSuchConnection answers a segment that reached a connection its machine lost in a
// power loss, now that the machine is up again: the restarted kernel knows no such
// connection and sends a reset, as Linux does.
func (nw *Network) noSuchConnection(c *Sock) {
	nw.w.Tracef("net", "%s reset %s: no such connection (lost with the power)", c.LocalAddr(), c.RemoteAddr())
	nw.abort(c)
}

// ProcessExit closes every socket of an incarnation whose process died on a live
// machine (killed, panicked or exited; socks: those of its open fds, in fd order): its
// kernel closes them as close(2) would, so peers get a FIN after the data already
// written, or a reset where received data was unread (or SO_LINGER was 0). Connections
// it had closed already keep sending their data and FIN: the kernel owns them.
func (nw *Network) ProcessExit(socks []*Sock) {
	for _, s := range socks {
		nw.close(s)
	}
}

// PowerLoss is a machine's power loss, with inc the incarnation that ran on it: its
// connections, listeners and the connections it had closed vanish without a segment
// sent, so its peers' connections are half-open. Segments still on the wire from it
// arrive; segments to it are held until PowerOn, and then a segment for a lost
// connection is answered with a reset (noSuchConnection). A peer that never sends
// learns nothing until its own timeout.
func (nw *Network) PowerLoss(h *Host, inc Owner, socks []*Sock) {
	h.down = true
	vanish := func(s *Sock) {
		if s.listener {
			delete(nw.listeners, linkKey{h.Idx, s.port})
			for _, c := range s.backlog {
				c.vanish()
			}
			s.backlog = nil
			s.closed = true
			return
		}
		s.vanish()
	}
	for _, s := range socks {
		vanish(s)
	}
	for _, s := range nw.orphans {
		if s.owner == inc {
			s.vanish()
		}
	}
	nw.orphans = slices.DeleteFunc(nw.orphans, func(o *Sock) bool { return o.owner == inc })
}

// PowerOn brings a machine back after PowerLoss: the segments held for it go on their
// way again, link by link in node order, each link in order.
func (nw *Network) PowerOn(h *Host) {
	if !h.down {
		return
	}
	h.down = false
	keys := make([]linkKey, 0, len(nw.links))
	for k := range nw.links {
		if k.to == h.Idx {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b linkKey) int { return a.from - b.from })
	for _, k := range keys {
		if l := nw.links[k]; l.cut == 0 {
			nw.release(h, l)
		}
	}
}

// release schedules again, in order, the segments a link held.
func (nw *Network) release(to *Host, l *link) {
	for _, tr := range l.q {
		if tr.stalled {
			tr.stalled = false
			nw.schedule(to, l, tr)
		}
	}
}

// NodeDown closes every socket of a stopped incarnation (socks: those of its open fds,
// in fd order): listeners vanish and peers see resets. The engine uses it when a run
// ends, where what peers see no longer matters; a process death is ProcessExit and a
// power loss PowerLoss.
func (nw *Network) NodeDown(inc Owner, socks []*Sock) {
	for _, s := range socks {
		if s.listener {
			nw.close(s)
		} else if !s.closed {
			nw.reset(s, false)
		}
	}
	// Connections it closed that were still sending die with it.
	for _, s := range slices.Clone(nw.orphans) {
		if s.owner == inc {
			nw.reset(s, false)
		}
	}
}

// ResetAll resets every connection of socks (an incarnation's, in fd order: the reset
// fault).
func (nw *Network) ResetAll(socks []*Sock) {
	for _, s := range socks {
		if !s.listener && !s.closed {
			nw.reset(s, true)
		}
	}
}

// SetCut adds d to the partitions cutting the link a->b; when none is left, the
// segments it held are scheduled again, in order.
func (nw *Network) SetCut(a, b *Host, d int) {
	l := nw.link(a, b)
	l.cut += d
	if l.cut == 0 && !b.down {
		nw.release(b, l)
	}
}

// AddLatency adds d to the latency of the link from->to (d < 0 takes it off again).
func (nw *Network) AddLatency(from, to *Host, d int64) { nw.link(from, to).extraLat += d }
