//go:build linux || darwin || freebsd

package engine

import (
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapAllocator backs each guest's linear memory with one anonymous mapping of the
// memory's maximum size, reserved but not committed. Growing the memory then only
// extends the slice: no copy of the whole memory on every memory.grow (Go's runtime
// grows often), and the kernel hands out zeroed pages lazily.
//
// Freed mappings are kept in a small pool and handed to the next instance after the
// bytes the last one used are zeroed: touching fresh pages (page faults) costs far more
// than clearing warm ones, and a sweep instantiates thousands of guests.
type mmapAllocator struct{}

type mmapMemory struct {
	buf  []byte
	used uint64
}

var memPool = struct {
	sync.Mutex
	free []*mmapMemory
}{}

const memPoolMax = 16

func (mmapAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	if max == 0 || max > 4<<30 {
		return nil
	}
	memPool.Lock()
	for i, m := range memPool.free {
		if uint64(len(m.buf)) == max {
			memPool.free = append(memPool.free[:i], memPool.free[i+1:]...)
			memPool.Unlock()
			return m
		}
	}
	memPool.Unlock()
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
	if err != nil {
		return nil
	}
	return &mmapMemory{buf: buf}
}

func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	m.used = max(m.used, size)
	return m.buf[:size:size]
}

// clearLimit is how much of a freed memory is cleared by hand; the pages past it (a
// guest that mapped files, whose maps live in its memory) are dropped (zeroPages).
const clearLimit = 16 << 20

func (m *mmapMemory) Free() {
	if m.buf == nil {
		return
	}
	clear(m.buf[:min(m.used, clearLimit)])
	if m.used > clearLimit {
		end := (m.used + 4095) &^ 4095
		zeroPages(m.buf[clearLimit:min(end, uint64(len(m.buf)))])
	}
	m.used = 0
	memPool.Lock()
	defer memPool.Unlock()
	if len(memPool.free) < memPoolMax {
		memPool.free = append(memPool.free, m)
		return
	}
	syscall.Munmap(m.buf)
	m.buf = nil
}

func memoryAllocator() experimental.MemoryAllocator { return mmapAllocator{} }
