package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/internal/cover"
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
		{name: cover.ImportMeta, params: params(i32, i32, i32, i32, i32, i32, i32, i32), fn: coverMeta, noRet: true},
		{name: cover.ImportCounters, params: params(i32, i32), fn: coverCounters, noRet: true},
	}
}

// testHostClock is a deliberate hole in determinism, for testing -check: with
// PrepareOptions.UnsafeHostClock it returns the host's wall clock; otherwise the virtual
// clock. No real guest should import it.
func testHostClock(inc *incarnation, m api.Memory, s []uint64) uint32 {
	v := inc.w.now
	if inc.w.sim.unsafeHostClock {
		v = time.Now().UnixNano()
	}
	putU64(m, u32(s, 0), uint64(v))
	return 0
}

func sockListen(inc *incarnation, m api.Memory, s []uint64) uint32 {
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
	inc.advance(tick)
	sk, errno := inc.w.net.listen(inc, port)
	if errno != 0 {
		return uint32(errno)
	}
	putU32(m, u32(s, 2), inc.newFD(&fdEntry{kind: fdSock, sock: sk, flags: fdflagNonblock}))
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

func sockDial(inc *incarnation, m api.Memory, s []uint64) uint32 {
	addr := readString(m, u32(s, 0), u32(s, 1))
	inc.advance(tick)
	sk, errno := inc.w.net.dial(inc, addr)
	if errno != 0 {
		return uint32(errno)
	}
	putU32(m, u32(s, 2), inc.newFD(&fdEntry{kind: fdSock, sock: sk, flags: fdflagNonblock}))
	return 0
}

func sockStatus(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock {
		return errnoNotSock
	}
	sk := e.sock
	switch {
	case sk.err != 0:
		return uint32(sk.err)
	case sk.listener:
		return errnoNotSock
	case sk.established:
		return 0
	default:
		return errnoAgain
	}
}

func sockAddr(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock {
		return errnoNotSock
	}
	var a string
	if u32(s, 1) == 0 {
		a = e.sock.localAddr()
	} else {
		a = e.sock.remoteAddr()
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

var propKinds = [...]PropertyKind{PropAlways, PropSometimes, PropReachable, PropUnreachable}

func hostAssert(inc *incarnation, m api.Memory, s []uint64) uint32 {
	kind, cond := u32(s, 0), u32(s, 1) != 0
	if kind >= uint32(len(propKinds)) {
		return errnoInval
	}
	msg := readString(m, u32(s, 2), u32(s, 3))
	details := readString(m, u32(s, 4), u32(s, 5))
	inc.w.assertHit(inc, propKinds[kind], cond, msg, details)
	return 0
}

// assertHit records one evaluation of a property; a violated always or a reached
// unreachable fails the run.
func (w *world) assertHit(inc *incarnation, kind PropertyKind, cond bool, msg, details string) {
	p := w.props[msg]
	if p == nil {
		p = &PropertyHit{Name: msg, Kind: kind, Held: kind == PropAlways || kind == PropUnreachable}
		w.props[msg] = p
	}
	p.Reached = true
	p.Count++
	switch kind {
	case PropAlways:
		if !cond {
			p.Held = false
		}
	case PropSometimes:
		if cond {
			p.Held = true
		}
	case PropReachable:
		p.Held = true
	case PropUnreachable:
		p.Held = false
	}
	violated := (kind == PropAlways && !cond) || kind == PropUnreachable
	if violated {
		d := ""
		if details != "" && details != "null" && details != "{}" {
			d = " " + details
		}
		w.tracef(inc.label, "%s violated: %s%s", kind, msg, d)
		w.fail(string(kind), inc.label, fmt.Sprintf("%s violated: %s%s", kind, msg, d))
		if w.running == inc {
			inc.yieldNow()
		}
	}
}

// histOp is one operation of the workload's linearizability history.
type histOp struct {
	client   int
	input    json.RawMessage
	output   json.RawMessage
	call     int64
	ret      int64
	returned bool
}

func opCall(inc *incarnation, m api.Memory, s []uint64) uint32 {
	in := append(json.RawMessage(nil), readBytes(m, u32(s, 1), u32(s, 2))...)
	inc.advance(tick)
	w := inc.w
	w.history = append(w.history, histOp{client: int(int32(u32(s, 0))), input: in, call: w.now})
	putU32(m, u32(s, 3), uint32(len(w.history)-1))
	return 0
}

func opReturn(inc *incarnation, m api.Memory, s []uint64) uint32 {
	id := int(u32(s, 0))
	w := inc.w
	if id >= len(w.history) || w.history[id].returned {
		return errnoInval
	}
	inc.advance(tick)
	op := &w.history[id]
	op.output = append(json.RawMessage(nil), readBytes(m, u32(s, 1), u32(s, 2))...)
	op.ret = w.now
	op.returned = true
	return 0
}
