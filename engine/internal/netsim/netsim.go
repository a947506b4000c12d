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
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Errno is a socket error, numbered as in WASI preview 1 (like disk.Errno), so the
// host returns it to the guest unchanged. 0 is success.
type Errno = uint16

// The errnos the network returns.
const (
	EADDRINUSE   Errno = 3
	EAGAIN       Errno = 6
	ECONNREFUSED Errno = 14
	ECONNRESET   Errno = 15
	EHOSTUNREACH Errno = 23
	EINVAL       Errno = 28
	EPIPE        Errno = 64
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

// Sock is a host-side socket: a listener or one end of a TCP connection.
//
// A connection end has bounded buffers, as on Linux: the send buffer holds what was
// written and not yet delivered into the peer's receive buffer (sndq, not yet sent,
// plus inflight, on the link), at most sndCap bytes; a write to a full send buffer
// returns EAGAIN. The sender puts bytes on the link only while the peer's window is
// open: what is on the link plus what the peer has not read stays within the peer's
// receive buffer (rcvCap). Acknowledgements and window updates take no time (the host
// sees both ends), so a read opens the window at once.
type Sock struct {
	id       int
	listener bool
	nw       *Network
	owner    Owner
	port     int

	// listener
	backlog []*Sock

	// connection
	peer        *Sock // the other end, once the SYN arrived
	remote      *Host
	remotePort  int
	established bool
	rbuf        []byte
	eof         bool   // the peer's FIN arrived
	err         uint16 // pending error (ECONNREFUSED, ECONNRESET, EPIPE), reported once, like SO_ERROR
	dead        bool   // reset (either way): no connection; once err is reported, reads see EOF, writes EPIPE
	wrClosed    bool   // shut down for writing (or closed): a FIN follows the data already written
	finSent     bool   // the FIN is on the link
	finAcked    bool   // the FIN reached the peer
	closed      bool   // the owner closed it (an orphan until its data and FIN are sent)

	sndq     []byte // written, not yet on the link
	inflight int    // bytes on the link, not yet in the peer's receive buffer
	sndCap   int
	rcvCap   int
}

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
	l := nw.link(from, to)
	tr := &transit{seg: seg}
	l.q = append(l.q, tr)
	if l.cut > 0 {
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
		if l.cut > 0 {
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

// Listen opens a listener for inc on port (0 picks one).
func (nw *Network) Listen(inc Owner, port int) (*Sock, Errno) {
	n := inc.Host()
	if port == 0 {
		for p := 30000 + n.ports; ; p++ {
			if nw.listeners[linkKey{n.Idx, p}] == nil {
				port = p
				n.ports = p - 30000 + 1
				break
			}
		}
	}
	k := linkKey{n.Idx, port}
	if nw.listeners[k] != nil {
		return nil, EADDRINUSE
	}
	nw.nextID++
	s := &Sock{id: nw.nextID, nw: nw, listener: true, owner: inc, port: port}
	nw.listeners[k] = s
	nw.w.Tracef(inc.Label(), "listen :%d%s", port, inc.Where())
	return s, 0
}

// resolve maps "name:port" to a node and port.
func (nw *Network) resolve(self *Host, addr string) (*Host, int, Errno) {
	host, ps, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, 0, EINVAL
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port <= 0 || port > 65535 {
		return nil, 0, EINVAL
	}
	switch host {
	case "", "localhost", "127.0.0.1", "::1", "[::1]":
		return self, port, 0
	}
	if n := nw.cfg.Lookup(host); n != nil {
		return n, port, 0
	}
	return nil, 0, EHOSTUNREACH
}

// Dial starts a connection from inc to addr; it completes asynchronously.
func (nw *Network) Dial(inc Owner, addr string) (*Sock, Errno) {
	to, port, e := nw.resolve(inc.Host(), addr)
	if e != 0 {
		return nil, e
	}
	n := inc.Host()
	n.ports++
	nw.nextID++
	s := &Sock{id: nw.nextID, nw: nw, owner: inc, port: 40000 + n.ports, remote: to, remotePort: port}
	nw.setCaps(s)
	nw.w.Tracef(inc.Label(), "dial %s:%d%s", to.Name, port, inc.Where())
	nw.send(n, to, segment{kind: segSYN, from: s})
	return s, 0
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

// setCaps gives a new connection end the configured buffer sizes.
func (nw *Network) setCaps(s *Sock) {
	s.sndCap = nw.cfg.SendBuf
	s.rcvCap = nw.cfg.RecvBuf
}

// buffered is what s's send buffer holds: written and not yet in the peer's receive
// buffer.
func (s *Sock) buffered() int { return len(s.sndq) + s.inflight }

// canWrite reports whether poll finds s writable on the data path: like Linux, once at
// least a third of the send buffer is free.
func (s *Sock) canWrite() bool { return s.established && 3*s.buffered() <= 2*s.sndCap }

// window is how many more bytes s may put on the link: the peer's receive buffer less
// what is on the link and what the peer has not read.
func (s *Sock) window() int {
	w := s.rcvCap - s.inflight
	if s.peer != nil {
		w -= len(s.peer.rbuf)
	}
	return w
}

// pump puts as much of s's send queue on the link as the peer's window allows, then,
// once the queue is empty after a shutdown, the FIN. Like TCP's silly-window avoidance,
// it does not send a runt while more waits and the window is small.
func (nw *Network) pump(s *Sock) {
	if s.dead || s.listener {
		return
	}
	for len(s.sndq) > 0 {
		n := min(len(s.sndq), s.window())
		if n <= 0 || n < len(s.sndq) && n < min(s.rcvCap/2, 64<<10) {
			break
		}
		data := append([]byte(nil), s.sndq[:n]...)
		s.sndq = s.sndq[n:]
		if len(s.sndq) == 0 {
			s.sndq = nil
		}
		s.inflight += n
		nw.send(s.owner.Host(), s.remote, segment{kind: segData, from: s, data: data})
	}
	if s.wrClosed && !s.finSent && len(s.sndq) == 0 {
		s.finSent = true
		nw.send(s.owner.Host(), s.remote, segment{kind: segFIN, from: s})
	}
}

// sent is called when part of s's send buffer left it (could: s was writable before):
// it wakes a writer that waits for space, and forgets an orphan that has nothing left
// to send.
func (nw *Network) sent(s *Sock, could bool) {
	if s.closed {
		if s.dead || s.finAcked {
			nw.orphans = slices.DeleteFunc(nw.orphans, func(o *Sock) bool { return o == s })
		}
		return
	}
	if !could && s.canWrite() {
		s.owner.Wake()
	}
}

// Write queues up to len(p) bytes of p on s and returns how many it took: all of them,
// fewer (a short write) or, with the send buffer full, EAGAIN.
func (s *Sock) Write(p []byte) (int, Errno) {
	nw := s.nw
	if s.err != 0 {
		e := s.err
		s.err = 0
		return 0, e
	}
	if s.wrClosed || s.closed || s.dead {
		return 0, EPIPE
	}
	if len(p) == 0 {
		return 0, 0
	}
	n := min(len(p), s.sndCap-s.buffered())
	if n <= 0 {
		return 0, EAGAIN
	}
	s.sndq = append(s.sndq, p[:n]...)
	nw.pump(s)
	return n, 0
}

// Read takes buffered bytes from s. After the data: EOF once the peer's FIN arrived, else
// a pending error (reported once), else EOF on a reset connection, else EAGAIN.
func (s *Sock) Read(p []byte) (int, Errno) {
	nw := s.nw
	if len(s.rbuf) > 0 {
		n := copy(p, s.rbuf)
		s.rbuf = s.rbuf[n:]
		if len(s.rbuf) == 0 {
			s.rbuf = nil
		}
		// The window opens: the peer sends what waits.
		if pr := s.peer; pr != nil && len(pr.sndq) > 0 {
			nw.pump(pr)
		}
		return n, 0
	}
	if s.eof {
		return 0, 0
	}
	if s.err != 0 {
		e := s.err
		s.err = 0
		return 0, e
	}
	if s.dead {
		return 0, 0
	}
	return 0, EAGAIN
}

// Accept takes the oldest connection of listener ln's backlog for owner, or EAGAIN.
func (ln *Sock) Accept(owner Owner) (*Sock, Errno) {
	if len(ln.backlog) == 0 {
		return nil, EAGAIN
	}
	c := ln.backlog[0]
	ln.backlog = ln.backlog[1:]
	c.owner = owner
	ln.nw.w.Tracef(owner.Label(), "accept %s from %s", c.LocalAddr(), c.RemoteAddr())
	return c, 0
}

// Listener reports whether s is a listening socket.
func (s *Sock) Listener() bool { return s.listener }

// Established reports whether a connection's handshake completed.
func (s *Sock) Established() bool { return s.established }

// Err is the pending error (SO_ERROR) without clearing it; 0 if none.
func (s *Sock) Err() Errno { return s.err }

// HasData reports whether a read of s would return data.
func (s *Sock) HasData() bool { return len(s.rbuf) > 0 }

// Readable reports whether poll finds s readable: data, EOF, an error, or for a
// listener a connection to accept.
func (s *Sock) Readable() bool {
	if s.listener {
		return len(s.backlog) > 0 || s.closed
	}
	return len(s.rbuf) > 0 || s.eof || s.err != 0 || s.dead
}

// Writable reports whether poll finds s writable.
func (s *Sock) Writable() bool {
	return s.listener || s.canWrite() || s.err != 0 || s.dead || s.wrClosed || s.closed
}

// ShutdownWrite is shutdown(SHUT_WR): a FIN follows the data already written.
func (s *Sock) ShutdownWrite() { s.nw.shutdownWrite(s) }

func (nw *Network) shutdownWrite(s *Sock) {
	if s.wrClosed || s.listener {
		return
	}
	s.wrClosed = true
	nw.pump(s)
}

// Close is close(2) of the socket's last fd.
func (s *Sock) Close() { s.nw.close(s) }

func (nw *Network) close(s *Sock) {
	if s.closed {
		return
	}
	if s.listener {
		delete(nw.listeners, linkKey{s.owner.Host().Idx, s.port})
		for _, c := range s.backlog {
			nw.reset(c, false)
		}
		s.backlog = nil
		s.closed = true
		return
	}
	s.closed = true
	if len(s.rbuf) > 0 && !s.dead {
		// Closing with unread data aborts the connection, as on Linux.
		nw.w.Tracef("net", "%s reset %s: closed with %d bytes unread", s.LocalAddr(), s.RemoteAddr(), len(s.rbuf))
		s.rbuf = nil
		nw.abort(s)
		return
	}
	s.rbuf = nil
	if !s.dead {
		nw.orphans = append(nw.orphans, s)
	}
	nw.shutdownWrite(s)
	nw.sent(s, true)
}

// abort drops what s had to send and sends a reset (RST) to the peer, behind what is on
// the link already.
func (nw *Network) abort(s *Sock) {
	s.dead = true
	s.sndq = nil
	if s.remote != nil {
		nw.send(s.owner.Host(), s.remote, segment{kind: segRST, from: s})
	}
	if s.closed {
		nw.sent(s, true)
	}
}

// reset aborts a connection: the peer sees ECONNRESET after the link's latency; with
// local, s's owner sees it too.
func (nw *Network) reset(s *Sock, local bool) {
	if s.listener || s.dead {
		return
	}
	if local {
		s.err = ECONNRESET
		s.owner.Wake()
	}
	nw.abort(s)
	s.closed = true
}

// NodeDown closes every socket of a stopped incarnation (socks: those of its open fds,
// in fd order): listeners vanish and peers see resets.
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
	if l.cut == 0 {
		for _, tr := range l.q {
			if tr.stalled {
				tr.stalled = false
				nw.schedule(b, l, tr)
			}
		}
	}
}

// AddLatency adds d to the latency of the link from->to (d < 0 takes it off again).
func (nw *Network) AddLatency(from, to *Host, d int64) { nw.link(from, to).extraLat += d }

// LocalAddr is the socket's own address, "node:port".
func (s *Sock) LocalAddr() string { return fmt.Sprintf("%s:%d", s.owner.Host().Name, s.port) }

// RemoteAddr is the peer's address, "" for a listener.
func (s *Sock) RemoteAddr() string {
	if s.remote == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", s.remote.Name, s.remotePort)
}
