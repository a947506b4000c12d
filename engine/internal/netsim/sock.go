package netsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	rdClosed    bool   // shut down for reading: once rbuf is empty, reads return EOF at once
	linger0     bool   // SO_LINGER on with a zero timeout: close aborts (RST) instead of FIN
	vanished    bool   // lost in its machine's power loss: no segment was sent for it

	sndq     []byte // written, not yet on the link
	inflight int    // bytes on the link, not yet in the peer's receive buffer
	sndCap   int
	rcvCap   int
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
	if s.eof || s.rdClosed {
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
	return len(s.rbuf) > 0 || s.eof || s.err != 0 || s.dead || s.rdClosed
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

// ShutdownRead is shutdown(SHUT_RD), as on Linux: nothing goes on the wire, reads
// return what is buffered and then EOF at once, and a reader blocked on s wakes. (Linux
// still queues data that arrives later, and so does s: a read returns it.)
func (s *Sock) ShutdownRead() {
	if s.listener || s.rdClosed {
		return
	}
	s.rdClosed = true
	s.owner.Wake()
}

// SetLinger is SO_LINGER: on with sec 0, close(2) aborts the connection (RST, the peer
// reads ECONNRESET) instead of sending a FIN. A positive timeout behaves as a normal
// close: the simulated network delivers the data anyway, so no close outlives it.
func (s *Sock) SetLinger(on bool, sec int) {
	s.linger0 = on && sec == 0
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
	if s.linger0 && !s.dead {
		nw.w.Tracef("net", "%s reset %s: closed with linger 0", s.LocalAddr(), s.RemoteAddr())
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

// vanish forgets a connection end in a power loss: no segment goes out.
func (s *Sock) vanish() {
	s.vanished, s.dead, s.closed = true, true, true
	s.sndq, s.rbuf = nil, nil
}

// LocalAddr is the socket's own address, "node:port".
func (s *Sock) LocalAddr() string { return fmt.Sprintf("%s:%d", s.owner.Host().Name, s.port) }

// RemoteAddr is the peer's address, "" for a listener.
func (s *Sock) RemoteAddr() string {
	if s.remote == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", s.remote.Name, s.remotePort)
}
