package wasi

import (
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// args_get, environ_get, clock_*_get, random_get, sched_yield and proc_exit.

func writeStrings(m api.Memory, list []string, ptrs, buf uint32) uint32 {
	for _, s := range list {
		putU32(m, ptrs, buf)
		ptrs += 4
		if !m.Write(buf, append([]byte(s), 0)) {
			return errnoInval
		}
		buf += uint32(len(s) + 1)
	}
	return 0
}

func sizes(m api.Memory, list []string, countPtr, sizePtr uint32) uint32 {
	n := 0
	for _, s := range list {
		n += len(s) + 1
	}
	putU32(m, countPtr, uint32(len(list)))
	putU32(m, sizePtr, uint32(n))
	return 0
}

func argsGet(h *Process, m api.Memory, s []uint64) uint32 {
	return writeStrings(m, h.p.Args(), u32(s, 0), u32(s, 1))
}
func argsSizesGet(h *Process, m api.Memory, s []uint64) uint32 {
	return sizes(m, h.p.Args(), u32(s, 0), u32(s, 1))
}
func environGet(h *Process, m api.Memory, s []uint64) uint32 {
	return writeStrings(m, h.p.Environ(), u32(s, 0), u32(s, 1))
}
func environSizesGet(h *Process, m api.Memory, s []uint64) uint32 {
	return sizes(m, h.p.Environ(), u32(s, 0), u32(s, 1))
}

func clockResGet(h *Process, m api.Memory, s []uint64) uint32 {
	putU64(m, u32(s, 1), 1000)
	return 0
}

func clockTimeGet(h *Process, m api.Memory, s []uint64) uint32 {
	id := u32(s, 0)
	h.p.Advance()
	if id > 3 {
		return errnoInval
	}
	putU64(m, u32(s, 2), uint64(h.p.Clock(id == 0)))
	return 0
}

func randomGet(h *Process, m api.Memory, s []uint64) uint32 {
	buf := readBytes(m, u32(s, 0), u32(s, 1))
	for i := 0; i < len(buf); i += 8 {
		v := h.p.RandUint64()
		for j := 0; j < 8 && i+j < len(buf); j++ {
			buf[i+j] = byte(v >> (8 * j))
		}
	}
	return 0
}

func schedYield(h *Process, m api.Memory, s []uint64) uint32 {
	h.p.Yield()
	return 0
}

func procExit(h *Process, m api.Memory, s []uint64) uint32 {
	panic(sys.NewExitError(u32(s, 0)))
}
