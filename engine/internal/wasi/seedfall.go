package wasi

import (
	"strconv"

	"github.com/tetratelabs/wazero/api"
)

// seedfallFuncs is the seedfall host module: what WASI lacks (see docs/ABI.md).
func seedfallFuncs() []wasiFunc {
	return []wasiFunc{
		{name: "sock_listen", params: params(i32, i32, i32), fn: sockListen},
		{name: "sock_dial", params: params(i32, i32, i32), fn: sockDial},
		{name: "sock_status", params: params(i32), fn: sockStatus},
		{name: "sock_addr", params: params(i32, i32, i32, i32, i32), fn: sockAddr},
		{name: "assert", params: params(i32, i32, i32, i32, i32, i32), fn: hostAssert},
		{name: "op_call", params: params(i32, i32, i32, i32), fn: opCall},
		{name: "op_return", params: params(i32, i32, i32), fn: opReturn},
		{name: "test_host_clock", params: params(i32), fn: testHostClock},
	}
}

// testHostClock is a deliberate hole in determinism, for testing -check: with
// PrepareOptions.UnsafeHostClock it returns the host's wall clock; otherwise the virtual
// clock. No real guest should import it.
func testHostClock(h *Process, m api.Memory, s []uint64) uint32 {
	putU64(m, u32(s, 0), uint64(h.p.TestHostClock()))
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

// Assertion kinds of seedfall.assert, in the ABI's numbering.
const (
	AssertAlways = iota
	AssertSometimes
	AssertReachable
	AssertUnreachable
	numAssertKinds
)

func hostAssert(h *Process, m api.Memory, s []uint64) uint32 {
	kind, cond := u32(s, 0), u32(s, 1) != 0
	if kind >= numAssertKinds {
		return errnoInval
	}
	msg := readString(m, u32(s, 2), u32(s, 3))
	details := readString(m, u32(s, 4), u32(s, 5))
	h.p.Assert(int(kind), cond, msg, details)
	return 0
}

func opCall(h *Process, m api.Memory, s []uint64) uint32 {
	in := append([]byte(nil), readBytes(m, u32(s, 1), u32(s, 2))...)
	h.p.Advance()
	putU32(m, u32(s, 3), uint32(h.p.OpCall(int(int32(u32(s, 0))), in)))
	return 0
}

func opReturn(h *Process, m api.Memory, s []uint64) uint32 {
	id := int(u32(s, 0))
	if !h.p.OpPending(id) {
		return errnoInval
	}
	h.p.Advance()
	h.p.OpReturn(id, append([]byte(nil), readBytes(m, u32(s, 1), u32(s, 2))...))
	return 0
}
