package wasi

import (
	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/internal/cover"
	"github.com/seedfall/seedfall/engine/internal/interleave"
)

// seedfallFuncs is the seedfall host module: what WASI lacks (see docs/ABI.md).
func seedfallFuncs() []wasiFunc {
	return []wasiFunc{
		{name: "sock_listen", params: params(i32, i32, i32), fn: sockListen},
		{name: "sock_dial", params: params(i32, i32, i32), fn: sockDial},
		{name: "sock_status", params: params(i32), fn: sockStatus},
		{name: "sock_addr", params: params(i32, i32, i32, i32, i32), fn: sockAddr},
		{name: "sock_linger", params: params(i32, i32, i32), fn: sockLinger},
		{name: "assert", params: params(i32, i32, i32, i32, i32, i32), fn: hostAssert},
		{name: "op_call", params: params(i32, i32, i32, i32), fn: opCall},
		{name: "setup_complete", params: params(i32, i32), fn: setupComplete},
		{name: "stop_faults", params: params(i64), fn: stopFaults},
		{name: "fault", params: params(i32, i32, i32, i32, i32), fn: directedFault},
		{name: "op_return", params: params(i32, i32, i32), fn: opReturn},
		{name: "failure_context", params: params(i32, i32), fn: failureContext},
		{name: interleave.ImportPick, params: params(i32), fn: schedPick},
		{name: "test_host_clock", params: params(i32), fn: testHostClock},
		{name: cover.ImportMeta, params: params(i32, i32, i32, i32, i32, i32, i32, i32), fn: coverMeta, noRet: true},
		{name: cover.ImportCounters, params: params(i32, i32), fn: coverCounters, noRet: true},
	}
}

// coverMeta is called by the guest's coverage InitHook once per instrumented package.
func coverMeta(h *Process, m api.Memory, s []uint64) uint32 {
	var hash [16]byte
	copy(hash[:], readBytes(m, u32(s, 2), 16))
	h.p.CoverMeta(u32(s, 0), u32(s, 1), hash, readString(m, u32(s, 3), u32(s, 4)),
		int32(u32(s, 5)), uint8(u32(s, 6)), uint8(u32(s, 7)))
	return 0
}

// coverCounters is called by the guest's coverage InitHook once per counter array.
func coverCounters(h *Process, m api.Memory, s []uint64) uint32 {
	h.p.CoverCounters(u32(s, 0), u32(s, 1))
	return 0
}

// schedPick is called by the runtime of a node built with interleave whenever n >= 2
// goroutines are ready: its result is the index of the one to run next.
func schedPick(h *Process, m api.Memory, s []uint64) uint32 {
	n := u32(s, 0)
	if n < 2 {
		return 0
	}
	return h.p.SchedPick(n)
}

// testHostClock is a deliberate hole in determinism, for testing -check: with
// PrepareOptions.UnsafeHostClock it returns the host's wall clock; otherwise the virtual
// clock. No real guest should import it.
func testHostClock(h *Process, m api.Memory, s []uint64) uint32 {
	putU64(m, u32(s, 0), uint64(h.p.TestHostClock()))
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

// failureContext marks the end of the failure line the guest is about to print as
// context (sim.FailureContext). It costs no virtual time and is not traced.
func failureContext(h *Process, m api.Memory, s []uint64) uint32 {
	h.p.FailureContext(readString(m, u32(s, 0), u32(s, 1)))
	return 0
}

// setupComplete is the workload's "setup complete" (details: JSON, may be empty).
func setupComplete(h *Process, m api.Memory, s []uint64) uint32 {
	details := readString(m, u32(s, 0), u32(s, 1))
	h.p.Advance()
	h.p.SetupComplete(details)
	return 0
}

// stopFaults asks for a quiet period of s[0] ns (0 or less: the rest of the run).
func stopFaults(h *Process, m api.Memory, s []uint64) uint32 {
	h.p.Advance()
	h.p.StopFaults(int64(s[0]))
	return 0
}

// directedFault asks for a fault now (sim.Crash, ...): the request is JSON at s[0:2]; a
// refusal's reason is written to the buffer at s[2] (capacity s[3], cut to fit), its
// length at s[4], and the call returns EINVAL.
func directedFault(h *Process, m api.Memory, s []uint64) uint32 {
	req := append([]byte(nil), readBytes(m, u32(s, 0), u32(s, 1))...)
	why := h.p.DirectedFault(req)
	if why == "" {
		putU32(m, u32(s, 4), 0)
		return 0
	}
	buf := []byte(why)
	if c := u32(s, 3); uint32(len(buf)) > c {
		buf = buf[:c]
	}
	if len(buf) > 0 && !m.Write(u32(s, 2), buf) {
		buf = nil
	}
	putU32(m, u32(s, 4), uint32(len(buf)))
	return errnoInval
}
