package wasi

import (
	"bytes"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/errno"
)

// The seedfall module's flock and mmap family (docs/ABI.md), which the wasip1 platform
// layer's syscall.Flock, Mmap, Munmap and Msync call (engine/internal/platform).
//
// A mapping is memory of the guest (the layer allocates it) that the host keeps
// coherent with the file's volatile content, the page cache of the disk model:
//
//   - mmap copies the file's bytes into it (zeros past the end of the file);
//   - every write, truncate and allocate of the file through any fd is copied into the
//     mappings of the file that it overlaps, after it lands;
//   - stores into a MAP_SHARED, PROT_WRITE mapping are dirty pages: before any call on
//     the file (read, write, sync, truncate, another mmap), at msync and munmap, and
//     when the incarnation ends (exit, kill, crash), the host compares the mapping
//     with the file page by page and writes the pages that differ, as unsynced writes.
//     The ones during the run are ordinary disk writes ("writeback" in the trace), so
//     crashes, torn and lost writes and the crash-state search see them; the ones at
//     the end of the incarnation are pending writes the crash that follows keeps or
//     loses like any other (the kernel may have written any of them back).
//   - msync with MS_SYNC of a shared mapping is fdatasync of the file ("msync").
//
// MAP_PRIVATE mappings hold the file as it was mapped: Linux leaves unspecified
// whether later writes of the file show in one.

// pageSize is Linux's page size: the unit of dirty-page writeback.
const pageSize = 4096

// mapping is one file or anonymous mapping of the incarnation.
type mapping struct {
	ino    disk.Ino
	path   string
	off    int64  // file offset of the first byte
	ptr, n uint32 // where it is in guest memory
	anon   bool
	// shared and write: MAP_SHARED with PROT_WRITE, whose stores reach the file.
	shared, write bool
}

// Linux's flags, as the platform layer passes them.
const (
	protWrite   = 0x2
	mapShared   = 0x1
	mapPrivate  = 0x2
	mapAnon     = 0x20
	msAsync     = 0x1
	msSync      = 0x4
	lockSH      = 0x1
	lockEX      = 0x2
	lockNB      = 0x4
	lockUN      = 0x8
	errnoAccess = uint32(errno.EACCES)
	errnoNodev  = uint32(errno.ENODEV)
	errnoNomem  = uint32(errno.ENOMEM)
)

// DefaultMmapLimit is how many bytes an incarnation may map when its Proc says 0.
const DefaultMmapLimit = 256 << 20

func mmapFuncs() []wasiFunc {
	return []wasiFunc{
		{name: "flock", params: params(i32, i32), fn: hostFlock},
		{name: "mmap_reserve", params: params(i32, i64, i64, i32, i32), fn: mmapReserve},
		{name: "mmap", params: params(i32, i64, i32, i32, i32, i32), fn: hostMmap},
		{name: "msync", params: params(i32, i32, i32), fn: hostMsync},
		{name: "munmap", params: params(i32, i32), fn: hostMunmap},
		{name: "unsupported", params: params(i32, i32), fn: hostUnsupported},
	}
}

// hostUnsupported traces a Linux call that the guest's Linux personality answered with
// ENOSYS because the simulator does not implement it (the text names the call and its
// caller). It costs no virtual time and changes nothing else.
func hostUnsupported(h *Process, m api.Memory, s []uint64) uint32 {
	h.p.Tracef("unsupported Linux call: %s: ENOSYS", readString(m, u32(s, 0), u32(s, 1)))
	return 0
}

// ---- flock ----

// flockState is who holds flock locks on one inode: open file descriptions, which on
// wasip1 are fd entries (there is no dup; fd_renumber moves the entry).
type flockState struct {
	ex *fdEntry
	sh map[*fdEntry]bool
}

// hostFlock is flock(2) with LOCK_NB (the platform layer loops for a blocking one):
// EWOULDBLOCK (EAGAIN) if another open file description holds a conflicting lock. As
// on Linux, converting a lock drops the old one first, so a conversion that would
// block leaves the description with no lock.
func hostFlock(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdFile && e.kind != fdDir {
		return errnoInval
	}
	how := u32(s, 1) &^ lockNB
	if how != lockSH && how != lockEX && how != lockUN {
		return errnoInval
	}
	if h.locks == nil {
		h.locks = map[disk.Ino]*flockState{}
	}
	st := h.locks[e.ino]
	if st == nil {
		st = &flockState{sh: map[*fdEntry]bool{}}
		h.locks[e.ino] = st
	}
	switch how {
	case lockUN:
		st.release(e)
	case lockSH:
		if st.sh[e] {
			return 0
		}
		st.release(e)
		if st.ex != nil {
			return errnoAgain
		}
		st.sh[e] = true
	case lockEX:
		if st.ex == e {
			return 0
		}
		st.release(e)
		if st.ex != nil || len(st.sh) > 0 {
			return errnoAgain
		}
		st.ex = e
	}
	if st.ex == nil && len(st.sh) == 0 {
		delete(h.locks, e.ino)
	}
	return 0
}

func (st *flockState) release(e *fdEntry) {
	if st.ex == e {
		st.ex = nil
	}
	delete(st.sh, e)
}

// releaseLocks drops the flock locks of a closed description.
func (h *Process) releaseLocks(e *fdEntry) {
	if st := h.locks[e.ino]; st != nil {
		st.release(e)
		if st.ex == nil && len(st.sh) == 0 {
			delete(h.locks, e.ino)
		}
	}
}

// ---- mmap ----

// mmapCheck validates a mapping request; it returns the fd entry (nil for anonymous).
func (h *Process) mmapCheck(fd uint32, off, n int64, prot, flags uint32) (*fdEntry, uint32) {
	if n <= 0 || off < 0 || off%pageSize != 0 {
		return nil, errnoInval
	}
	var e *fdEntry
	if flags&mapAnon == 0 {
		if e = h.fd(fd); e == nil {
			return nil, errnoBadf
		}
		if e.kind != fdFile {
			return nil, errnoNodev
		}
		if e.noRead || (flags&mapShared != 0 && prot&protWrite != 0 && (e.noWrite || e.flags&fdflagAppend != 0)) {
			return nil, errnoAccess
		}
	}
	limit := h.p.MmapLimit()
	if limit <= 0 {
		limit = DefaultMmapLimit
	}
	if h.mapped+n > limit || n > 1<<32-1 {
		what := "an anonymous mapping"
		if e != nil {
			what = e.path
		}
		h.p.Tracef("mmap %s of %d bytes at %d: ENOMEM (%d bytes mapped already; maps live in guest memory, at most mmap_limit_mib %d MiB in all: set the library's map size smaller or raise the limit, docs/overlay.md)",
			what, n, off, h.mapped, limit>>20)
		return nil, errnoNomem
	}
	return e, 0
}

func mmapReserve(h *Process, m api.Memory, s []uint64) uint32 {
	_, errno := h.mmapCheck(u32(s, 0), int64(s[1]), int64(s[2]), u32(s, 3), u32(s, 4))
	return errno
}

func hostMmap(h *Process, m api.Memory, s []uint64) uint32 {
	fd, off, ptr, n, prot, flags := u32(s, 0), int64(s[1]), u32(s, 2), u32(s, 3), u32(s, 4), u32(s, 5)
	e, errno := h.mmapCheck(fd, off, int64(n), prot, flags)
	if errno != 0 {
		return errno
	}
	readBytes(m, ptr, n) // the whole range must be guest memory
	mp := &mapping{off: off, ptr: ptr, n: n, anon: e == nil}
	if e != nil {
		mp.ino, mp.path = e.ino, e.path
		mp.shared = flags&mapShared != 0
		mp.write = mp.shared && prot&protWrite != 0
		h.writebackMaps(m, e.ino)
		h.fill(m, mp, off, int64(n), false)
	}
	h.maps = append(h.maps, mp)
	h.mapped += int64(n)
	return 0
}

// findMap is the mapping that holds guest range [ptr, ptr+n), or nil.
func (h *Process) findMap(ptr, n uint32) *mapping {
	for _, mp := range h.maps {
		if ptr >= mp.ptr && uint64(ptr)+uint64(n) <= uint64(mp.ptr)+uint64(mp.n) {
			return mp
		}
	}
	return nil
}

func hostMunmap(h *Process, m api.Memory, s []uint64) uint32 {
	ptr, n := u32(s, 0), u32(s, 1)
	for i, mp := range h.maps {
		if mp.ptr == ptr && mp.n == n {
			if mp.write {
				h.writeback(m, mp, 0, mp.n, true)
			}
			h.maps = append(h.maps[:i], h.maps[i+1:]...)
			h.mapped -= int64(n)
			return 0
		}
	}
	return errnoInval
}

// hostMsync is msync(2): the dirty pages of the range are written back, and with
// MS_SYNC the file's data is made durable (fdatasync: the disk model syncs files
// whole, so other unsynced writes of the file become durable too, as fdatasync would
// make them).
func hostMsync(h *Process, m api.Memory, s []uint64) uint32 {
	ptr, n, flags := u32(s, 0), u32(s, 1), u32(s, 2)
	if flags&^(msAsync|msSync|0x2) != 0 || flags&(msAsync|msSync) == msAsync|msSync || ptr%pageSize != 0 {
		return errnoInval
	}
	mp := h.findMap(ptr, n)
	if mp == nil {
		return errnoNomem // Linux: the range is not mapped
	}
	if mp.anon || !mp.shared {
		return 0
	}
	if mp.write {
		if _, errno := h.writeback(m, mp, ptr-mp.ptr, n, true); errno != 0 {
			return errno
		}
	}
	if flags&msSync == 0 {
		return 0
	}
	return h.syncIno(m, mp.ino, mp.path, false, true, "msync", "fdatasync")
}

// fill copies the file's bytes [off, off+n) into the part of mapping mp they overlap.
// Past the end of the file the mapping is left as it is (zero since it was made), or
// with zeroPast made zero (the file shrank).
func (h *Process) fill(m api.Memory, mp *mapping, off, n int64, zeroPast bool) {
	lo, hi := max(off, mp.off), min(off+n, mp.off+int64(mp.n))
	if lo >= hi {
		return
	}
	size := hi
	if st, err := h.p.Disk().Stat(mp.ino); err == nil {
		size = min(hi, st.Size)
	}
	if !zeroPast {
		hi = min(hi, max(size, lo))
	}
	buf := make([]byte, min(hi-lo, 1<<20))
	for at := lo; at < hi; {
		b := buf[:min(int64(len(buf)), hi-at)]
		k := 0
		if at < size {
			k, _ = h.p.Disk().ReadAt(mp.ino, b[:min(int64(len(b)), size-at)], at)
		}
		clear(b[k:])
		if !m.Write(mp.ptr+uint32(at-mp.off), b) {
			panic("wasi: mapping outside guest memory")
		}
		at += int64(len(b))
	}
}

// refreshMaps copies [off, off+n) of ino from the file into its shared mappings, after
// a write, truncate or allocate changed it.
func (h *Process) refreshMaps(m api.Memory, ino disk.Ino, off, n int64) {
	for _, mp := range h.maps {
		if mp.ino == ino && !mp.anon && mp.shared {
			h.fill(m, mp, off, n, true)
		}
	}
}

// writebackMaps writes back the dirty pages of every writable shared mapping of ino.
func (h *Process) writebackMaps(m api.Memory, ino disk.Ino) {
	for _, mp := range h.maps {
		if mp.ino == ino && mp.write {
			h.writeback(m, mp, 0, mp.n, true)
		}
	}
}

// writeback writes the pages of mapping mp in [rel, rel+n) (offsets into the mapping)
// that differ from the file, one write per run of such pages, clipped to the file's
// size (stores past the end of the file never reach it, as on Linux). asOps makes each
// write a disk op, which may crash, tear or fail like any write; otherwise the
// incarnation is over and the pages become pending writes directly.
func (h *Process) writeback(m api.Memory, mp *mapping, rel, n uint32, asOps bool) (pages int, errno uint32) {
	d := h.p.Disk()
	st, err := d.Stat(mp.ino)
	if err != nil {
		return 0, 0 // the inode is gone (unlinked and released)
	}
	start := mp.off + int64(rel)&^(pageSize-1)
	end := min(mp.off+int64(rel)+int64(n), mp.off+int64(mp.n), st.Size)
	file := make([]byte, pageSize)
	runStart := int64(-1)
	flush := func(at int64) uint32 {
		if runStart < 0 {
			return 0
		}
		data := append([]byte(nil), readBytes(m, mp.ptr+uint32(runStart-mp.off), uint32(at-runStart))...)
		runStart = -1
		pages += (len(data) + pageSize - 1) / pageSize
		if !asOps {
			d.WriteAt(mp.ino, data, at-int64(len(data)))
			return 0
		}
		return h.writeFile(m, mp.ino, mp.path, 0, data, at-int64(len(data)), "writeback")
	}
	for p := start; p < end; p += pageSize {
		k := min(pageSize, end-p)
		got, _ := d.ReadAt(mp.ino, file[:k], p)
		mem := readBytes(m, mp.ptr+uint32(p-mp.off), uint32(k))
		if got == int(k) && bytes.Equal(mem, file[:k]) {
			if errno := flush(p); errno != 0 {
				return pages, errno
			}
			continue
		}
		if runStart < 0 {
			runStart = p
		}
	}
	return pages, flush(end)
}

// WritebackMaps is the end of the incarnation for its mappings: the dirty pages of its
// writable shared mappings become pending writes of their files, traced. The engine
// calls it with the instance's memory before closing it.
func (h *Process) WritebackMaps(m api.Memory) {
	for _, mp := range h.maps {
		if !mp.write {
			continue
		}
		if pages, _ := h.writeback(m, mp, 0, mp.n, false); pages > 0 {
			h.p.Tracef("mmap %s: %d dirty pages left in the page cache at exit (unsynced writes)", mp, pages)
		}
	}
	h.maps = nil
}

// mapsOf reports whether ino has a mapping (for the hooks in fd.go).
func (h *Process) mapsOf(ino disk.Ino) bool {
	for _, mp := range h.maps {
		if mp.ino == ino && !mp.anon {
			return true
		}
	}
	return false
}

func (mp *mapping) String() string {
	return fmt.Sprintf("%s@%d+%d", mp.path, mp.off, mp.n)
}
