package engine

import (
	"fmt"
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
	err         uint16 // ECONNREFUSED, ECONNRESET
	wrClosed    bool
	closed      bool
}

type segment struct {
	kind segKind
	from *sock // sending socket
	data []byte
}

type linkKey struct{ from, to int }

// link carries segments from one node to another, in order.
type link struct {
	lastAt   int64
	cut      int // active partitions cutting this direction
	stalled  []segment
	extraLat int64
}

// network is the simulated network: listeners by (node, port), links with latency and
// partitions.
type network struct {
	w         *world
	listeners map[linkKey]*sock // (node idx, port)
	links     map[linkKey]*link
	nextID    int
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
// segment already on it.
func (nw *network) send(from, to *node, seg segment) {
	l := nw.link(from, to)
	if l.cut > 0 {
		l.stalled = append(l.stalled, seg)
		return
	}
	nw.schedule(from, to, l, seg)
}

func (nw *network) schedule(from, to *node, l *link, seg segment) {
	at := max(nw.w.now+nw.latency(l), l.lastAt)
	l.lastAt = at
	nw.w.schedule(at, func() {
		if l.cut > 0 {
			l.stalled = append(l.stalled, seg)
			return
		}
		nw.deliver(to, seg)
	})
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
		c := from.peer
		if c == nil || c.closed || c.err != 0 {
			return
		}
		c.rbuf = append(c.rbuf, seg.data...)
		w.wake(c.owner)
	case segFIN:
		c := from.peer
		if c == nil {
			return
		}
		c.eof = true
		w.wake(c.owner)
	case segRST:
		c := from.peer
		if c == nil || c.closed {
			return
		}
		if c.err == 0 {
			c.err = from.err
			if c.err == 0 {
				c.err = errnoConnReset
			}
		}
		w.wake(c.owner)
	}
}

// write sends p on s. Writes never block: the simulated send buffer is unbounded.
func (nw *network) write(s *sock, p []byte) uint16 {
	if s.err != 0 {
		return s.err
	}
	if s.wrClosed || s.closed {
		return errnoPipe
	}
	data := append([]byte(nil), p...)
	nw.send(s.owner.node, s.remote, segment{kind: segData, from: s, data: data})
	return 0
}

func (nw *network) read(s *sock, p []byte) (int, uint16) {
	if len(s.rbuf) > 0 {
		n := copy(p, s.rbuf)
		s.rbuf = s.rbuf[n:]
		if len(s.rbuf) == 0 {
			s.rbuf = nil
		}
		return n, 0
	}
	if s.err != 0 {
		return 0, s.err
	}
	if s.eof {
		return 0, 0
	}
	return 0, errnoAgain
}

func (s *sock) readable() bool {
	if s.listener {
		return len(s.backlog) > 0 || s.closed
	}
	return len(s.rbuf) > 0 || s.eof || s.err != 0
}

func (s *sock) writable() bool {
	return s.listener || s.established || s.err != 0 || s.closed
}

func (nw *network) shutdownWrite(s *sock) {
	if s.wrClosed || s.listener {
		return
	}
	s.wrClosed = true
	if s.err == 0 {
		nw.send(s.owner.node, s.remote, segment{kind: segFIN, from: s})
	}
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
	nw.shutdownWrite(s)
	s.closed = true
}

// reset aborts a connection: the peer sees ECONNRESET after the link's latency.
func (nw *network) reset(s *sock, local bool) {
	if s.listener || s.closed && !local {
		return
	}
	if local && s.err == 0 {
		s.err = errnoConnReset
		nw.w.wake(s.owner)
	}
	if s.remote != nil {
		nw.send(s.owner.node, s.remote, segment{kind: segRST, from: s})
	}
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
	if l.cut == 0 && len(l.stalled) > 0 {
		st := l.stalled
		l.stalled = nil
		for _, seg := range st {
			nw.schedule(a, b, l, seg)
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
