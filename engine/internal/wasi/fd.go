package wasi

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/internal/disk"
)

// The fd_* functions: files, directories, stdio and sockets by descriptor.

func fdAdvise(h *Process, m api.Memory, s []uint64) uint32 {
	if h.fd(u32(s, 0)) == nil {
		return errnoBadf
	}
	return 0
}

func fdClose(h *Process, m api.Memory, s []uint64) uint32 {
	fd := u32(s, 0)
	e := h.fd(fd)
	if e == nil {
		return errnoBadf
	}
	if e.sock != nil {
		e.sock.Close()
	}
	h.fds[fd] = nil
	if h.locks != nil {
		h.releaseLocks(e)
	}
	if e.kind == fdFile && !h.inoOpen(e.ino) {
		// Only the last fd on an inode releases it: another may still read an
		// unlinked file.
		h.p.Disk().Release(e.ino)
	}
	return 0
}

// inoOpen reports whether some fd of h still refers to inode ino.
func (h *Process) inoOpen(ino disk.Ino) bool {
	for _, o := range h.fds {
		if o != nil && o.kind == fdFile && o.ino == ino {
			return true
		}
	}
	return false
}

func fdFdstatGet(h *Process, m api.Memory, s []uint64) uint32 {
	fd, ptr := u32(s, 0), u32(s, 1)
	e := h.fd(fd)
	if e == nil {
		return errnoBadf
	}
	var buf [24]byte
	switch e.kind {
	case fdStdio:
		buf[0] = ftCharDevice
	case fdDir:
		buf[0] = ftDirectory
	case fdFile:
		buf[0] = ftRegularFile
	case fdSock:
		buf[0] = ftSocketStream
		e.flags |= fdflagNonblock
	}
	binary.LittleEndian.PutUint16(buf[2:], e.flags)
	binary.LittleEndian.PutUint64(buf[8:], ^uint64(0))
	binary.LittleEndian.PutUint64(buf[16:], ^uint64(0))
	if !m.Write(ptr, buf[:]) {
		return errnoInval
	}
	return 0
}

func fdFdstatSetFlags(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	e.flags = uint16(u32(s, 1))
	return 0
}

func fdFdstatSetRights(h *Process, m api.Memory, s []uint64) uint32 {
	if h.fd(u32(s, 0)) == nil {
		return errnoBadf
	}
	return 0
}

func writeFilestat(m api.Memory, ptr uint32, st disk.Stat) uint32 {
	var buf [64]byte
	binary.LittleEndian.PutUint64(buf[0:], 1)
	binary.LittleEndian.PutUint64(buf[8:], uint64(st.Ino))
	if st.Dir {
		buf[16] = ftDirectory
	} else {
		buf[16] = ftRegularFile
	}
	binary.LittleEndian.PutUint64(buf[24:], uint64(st.Nlink))
	binary.LittleEndian.PutUint64(buf[32:], uint64(st.Size))
	binary.LittleEndian.PutUint64(buf[40:], uint64(st.Atime))
	binary.LittleEndian.PutUint64(buf[48:], uint64(st.Mtime))
	binary.LittleEndian.PutUint64(buf[56:], uint64(st.Ctime))
	if !m.Write(ptr, buf[:]) {
		return errnoInval
	}
	return 0
}

func fdFilestatGet(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	switch e.kind {
	case fdFile, fdDir:
		st, err := h.p.Disk().Stat(e.ino)
		if err != nil {
			return errnoOf(err)
		}
		return writeFilestat(m, u32(s, 1), st)
	default:
		var buf [64]byte
		buf[16] = ftCharDevice
		if e.kind == fdSock {
			buf[16] = ftSocketStream
		}
		m.Write(u32(s, 1), buf[:])
		return 0
	}
}

func fdFilestatSetTimes(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdFile && e.kind != fdDir {
		return 0
	}
	return h.setTimes(e.ino, int64(s[1]), int64(s[2]), u32(s, 3))
}

// WASI fstflags of the set_times calls.
const (
	fstAtim    = 1
	fstAtimNow = 2
	fstMtim    = 4
	fstMtimNow = 8
)

// setTimes is utimensat: each of atime and mtime is set to the given time, to now, or
// left alone, by flags; ctime moves to now.
func (h *Process) setTimes(ino disk.Ino, atim, mtim int64, flags uint32) uint32 {
	if flags&(fstAtim|fstAtimNow) == fstAtim|fstAtimNow || flags&(fstMtim|fstMtimNow) == fstMtim|fstMtimNow {
		return errnoInval
	}
	now := h.p.Clock(true)
	pick := func(set, setNow uint32, v int64) *int64 {
		switch {
		case flags&set != 0:
			return &v
		case flags&setNow != 0:
			return &now
		}
		return nil
	}
	return errnoOf(h.p.Disk().SetTimes(ino, pick(fstAtim, fstAtimNow, atim), pick(fstMtim, fstMtimNow, mtim)))
}

func fdPrestatGet(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil || !e.preopen {
		return errnoBadf
	}
	putU32(m, u32(s, 1), 0)
	putU32(m, u32(s, 1)+4, uint32(len(e.path)))
	return 0
}

func fdPrestatDirName(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil || !e.preopen {
		return errnoBadf
	}
	if u32(s, 2) < uint32(len(e.path)) {
		return errnoInval
	}
	m.Write(u32(s, 1), []byte(e.path))
	return 0
}

func fdRead(h *Process, m api.Memory, s []uint64) uint32 {
	return h.readv(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 3), -1)
}

func fdPread(h *Process, m api.Memory, s []uint64) uint32 {
	return h.readv(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 4), int64(s[3]))
}

func (h *Process) readv(m api.Memory, fd, iovs, n, nreadPtr uint32, at int64) uint32 {
	e := h.fd(fd)
	if e == nil {
		return errnoBadf
	}
	bufs := iovecs(m, iovs, n)
	total := 0
	switch e.kind {
	case fdStdio:
		// stdin is empty.
	case fdDir:
		return errnoIsDir
	case fdFile:
		if e.noRead {
			return errnoBadf
		}
		off := e.off
		if at >= 0 {
			off = at
		}
		if len(h.maps) > 0 {
			h.writebackMaps(m, e.ino)
		}
		start := off
		for _, b := range bufs {
			k, err := h.p.Disk().ReadAt(e.ino, b, off)
			total += k
			off += int64(k)
			if err != nil {
				if total > 0 {
					break // what was read before the failing sector, as Linux returns it
				}
				return errnoOf(err)
			}
			if k < len(b) {
				break
			}
		}
		k, err := h.p.ReadFaults(e.ino, e.path, start, bufs, total)
		if err != nil {
			return errnoOf(err)
		}
		total, off = k, start+int64(k)
		if at < 0 {
			e.off = off
		}
	case fdSock:
		if at >= 0 {
			return errnoSpipe
		}
		h.p.Advance()
		for _, b := range bufs {
			k, errno := e.sock.Read(b)
			total += k
			if errno != 0 {
				if total > 0 {
					break
				}
				return uint32(errno)
			}
			if k < len(b) || !e.sock.HasData() {
				break // not into the next iovec: a pending error is reported by the next call
			}
		}
	}
	putU32(m, nreadPtr, uint32(total))
	return 0
}

func fdWrite(h *Process, m api.Memory, s []uint64) uint32 {
	return h.writev(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 3), -1)
}

func fdPwrite(h *Process, m api.Memory, s []uint64) uint32 {
	return h.writev(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 4), int64(s[3]))
}

func (h *Process) writev(m api.Memory, fd, iovs, n, nwrittenPtr uint32, at int64) uint32 {
	e := h.fd(fd)
	if e == nil {
		return errnoBadf
	}
	data := gather(iovecs(m, iovs, n))
	switch e.kind {
	case fdStdio:
		if fd == 0 {
			return errnoBadf
		}
		h.p.Output(int(fd), data)
	case fdDir:
		return errnoIsDir
	case fdFile:
		if e.noWrite {
			return errnoBadf
		}
		d := h.p.Disk()
		off := e.off
		if at >= 0 {
			off = at
		} else if e.flags&fdflagAppend != 0 {
			st, err := d.Stat(e.ino)
			if err != nil {
				return errnoOf(err)
			}
			off = st.Size
		}
		if len(h.maps) > 0 {
			h.writebackMaps(m, e.ino)
		}
		if errno := h.writeFile(m, e.ino, e.path, e.flags, data, off, "write"); errno != 0 {
			return errno
		}
		if at < 0 {
			e.off = off + int64(len(data))
		}

	case fdSock:
		if at >= 0 {
			return errnoSpipe
		}
		h.p.Advance()
		k, errno := e.sock.Write(data)
		if errno != 0 {
			return uint32(errno)
		}
		h.p.MaybePreempt()
		putU32(m, nwrittenPtr, uint32(k))
		return 0
	}
	putU32(m, nwrittenPtr, uint32(len(data)))
	return 0
}

func fdReaddir(h *Process, m api.Memory, s []uint64) uint32 {
	fd, buf, bufLen, cookie, usedPtr := u32(s, 0), u32(s, 1), u32(s, 2), s[3], u32(s, 4)
	e := h.fd(fd)
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdDir {
		return errnoNotDir
	}
	if cookie == 0 || e.dirEnts == nil {
		ents, err := h.p.Disk().ReadDir(e.ino)
		if err != nil {
			return errnoOf(err)
		}
		e.dirEnts = ents
	}
	var out []byte
	for i := int(cookie); i < len(e.dirEnts) && uint32(len(out)) < bufLen; i++ {
		ent := e.dirEnts[i]
		var hdr [24]byte
		binary.LittleEndian.PutUint64(hdr[0:], uint64(i+1))
		binary.LittleEndian.PutUint64(hdr[8:], uint64(ent.Ino))
		binary.LittleEndian.PutUint32(hdr[16:], uint32(len(ent.Name)))
		if ent.Dir {
			hdr[20] = ftDirectory
		} else {
			hdr[20] = ftRegularFile
		}
		out = append(out, hdr[:]...)
		out = append(out, ent.Name...)
	}
	if uint32(len(out)) > bufLen {
		out = out[:bufLen]
	}
	m.Write(buf, out)
	putU32(m, usedPtr, uint32(len(out)))
	return 0
}

func fdRenumber(h *Process, m api.Memory, s []uint64) uint32 {
	from, to := u32(s, 0), u32(s, 1)
	e := h.fd(from)
	if e == nil || h.fd(to) == nil {
		return errnoBadf
	}
	if from == to {
		return 0
	}
	// Like dup2: the fd being replaced is closed first.
	if old := h.fds[to]; old != e {
		if old.sock != nil {
			old.sock.Close()
		}
		h.fds[to] = nil
		if old.kind == fdFile && !h.inoOpen(old.ino) {
			h.p.Disk().Release(old.ino)
		}
	}
	h.fds[to] = e
	h.fds[from] = nil
	return 0
}

func fdSeek(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdFile {
		if e.kind == fdDir {
			return errnoIsDir
		}
		return errnoSpipe
	}
	off, whence := int64(s[1]), u32(s, 2)
	var base int64
	switch whence {
	case 0:
	case 1:
		base = e.off
	case 2:
		st, err := h.p.Disk().Stat(e.ino)
		if err != nil {
			return errnoOf(err)
		}
		base = st.Size
	default:
		return errnoInval
	}
	if base+off < 0 {
		return errnoInval
	}
	e.off = base + off
	putU64(m, u32(s, 3), uint64(e.off))
	return 0
}

func fdTell(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil || e.kind != fdFile {
		return errnoBadf
	}
	putU64(m, u32(s, 1), uint64(e.off))
	return 0
}

// writeFile writes data at off of file ino (at path) as one disk op of kind ("write",
// or "writeback" for a mapping's dirty pages), with its crash, tear and device faults,
// then copies what landed into the file's mappings. flags are the fd's (O_SYNC).
func (h *Process) writeFile(m api.Memory, ino disk.Ino, path string, flags uint16, data []byte, off int64, kind string) uint32 {
	d := h.p.Disk()
	h.p.InflightWrite(ino, off, data)
	op := h.p.BeginDiskOp(kind, "write", []string{path}, fmt.Sprintf("@%d+%d", off, len(data)))
	if op.Crash {
		// The write lands up to a sector boundary (faults.tear_unit), or not at all.
		k := d.CutPoint(h.p.CrashStream(), off, len(data))
		if !h.p.TornWrites() {
			k = 0
		}
		d.WriteAtPartial(ino, data, off, k)
		h.p.CrashNow(op, fmt.Sprintf("%d of %d bytes written", k, len(data)))
	}
	h.p.SlowIO(op, "write", path)
	wf := h.p.WriteFaults(op, ino, path, off, len(data))
	if wf.EIO {
		h.p.EndDiskOp()
		return errnoOf(disk.EIO)
	}
	to := off
	if wf.To >= 0 {
		to = wf.To // the device writes elsewhere; the call reports the asked range written
	}
	write := d.WriteAt
	if wf.Lost {
		write = d.WriteAtLost
	}
	if _, err := write(ino, data, to); err != nil {
		return h.diskErr(op, err)
	}
	if flags&(fdflagSync|fdflagDsync) != 0 && h.p.OSyncWrite() {
		if err := d.Sync(ino, flags&fdflagSync == 0, false); err != nil {
			return errnoOf(err)
		}
	}
	if len(h.maps) > 0 {
		h.refreshMaps(m, ino, off, int64(len(data)))
		if to != off {
			h.refreshMaps(m, ino, to, int64(len(data)))
		}
	}
	h.p.EndDiskOp()
	return 0
}

func fdSync(h *Process, m api.Memory, s []uint64) uint32 {
	return h.sync(m, u32(s, 0), false)
}

func fdDatasync(h *Process, m api.Memory, s []uint64) uint32 {
	return h.sync(m, u32(s, 0), true)
}

func (h *Process) sync(m api.Memory, fd uint32, dataOnly bool) uint32 {
	e := h.fd(fd)
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdFile && e.kind != fdDir {
		return errnoInval
	}
	name := "fsync"
	if dataOnly {
		name = "fdatasync"
	}
	match := name
	if e.kind == fdDir {
		match = "dir_fsync"
	}
	return h.syncIno(m, e.ino, e.path, e.kind == fdDir, dataOnly, name, match)
}

// syncIno is one sync op of kind name on ino (at path; dir: a directory), which fault
// filters see as match. A file's mappings are written back first: fsync, fdatasync and
// msync make their dirty pages durable too, as on Linux.
func (h *Process) syncIno(m api.Memory, ino disk.Ino, path string, dir, dataOnly bool, name, match string) uint32 {
	if len(h.maps) > 0 && !dir {
		h.writebackMaps(m, ino)
	}
	op := h.p.BeginDiskOp(name, match, []string{path}, "")
	fail, skip := h.p.SyncFaults(op, match, path, dir, dataOnly)
	if !op.Crash {
		h.p.SlowIO(op, match, path)
	}
	if op.Crash {
		if disk.Pick(h.p.CrashStream(), disk.Decision{Kind: disk.InflightApply, N: 2}) == 0 {
			h.p.Disk().Sync(ino, dataOnly, fail)
		}
		h.p.CrashNow(op, "")
	}
	var err error
	if !skip {
		err = h.p.Disk().Sync(ino, dataOnly, fail)
	}
	h.p.EndDiskOp()
	if fail {
		h.p.Tracef("disk #%d %s %s: EIO (injected)", op.N, name, path)
	}
	return errnoOf(err)
}

func fdFilestatSetSize(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdFile || e.noWrite {
		return errnoInval // ftruncate of a read-only fd is EINVAL on Linux
	}
	size := int64(s[1])
	var old int64
	if len(h.maps) > 0 {
		h.writebackMaps(m, e.ino)
		if st, err := h.p.Disk().Stat(e.ino); err == nil {
			old = st.Size
		}
	}
	op := h.beginDiskOp("truncate", e.path, fmt.Sprint(size))
	if err := h.namespaceOp(op, func() error { return h.p.Disk().Truncate(e.ino, size) }); err != nil {
		return h.diskErr(op, err)
	}
	if len(h.maps) > 0 {
		h.refreshMaps(m, e.ino, min(old, size), max(old, size)-min(old, size))
	}
	return 0
}

func fdAllocate(h *Process, m api.Memory, s []uint64) uint32 {
	e := h.fd(u32(s, 0))
	if e == nil || e.kind != fdFile || e.noWrite {
		return errnoBadf
	}
	end := int64(s[1]) + int64(s[2])
	st, err := h.p.Disk().Stat(e.ino)
	if err != nil {
		return errnoOf(err)
	}
	if end <= st.Size {
		return 0
	}
	if len(h.maps) > 0 {
		h.writebackMaps(m, e.ino)
	}
	op := h.beginDiskOp("allocate", e.path, fmt.Sprint(end))
	if op.Crash {
		h.p.CrashNow(op, "")
	}
	err = h.p.Disk().Truncate(e.ino, end)
	h.p.EndDiskOp()
	if err != nil {
		return h.diskErr(op, err)
	}
	if len(h.maps) > 0 {
		h.refreshMaps(m, e.ino, st.Size, end-st.Size)
	}
	return 0
}

// diskErr traces a disk op that failed, naming the limit behind ENOSPC and EFBIG so that
// a guest's "no space left on device" can be traced to its config knob, and returns the
// errno.
func (h *Process) diskErr(op DiskOp, err error) uint32 {
	d := h.p.Disk()
	why := ""
	switch err {
	case disk.ENOSPC:
		why = fmt.Sprintf(" (disk full: disk_limit_mib is %d, %d bytes in use)", d.MaxBytes()>>20, d.Used())
	case disk.EFBIG:
		why = fmt.Sprintf(" (file too large: file_limit_mib is %d)", d.MaxFileBytes()>>20)
	}
	h.p.Tracef("disk #%d %s: %s%s", op.N, op.What, errName(err), why)
	return errnoOf(err)
}

// errName is the symbolic name of a disk error ("ENOSPC").
func errName(err error) string {
	name, _, _ := strings.Cut(err.Error(), ":")
	return name
}
