package wasi

import (
	"strconv"

	"github.com/tetratelabs/wazero/api"
)

// Sockets: sock_accept and sock_shutdown of WASI, and the seedfall module's sock_listen,
// sock_dial, sock_status and sock_addr that WASI lacks. The sockets are netsim's.

func sockAccept(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock || !e.sock.Listener() {
		return errnoNotSock
	}
	h.p.Advance()
	c, errno := e.sock.Accept(h.p)
	if errno != 0 {
		return uint32(errno)
	}
	fd := h.newFD(&fdEntry{kind: fdSock, sock: c, flags: uint16(u32(s, 1))})
	putU32(m, u32(s, 2), fd)
	return 0
}

func sockShutdown(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock {
		return errnoNotSock
	}
	how := u32(s, 1)
	if how&^3 != 0 {
		return errnoInval
	}
	if how&1 != 0 {
		e.sock.ShutdownRead()
	}
	if how&2 != 0 {
		e.sock.ShutdownWrite()
	}
	return 0
}

// sockLinger is setsockopt(SO_LINGER): on (0 or 1) and the timeout in seconds.
func sockLinger(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock {
		return errnoNotSock
	}
	on, sec := u32(s, 1), int32(u32(s, 2))
	if on > 1 || sec < 0 {
		return errnoInval
	}
	e.sock.SetLinger(on == 1, int(sec))
	return 0
}

func sockListen(h *Process, m api.Memory, s []uint64) uint32 {
	addr := readString(m, u32(s, 0), u32(s, 1))
	port := 0
	if i := lastColon(addr); i >= 0 {
		p, err := strconv.Atoi(addr[i+1:])
		if err != nil || p < 0 || p > 65535 {
			return errnoInval
		}
		port = p
	} else {
		return errnoInval
	}
	h.p.Advance()
	sk, errno := h.p.Listen(port)
	if errno != 0 {
		return uint32(errno)
	}
	putU32(m, u32(s, 2), h.newFD(&fdEntry{kind: fdSock, sock: sk, flags: fdflagNonblock}))
	return 0
}

func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}

func sockDial(h *Process, m api.Memory, s []uint64) uint32 {
	addr := readString(m, u32(s, 0), u32(s, 1))
	h.p.Advance()
	sk, errno := h.p.Dial(addr)
	if errno != 0 {
		return uint32(errno)
	}
	putU32(m, u32(s, 2), h.newFD(&fdEntry{kind: fdSock, sock: sk, flags: fdflagNonblock}))
	return 0
}

func sockStatus(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock {
		return errnoNotSock
	}
	sk := e.sock
	switch {
	case sk.Err() != 0:
		return uint32(sk.Err())
	case sk.Listener():
		return errnoNotSock
	case sk.Established():
		return 0
	default:
		return errnoAgain
	}
}

func sockAddr(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock {
		return errnoNotSock
	}
	var a string
	if u32(s, 1) == 0 {
		a = e.sock.LocalAddr()
	} else {
		a = e.sock.RemoteAddr()
		if a == "" {
			return errnoNotConn
		}
	}
	if uint32(len(a)) > u32(s, 3) {
		return errnoInval
	}
	m.Write(u32(s, 2), []byte(a))
	putU32(m, u32(s, 4), uint32(len(a)))
	return 0
}
