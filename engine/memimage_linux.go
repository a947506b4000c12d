//go:build linux && (amd64 || arm64)

package engine

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

// imageAllocator hands out guest memories that start as a module's memory image: the
// reserved region of mmapAllocator, with the image's pages mapped over its start from a
// memfd, MAP_PRIVATE, so every instance reads the template's pages from the page cache
// and copies only the pages it writes. One allocator per compiled module.
//
// Freed regions are pooled like mmapAllocator's: the bytes above the image the last
// guest used are zeroed (warm pages are cheaper than fresh ones), and the image part is
// mapped afresh from the memfd on the next Allocate, which drops the last guest's
// private copies.
type imageAllocator struct {
	f    *os.File
	fd   int
	size uint64 // image length rounded up to the page size
	mu   sync.Mutex
	free []*imageMemory
}

type imageMemory struct {
	a    *imageAllocator
	buf  []byte
	used uint64
}

// newImageAllocator puts img into a memfd. It returns nil when the kernel refuses (no
// memfd), and the module then takes the plain path.
func newImageAllocator(img *memImage) (*imageAllocator, error) {
	fd, err := unix.MemfdCreate("seedfall-memimage", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	ps := uint64(os.Getpagesize())
	size := (uint64(len(img.init)) + ps - 1) / ps * ps
	f := os.NewFile(uintptr(fd), "seedfall-memimage")
	if _, err := f.Write(img.init); err != nil {
		f.Close()
		return nil, fmt.Errorf("memfd write: %w", err)
	}
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("memfd truncate: %w", err)
	}
	return &imageAllocator{f: f, fd: int(f.Fd()), size: size}, nil
}

func (a *imageAllocator) Allocate(capacity, maxBytes uint64) experimental.LinearMemory {
	if maxBytes == 0 || maxBytes > 4<<30 || maxBytes < a.size {
		return nil
	}
	var m *imageMemory
	a.mu.Lock()
	for i, f := range a.free {
		if uint64(len(f.buf)) == maxBytes {
			m = f
			a.free = append(a.free[:i], a.free[i+1:]...)
			break
		}
	}
	a.mu.Unlock()
	if m == nil {
		buf, err := syscall.Mmap(-1, 0, int(maxBytes), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
		if err != nil {
			return nil
		}
		m = &imageMemory{a: a, buf: buf}
	}
	// The image over the region's start, replacing whatever was mapped there.
	_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, uintptr(unsafe.Pointer(&m.buf[0])), uintptr(a.size),
		syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_FIXED, uintptr(a.fd), 0)
	if errno != 0 {
		syscall.Munmap(m.buf)
		return nil
	}
	return m
}

func (m *imageMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	m.used = max(m.used, size)
	return m.buf[:size:size]
}

func (m *imageMemory) Free() {
	if m.buf == nil {
		return
	}
	a := m.a
	if m.used > a.size {
		// As mmapMemory.Free: clear the first clearLimit bytes past the image, drop the
		// pages past those (anonymous memory: they come back zero).
		cut := min(m.used, a.size+clearLimit)
		clear(m.buf[a.size:cut])
		if m.used > cut {
			end := (m.used + 4095) &^ 4095
			zeroPages(m.buf[cut:min(end, uint64(len(m.buf)))])
		}
	}
	m.used = 0
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.free) < memPoolMax {
		a.free = append(a.free, m)
		return
	}
	syscall.Munmap(m.buf)
	m.buf = nil
}

// close releases the pooled regions and the memfd.
func (a *imageAllocator) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.free {
		syscall.Munmap(m.buf)
		m.buf = nil
	}
	a.free = nil
	a.f.Close()
}

// imageMemoryAllocator returns an allocator for img, or nil where the plain path is used.
func imageMemoryAllocator(img *memImage) (experimental.MemoryAllocator, func(), error) {
	a, err := newImageAllocator(img)
	if err != nil {
		return nil, nil, err
	}
	return a, a.close, nil
}
