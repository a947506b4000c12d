package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

type segKind uint8

const (
	segSYN segKind = iota
	segSYNACK
	segData
	segFIN
	segRST
)

// sock is a host-side socket: a listener or one end of a TCP connection.
//
// A connection end has bounded buffers, as on Linux: the send buffer holds what was
// written and not yet delivered into the peer's receive buffer (sndq, not yet sent,
// plus inflight, on the link), at most sndCap bytes; a write to a full send buffer
// returns EAGAIN. The sender puts bytes on the link only while the peer's window is
// open: what is on the link plus what the peer has not read stays within the peer's
// receive buffer (rcvCap). Acknowledgements and window updates take no time (the host
// sees both ends), so a read opens the window at once.
type sock struct {
	id       int
	listener bool
	owner    *incarnation
	port     int

	// listener
	backlog []*sock

	// connection
	peer        *sock // the other end, once the SYN arrived
	remote      *node
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
	from *sock // sending socket
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

// network is the simulated network: listeners by (node, port), links with latency and
// partitions.
type network struct {
	w         *world
	listeners map[linkKey]*sock // (node idx, port)
	links     map[linkKey]*link
	nextID    int
	orphans   []*sock // closed connections still sending their data or FIN
}

func newNetwork(w *world) *network {
	return &network{w: w, listeners: map[linkKey]*sock{}, links: map[linkKey]*link{}}
}

func (nw *network) link(from, to *node) *link {
	k := linkKey{from.idx, to.idx}
	l := nw.links[k]
	if l == nil {
		l = &link{}
		nw.links[k] = l
	}
	return l
}

func (nw *network) latency(l *link) int64 {
	f := nw.w.cfg.Faults
	lat := int64(f.Latency) + l.extraLat
	if f.Jitter > 0 {
		lat += nw.w.rngNet.Int64N(int64(f.Jitter) + 1)
	}
	return lat
}

// send puts a segment on the link from->to, after the link's latency and behind every
// segment already on it. On a cut link the segment is held (stalled) until the heal.
func (nw *network) send(from, to *node, seg segment) {
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
func (nw *network) schedule(to *node, l *link, tr *transit) {
	at := max(nw.w.now+nw.latency(l), l.lastAt)
	l.lastAt = at
	nw.w.schedule(at, func() {
		if l.cut > 0 {
			tr.stalled = true
			return
		}
		tr.due = true
		nw.flush(to, l)
	})
}

// flush delivers the segments at the head of the link whose time has come.
func (nw *network) flush(to *node, l *link) {
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

// listen opens a listener for inc on port (0 picks one).
func (nw *network) listen(inc *incarnation, port int) (*sock, uint16) {
	n := inc.node
	if port == 0 {
		for p := 30000 + n.ports; ; p++ {
			if nw.listeners[linkKey{n.idx, p}] == nil {
				port = p
				n.ports = p - 30000 + 1
				break
			}
		}
	}
	k := linkKey{n.idx, port}
	if nw.listeners[k] != nil {
		return nil, errnoAddrInUse
	}
	nw.nextID++
	s := &sock{id: nw.nextID, listener: true, owner: inc, port: port}
	nw.listeners[k] = s
	nw.w.tracef(inc.label, "listen :%d%s", port, at(inc))
	return s, 0
}

// resolve maps "name:port" to a node and port.
func (nw *network) resolve(self *node, addr string) (*node, int, uint16) {
	host, ps, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, 0, errnoInval
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port <= 0 || port > 65535 {
		return nil, 0, errnoInval
	}
	switch host {
	case "", "localhost", "127.0.0.1", "::1", "[::1]":
		return self, port, 0
	}
	if n := nw.w.byName[host]; n != nil {
		return n, port, 0
	}
	if name, ok := nw.w.sim.nodeIPs[host]; ok {
		return nw.w.byName[name], port, 0
	}
	return nil, 0, errnoHostUnreach
}

// dial starts a connection from inc to addr; it completes asynchronously.
func (nw *network) dial(inc *incarnation, addr string) (*sock, uint16) {
	to, port, e := nw.resolve(inc.node, addr)
	if e != 0 {
		return nil, e
	}
	n := inc.node
	n.ports++
	nw.nextID++
	s := &sock{id: nw.nextID, owner: inc, port: 40000 + n.ports, remote: to, remotePort: port}
	nw.setCaps(s)
	nw.w.tracef(inc.label, "dial %s:%d%s", to.name, port, at(inc))
	nw.send(n, to, segment{kind: segSYN, from: s})
	return s, 0
}

func (nw *network) deliver(to *node, seg segment) {
	w := nw.w
	from := seg.from
	switch seg.kind {
	case segSYN:
		ln := nw.listeners[linkKey{to.idx, from.remotePort}]
		if ln == nil || ln.owner.state == incDone || ln.closed {
			w.tracef("net", "%s:%d refused %s", to.name, from.remotePort, from.owner.label)
			nw.send(to, from.owner.node, segment{kind: segRST, from: &sock{peer: from, err: errnoConnRefused}})
			return
		}
		nw.nextID++
		srv := &sock{id: nw.nextID, owner: ln.owner, port: from.remotePort, remote: from.owner.node,
			remotePort: from.port, peer: from, established: true}
		nw.setCaps(srv)
		from.peer = srv
		ln.backlog = append(ln.backlog, srv)
		w.wake(ln.owner)
		nw.send(to, from.owner.node, segment{kind: segSYNACK, from: srv})
	case segSYNACK:
		c := from.peer
		if c == nil || c.closed {
			return
		}
		c.established = true
		w.wake(c.owner)
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
				w.tracef("net", "%s reset %s: data after close", c.localAddr(), c.remoteAddr())
			}
			nw.abort(c)
			return
		}
		c.rbuf = append(c.rbuf, seg.data...)
		w.wake(c.owner)
	case segFIN:
		from.finAcked = true
		nw.sent(from, true)
		c := from.peer
		if c == nil {
			return
		}
		c.eof = true
		w.wake(c.owner)
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
			c.err = errnoPipe // CLOSE_WAIT: Linux reports EPIPE
		default:
			c.err = errnoConnReset
		}
		w.wake(c.owner)
	}
}

// setCaps gives a new connection end the configured buffer sizes.
func (nw *network) setCaps(s *sock) {
	s.sndCap = nw.w.cfg.Net.SendBufferKiB * 1024
	s.rcvCap = nw.w.cfg.Net.RecvBufferKiB * 1024
}

// buffered is what s's send buffer holds: written and not yet in the peer's receive
// buffer.
func (s *sock) buffered() int { return len(s.sndq) + s.inflight }

// canWrite reports whether poll finds s writable on the data path: like Linux, once at
// least a third of the send buffer is free.
func (s *sock) canWrite() bool { return s.established && 3*s.buffered() <= 2*s.sndCap }

// window is how many more bytes s may put on the link: the peer's receive buffer less
// what is on the link and what the peer has not read.
func (s *sock) window() int {
	w := s.rcvCap - s.inflight
	if s.peer != nil {
		w -= len(s.peer.rbuf)
	}
	return w
}

// pump puts as much of s's send queue on the link as the peer's window allows, then,
// once the queue is empty after a shutdown, the FIN. Like TCP's silly-window avoidance,
// it does not send a runt while more waits and the window is small.
func (nw *network) pump(s *sock) {
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
		nw.send(s.owner.node, s.remote, segment{kind: segData, from: s, data: data})
	}
	if s.wrClosed && !s.finSent && len(s.sndq) == 0 {
		s.finSent = true
		nw.send(s.owner.node, s.remote, segment{kind: segFIN, from: s})
	}
}

// sent is called when part of s's send buffer left it (could: s was writable before):
// it wakes a writer that waits for space, and forgets an orphan that has nothing left
// to send.
func (nw *network) sent(s *sock, could bool) {
	if s.closed {
		if s.dead || s.finAcked {
			nw.orphans = slices.DeleteFunc(nw.orphans, func(o *sock) bool { return o == s })
		}
		return
	}
	if !could && s.canWrite() {
		nw.w.wake(s.owner)
	}
}

// write queues up to len(p) bytes of p on s and returns how many it took: all of them,
// fewer (a short write) or, with the send buffer full, EAGAIN.
func (nw *network) write(s *sock, p []byte) (int, uint16) {
	if s.err != 0 {
		e := s.err
		s.err = 0
		return 0, e
	}
	if s.wrClosed || s.closed || s.dead {
		return 0, errnoPipe
	}
	if len(p) == 0 {
		return 0, 0
	}
	n := min(len(p), s.sndCap-s.buffered())
	if n <= 0 {
		return 0, errnoAgain
	}
	s.sndq = append(s.sndq, p[:n]...)
	nw.pump(s)
	return n, 0
}

// read takes buffered bytes from s. After the data: EOF once the peer's FIN arrived, else
// a pending error (reported once), else EOF on a reset connection, else EAGAIN.
func (nw *network) read(s *sock, p []byte) (int, uint16) {
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
	return 0, errnoAgain
}

// buffered reports whether a read of s would return data.
func (s *sock) hasData() bool { return len(s.rbuf) > 0 }

func (s *sock) readable() bool {
	if s.listener {
		return len(s.backlog) > 0 || s.closed
	}
	return len(s.rbuf) > 0 || s.eof || s.err != 0 || s.dead
}

func (s *sock) writable() bool {
	return s.listener || s.canWrite() || s.err != 0 || s.dead || s.wrClosed || s.closed
}

func (nw *network) shutdownWrite(s *sock) {
	if s.wrClosed || s.listener {
		return
	}
	s.wrClosed = true
	nw.pump(s)
}

func (nw *network) close(s *sock) {
	if s.closed {
		return
	}
	if s.listener {
		delete(nw.listeners, linkKey{s.owner.node.idx, s.port})
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
		nw.w.tracef("net", "%s reset %s: closed with %d bytes unread", s.localAddr(), s.remoteAddr(), len(s.rbuf))
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
func (nw *network) abort(s *sock) {
	s.dead = true
	s.sndq = nil
	if s.remote != nil {
		nw.send(s.owner.node, s.remote, segment{kind: segRST, from: s})
	}
	if s.closed {
		nw.sent(s, true)
	}
}

// reset aborts a connection: the peer sees ECONNRESET after the link's latency; with
// local, s's owner sees it too.
func (nw *network) reset(s *sock, local bool) {
	if s.listener || s.dead {
		return
	}
	if local {
		s.err = errnoConnReset
		nw.w.wake(s.owner)
	}
	nw.abort(s)
	s.closed = true
}

// nodeDown closes every socket of a stopped incarnation: listeners vanish and peers see
// resets.
func (nw *network) nodeDown(inc *incarnation) {
	for _, fd := range inc.fds {
		if fd == nil || fd.sock == nil {
			continue
		}
		s := fd.sock
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

// resetAll resets every connection of inc (the reset fault).
func (nw *network) resetAll(inc *incarnation) {
	for _, fd := range inc.fds {
		if fd != nil && fd.sock != nil && !fd.sock.listener && !fd.sock.closed {
			nw.reset(fd.sock, true)
		}
	}
}

func (nw *network) setCut(a, b *node, d int) {
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

// partition cuts the links of f.Node to f.Peers for f.DurationNS.
func (nw *network) partition(f Fault) {
	n := nw.w.byName[f.Node]
	var peers []*node
	for _, p := range f.Peers {
		if pn := nw.w.byName[p]; pn != nil && pn != n {
			peers = append(peers, pn)
		}
	}
	apply := func(d int) {
		for _, p := range peers {
			nw.setCut(n, p, d)
			if !f.OneWay {
				nw.setCut(p, n, d)
			}
		}
	}
	apply(1)
	nw.w.schedule(nw.w.now+f.DurationNS, func() {
		apply(-1)
		nw.w.tracef("fault", "heal %s", f.Node)
	})
}

func (nw *network) addLatency(f Fault) {
	n := nw.w.byName[f.Node]
	var ls []*link
	for _, p := range nw.w.nodes {
		if p != n {
			ls = append(ls, nw.link(n, p), nw.link(p, n))
		}
	}
	for _, l := range ls {
		l.extraLat += f.LatencyNS
	}
	nw.w.schedule(nw.w.now+f.DurationNS, func() {
		for _, l := range ls {
			l.extraLat -= f.LatencyNS
		}
	})
}

func (s *sock) localAddr() string { return fmt.Sprintf("%s:%d", s.owner.node.name, s.port) }
func (s *sock) remoteAddr() string {
	if s.remote == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", s.remote.name, s.remotePort)
}
