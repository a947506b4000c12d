package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/internal/disk"
)

// WASI errnos (wasi_snapshot_preview1 numbering).
const (
	errnoSuccess     = 0
	errnoAddrInUse   = 3
	errnoAgain       = 6
	errnoBadf        = 8
	errnoConnRefused = 14
	errnoConnReset   = 15
	errnoExist       = 20
	errnoHostUnreach = 23
	errnoIntr        = 27
	errnoInval       = 28
	errnoIO          = 29
	errnoIsDir       = 31
	errnoNoent       = 44
	errnoNosys       = 52
	errnoNotConn     = 53
	errnoNotDir      = 54
	errnoNotSock     = 57
	errnoNotSup      = 58
	errnoPerm        = 63
	errnoPipe        = 64
	errnoSpipe       = 70
)

// WASI file types.
const (
	ftUnknown      = 0
	ftCharDevice   = 2
	ftDirectory    = 3
	ftRegularFile  = 4
	ftSocketStream = 6
)

// WASI fd flags and open flags.
const (
	fdflagAppend   = 1
	fdflagDsync    = 2
	fdflagNonblock = 4
	fdflagRsync    = 8
	fdflagSync     = 16

	oflagCreat     = 1
	oflagDirectory = 2
	oflagExcl      = 4
	oflagTrunc     = 8
)

// WASI rights that path_open is asked for and the host enforces.
const (
	rightFdRead  = 1 << 1
	rightFdWrite = 1 << 6
)

type fdKind uint8

const (
	fdStdio fdKind = iota
	fdDir
	fdFile
	fdSock
)

// fdEntry is one open file descriptor of an incarnation.
type fdEntry struct {
	kind    fdKind
	ino     disk.Ino
	path    string
	off     int64
	flags   uint16
	sock    *sock
	preopen bool
	dirEnts []disk.Entry // fd_readdir snapshot
	// noRead and noWrite record a file opened without the fd_read or fd_write right
	// (O_WRONLY, O_RDONLY): such reads and writes fail with EBADF, as on Linux.
	noRead, noWrite bool
}

type incKey struct{}

func incOf(ctx context.Context) *incarnation { return ctx.Value(incKey{}).(*incarnation) }

func (inc *incarnation) initFDs() {
	inc.fds = []*fdEntry{
		{kind: fdStdio}, {kind: fdStdio}, {kind: fdStdio},
		{kind: fdDir, ino: 1, path: "/", preopen: true},
	}
}

func (inc *incarnation) fd(fd uint32) *fdEntry {
	if int(fd) >= len(inc.fds) {
		return nil
	}
	return inc.fds[fd]
}

func (inc *incarnation) newFD(e *fdEntry) uint32 {
	for i := 4; i < len(inc.fds); i++ {
		if inc.fds[i] == nil {
			inc.fds[i] = e
			return uint32(i)
		}
	}
	inc.fds = append(inc.fds, e)
	return uint32(len(inc.fds) - 1)
}

// hostFn adapts a host function body; every i32 parameter must be masked by the body
// (wazero passes i32s in uint64 slots whose upper bits are garbage).
type hostFn func(inc *incarnation, m api.Memory, s []uint64) uint32

var i32 = api.ValueTypeI32
var i64 = api.ValueTypeI64

func params(ts ...api.ValueType) []api.ValueType { return ts }

// wasiFunc describes one import of wasi_snapshot_preview1.
type wasiFunc struct {
	name   string
	params []api.ValueType
	fn     hostFn
	noRet  bool
}

// instantiateHostModules registers wasi_snapshot_preview1 and seedfall on rt.
func instantiateHostModules(ctx context.Context, rt wazero.Runtime) error {
	if err := buildHost(ctx, rt, "wasi_snapshot_preview1", wasiFuncs()); err != nil {
		return err
	}
	return buildHost(ctx, rt, "seedfall", seedfallFuncs())
}

func buildHost(ctx context.Context, rt wazero.Runtime, module string, fns []wasiFunc) error {
	b := rt.NewHostModuleBuilder(module)
	for _, f := range fns {
		f := f
		var results []api.ValueType
		if !f.noRet {
			results = []api.ValueType{i32}
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			inc := incOf(ctx)
			inc.w.stats.HostCalls++
			inc.w.steps.Add(1) // progress, for the watchdog
			if inc.killed {
				panic(sys.NewExitError(exitCrashed))
			}
			if p := inc.w.opt.prof; p != nil {
				p.enter(inc, mod, f.name)
				defer p.leave(inc)
			}
			r := f.fn(inc, mod.Memory(), stack)
			if !f.noRet {
				stack[0] = uint64(r)
			}
		}), f.params, results).Export(f.name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func wasiFuncs() []wasiFunc {
	return []wasiFunc{
		{name: "args_get", params: params(i32, i32), fn: argsGet},
		{name: "args_sizes_get", params: params(i32, i32), fn: argsSizesGet},
		{name: "environ_get", params: params(i32, i32), fn: environGet},
		{name: "environ_sizes_get", params: params(i32, i32), fn: environSizesGet},
		{name: "clock_res_get", params: params(i32, i32), fn: clockResGet},
		{name: "clock_time_get", params: params(i32, i64, i32), fn: clockTimeGet},
		{name: "fd_advise", params: params(i32, i64, i64, i32), fn: fdAdvise},
		{name: "fd_allocate", params: params(i32, i64, i64), fn: fdAllocate},
		{name: "fd_close", params: params(i32), fn: fdClose},
		{name: "fd_datasync", params: params(i32), fn: fdDatasync},
		{name: "fd_fdstat_get", params: params(i32, i32), fn: fdFdstatGet},
		{name: "fd_fdstat_set_flags", params: params(i32, i32), fn: fdFdstatSetFlags},
		{name: "fd_fdstat_set_rights", params: params(i32, i64, i64), fn: fdFdstatSetRights},
		{name: "fd_filestat_get", params: params(i32, i32), fn: fdFilestatGet},
		{name: "fd_filestat_set_size", params: params(i32, i64), fn: fdFilestatSetSize},
		{name: "fd_filestat_set_times", params: params(i32, i64, i64, i32), fn: fdFilestatSetTimes},
		{name: "fd_pread", params: params(i32, i32, i32, i64, i32), fn: fdPread},
		{name: "fd_prestat_get", params: params(i32, i32), fn: fdPrestatGet},
		{name: "fd_prestat_dir_name", params: params(i32, i32, i32), fn: fdPrestatDirName},
		{name: "fd_pwrite", params: params(i32, i32, i32, i64, i32), fn: fdPwrite},
		{name: "fd_read", params: params(i32, i32, i32, i32), fn: fdRead},
		{name: "fd_readdir", params: params(i32, i32, i32, i64, i32), fn: fdReaddir},
		{name: "fd_renumber", params: params(i32, i32), fn: fdRenumber},
		{name: "fd_seek", params: params(i32, i64, i32, i32), fn: fdSeek},
		{name: "fd_sync", params: params(i32), fn: fdSync},
		{name: "fd_tell", params: params(i32, i32), fn: fdTell},
		{name: "fd_write", params: params(i32, i32, i32, i32), fn: fdWrite},
		{name: "path_create_directory", params: params(i32, i32, i32), fn: pathCreateDirectory},
		{name: "path_filestat_get", params: params(i32, i32, i32, i32, i32), fn: pathFilestatGet},
		{name: "path_filestat_set_times", params: params(i32, i32, i32, i32, i64, i64, i32), fn: pathFilestatSetTimes},
		{name: "path_link", params: params(i32, i32, i32, i32, i32, i32, i32), fn: pathLink},
		{name: "path_open", params: params(i32, i32, i32, i32, i32, i64, i64, i32, i32), fn: pathOpen},
		{name: "path_readlink", params: params(i32, i32, i32, i32, i32, i32), fn: pathReadlink},
		{name: "path_remove_directory", params: params(i32, i32, i32), fn: pathRemoveDirectory},
		{name: "path_rename", params: params(i32, i32, i32, i32, i32, i32), fn: pathRename},
		{name: "path_symlink", params: params(i32, i32, i32, i32, i32), fn: pathSymlink},
		{name: "path_unlink_file", params: params(i32, i32, i32), fn: pathUnlinkFile},
		{name: "poll_oneoff", params: params(i32, i32, i32, i32), fn: pollOneoff},
		{name: "proc_exit", params: params(i32), fn: procExit, noRet: true},
		{name: "proc_raise", params: params(i32), fn: func(*incarnation, api.Memory, []uint64) uint32 { return errnoNosys }},
		{name: "random_get", params: params(i32, i32), fn: randomGet},
		{name: "sched_yield", params: params(), fn: schedYield},
		{name: "sock_accept", params: params(i32, i32, i32), fn: sockAccept},
		{name: "sock_recv", params: params(i32, i32, i32, i32, i32, i32), fn: func(*incarnation, api.Memory, []uint64) uint32 { return errnoNosys }},
		{name: "sock_send", params: params(i32, i32, i32, i32, i32), fn: func(*incarnation, api.Memory, []uint64) uint32 { return errnoNosys }},
		{name: "sock_shutdown", params: params(i32, i32), fn: sockShutdown},
	}
}

// ---- memory helpers ----

func u32(s []uint64, i int) uint32 { return uint32(s[i]) }

func readBytes(m api.Memory, ptr, n uint32) []byte {
	b, ok := m.Read(ptr, n)
	if !ok {
		panic(sys.NewExitError(2)) // the guest passed a bad pointer; stop it like a fault
	}
	return b
}

func readString(m api.Memory, ptr, n uint32) string { return string(readBytes(m, ptr, n)) }

func putU32(m api.Memory, ptr, v uint32) {
	if !m.WriteUint32Le(ptr, v) {
		panic(sys.NewExitError(2))
	}
}

func putU64(m api.Memory, ptr uint32, v uint64) {
	if !m.WriteUint64Le(ptr, v) {
		panic(sys.NewExitError(2))
	}
}

// iovecs gathers the buffers of an iovec array.
func iovecs(m api.Memory, iovs, n uint32) [][]byte {
	raw := readBytes(m, iovs, n*8)
	out := make([][]byte, 0, n)
	for i := uint32(0); i < n; i++ {
		p := binary.LittleEndian.Uint32(raw[i*8:])
		l := binary.LittleEndian.Uint32(raw[i*8+4:])
		out = append(out, readBytes(m, p, l))
	}
	return out
}

func gather(bufs [][]byte) []byte {
	if len(bufs) == 1 {
		return bufs[0]
	}
	var total int
	for _, b := range bufs {
		total += len(b)
	}
	out := make([]byte, 0, total)
	for _, b := range bufs {
		out = append(out, b...)
	}
	return out
}

func errnoOf(err error) uint32 {
	if err == nil {
		return 0
	}
	var e disk.Errno
	if errors.As(err, &e) {
		return uint32(e)
	}
	return errnoIO
}

// ---- args, environ, clocks, random ----

func (inc *incarnation) args() []string {
	return append([]string{inc.node.name}, inc.node.cfg.Args...)
}

func (inc *incarnation) environ() []string {
	env := map[string]string{
		"PWD":                  "/",
		"HOME":                 "/",
		"SEEDFALL_NODE":        inc.node.name,
		"SEEDFALL_INCARNATION": fmt.Sprint(inc.n),
		"SEEDFALL_SEED":        fmt.Sprint(inc.w.seed),
		"SEEDFALL":             "1",
	}
	if inc.w.sim.antithesis {
		env["ANTITHESIS_SDK_LOCAL_OUTPUT"] = fmt.Sprintf("/.seedfall/antithesis-%d.jsonl", inc.n)
	}
	for k, v := range inc.node.cfg.Env {
		env[k] = v
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + env[k]
	}
	return out
}

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

func argsGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return writeStrings(m, inc.args(), u32(s, 0), u32(s, 1))
}
func argsSizesGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return sizes(m, inc.args(), u32(s, 0), u32(s, 1))
}
func environGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return writeStrings(m, inc.environ(), u32(s, 0), u32(s, 1))
}
func environSizesGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return sizes(m, inc.environ(), u32(s, 0), u32(s, 1))
}

func clockResGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	putU64(m, u32(s, 1), 1000)
	return 0
}

func clockTimeGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	id := u32(s, 0)
	inc.advance(tick)
	if id > 3 {
		return errnoInval
	}
	putU64(m, u32(s, 2), uint64(inc.node.clockNS(inc.w.now, id == 0)))
	return 0
}

func randomGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	buf := readBytes(m, u32(s, 0), u32(s, 1))
	for i := 0; i < len(buf); i += 8 {
		v := inc.rand.Uint64()
		for j := 0; j < 8 && i+j < len(buf); j++ {
			buf[i+j] = byte(v >> (8 * j))
		}
	}
	return 0
}

func schedYield(inc *incarnation, m api.Memory, s []uint64) uint32 {
	inc.w.now += tick
	inc.yieldNow()
	return 0
}

func procExit(inc *incarnation, m api.Memory, s []uint64) uint32 {
	panic(sys.NewExitError(u32(s, 0)))
}

// ---- fds ----

func fdAdvise(inc *incarnation, m api.Memory, s []uint64) uint32 {
	if inc.fd(u32(s, 0)) == nil {
		return errnoBadf
	}
	return 0
}

func fdClose(inc *incarnation, m api.Memory, s []uint64) uint32 {
	fd := u32(s, 0)
	e := inc.fd(fd)
	if e == nil {
		return errnoBadf
	}
	if e.sock != nil {
		inc.w.net.close(e.sock)
	}
	inc.fds[fd] = nil
	if e.kind == fdFile && !inc.inoOpen(e.ino) {
		// Only the last fd on an inode releases it: another may still read an
		// unlinked file.
		inc.node.disk.Release(e.ino)
	}
	return 0
}

// inoOpen reports whether some fd of inc still refers to inode ino.
func (inc *incarnation) inoOpen(ino disk.Ino) bool {
	for _, o := range inc.fds {
		if o != nil && o.kind == fdFile && o.ino == ino {
			return true
		}
	}
	return false
}

func fdFdstatGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	fd, ptr := u32(s, 0), u32(s, 1)
	e := inc.fd(fd)
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

func fdFdstatSetFlags(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	e.flags = uint16(u32(s, 1))
	return 0
}

func fdFdstatSetRights(inc *incarnation, m api.Memory, s []uint64) uint32 {
	if inc.fd(u32(s, 0)) == nil {
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

func fdFilestatGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	switch e.kind {
	case fdFile, fdDir:
		st, err := inc.node.disk.Stat(e.ino)
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

func fdFilestatSetTimes(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdFile && e.kind != fdDir {
		return 0
	}
	return inc.setTimes(e.ino, int64(s[1]), int64(s[2]), u32(s, 3))
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
func (inc *incarnation) setTimes(ino disk.Ino, atim, mtim int64, flags uint32) uint32 {
	if flags&(fstAtim|fstAtimNow) == fstAtim|fstAtimNow || flags&(fstMtim|fstMtimNow) == fstMtim|fstMtimNow {
		return errnoInval
	}
	now := inc.node.clockNS(inc.w.now, true)
	pick := func(set, setNow uint32, v int64) *int64 {
		switch {
		case flags&set != 0:
			return &v
		case flags&setNow != 0:
			return &now
		}
		return nil
	}
	return errnoOf(inc.node.disk.SetTimes(ino, pick(fstAtim, fstAtimNow, atim), pick(fstMtim, fstMtimNow, mtim)))
}

func fdPrestatGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil || !e.preopen {
		return errnoBadf
	}
	putU32(m, u32(s, 1), 0)
	putU32(m, u32(s, 1)+4, uint32(len(e.path)))
	return 0
}

func fdPrestatDirName(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil || !e.preopen {
		return errnoBadf
	}
	if u32(s, 2) < uint32(len(e.path)) {
		return errnoInval
	}
	m.Write(u32(s, 1), []byte(e.path))
	return 0
}

func fdRead(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return inc.readv(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 3), -1)
}

func fdPread(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return inc.readv(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 4), int64(s[3]))
}

func (inc *incarnation) readv(m api.Memory, fd, iovs, n, nreadPtr uint32, at int64) uint32 {
	e := inc.fd(fd)
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
		for _, b := range bufs {
			k, err := inc.node.disk.ReadAt(e.ino, b, off)
			total += k
			off += int64(k)
			if err != nil {
				return errnoOf(err)
			}
			if k < len(b) {
				break
			}
		}
		if at < 0 {
			e.off = off
		}
	case fdSock:
		if at >= 0 {
			return errnoSpipe
		}
		inc.advance(tick)
		for _, b := range bufs {
			k, errno := inc.w.net.read(e.sock, b)
			total += k
			if errno != 0 {
				if total > 0 {
					break
				}
				return uint32(errno)
			}
			if k < len(b) || !e.sock.hasData() {
				break // not into the next iovec: a pending error is reported by the next call
			}
		}
	}
	putU32(m, nreadPtr, uint32(total))
	return 0
}

func fdWrite(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return inc.writev(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 3), -1)
}

func fdPwrite(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return inc.writev(m, u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 4), int64(s[3]))
}

func (inc *incarnation) writev(m api.Memory, fd, iovs, n, nwrittenPtr uint32, at int64) uint32 {
	e := inc.fd(fd)
	if e == nil {
		return errnoBadf
	}
	data := gather(iovecs(m, iovs, n))
	switch e.kind {
	case fdStdio:
		if fd == 0 {
			return errnoBadf
		}
		inc.output(int(fd), data)
	case fdDir:
		return errnoIsDir
	case fdFile:
		if e.noWrite {
			return errnoBadf
		}
		d := inc.node.disk
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
		op := inc.beginDiskOp("write", e.path, fmt.Sprintf("@%d+%d", off, len(data)))
		if op.crash {
			// The write lands up to a sector boundary (faults.tear_unit), or not at all.
			k := d.CutPoint(inc.crashStream(), off, len(data))
			if !inc.w.cfg.Faults.TornWrites {
				k = 0
			}
			d.WriteAtPartial(e.ino, data, off, k)
			inc.crashNow(op, fmt.Sprintf("%d of %d bytes written", k, len(data)))
		}
		if _, err := d.WriteAt(e.ino, data, off); err != nil {
			return inc.diskErr(op, err)
		}
		if e.flags&(fdflagSync|fdflagDsync) != 0 {
			inc.w.stats.OSyncWrites++
		}
		if e.flags&(fdflagSync|fdflagDsync) != 0 && inc.w.opt.mutation != MutOSyncIgnored {
			if err := d.Sync(e.ino, e.flags&fdflagSync == 0, false); err != nil {
				return errnoOf(err)
			}
		}
		if at < 0 {
			e.off = off + int64(len(data))
		}
		inc.endDiskOp()
	case fdSock:
		if at >= 0 {
			return errnoSpipe
		}
		inc.advance(tick)
		k, errno := inc.w.net.write(e.sock, data)
		if errno != 0 {
			return uint32(errno)
		}
		inc.maybePreempt()
		putU32(m, nwrittenPtr, uint32(k))
		return 0
	}
	putU32(m, nwrittenPtr, uint32(len(data)))
	return 0
}

func fdReaddir(inc *incarnation, m api.Memory, s []uint64) uint32 {
	fd, buf, bufLen, cookie, usedPtr := u32(s, 0), u32(s, 1), u32(s, 2), s[3], u32(s, 4)
	e := inc.fd(fd)
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdDir {
		return errnoNotDir
	}
	if cookie == 0 || e.dirEnts == nil {
		ents, err := inc.node.disk.ReadDir(e.ino)
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

func fdRenumber(inc *incarnation, m api.Memory, s []uint64) uint32 {
	from, to := u32(s, 0), u32(s, 1)
	e := inc.fd(from)
	if e == nil || inc.fd(to) == nil {
		return errnoBadf
	}
	if from == to {
		return 0
	}
	// Like dup2: the fd being replaced is closed first.
	if old := inc.fds[to]; old != e {
		if old.sock != nil {
			inc.w.net.close(old.sock)
		}
		inc.fds[to] = nil
		if old.kind == fdFile && !inc.inoOpen(old.ino) {
			inc.node.disk.Release(old.ino)
		}
	}
	inc.fds[to] = e
	inc.fds[from] = nil
	return 0
}

func fdSeek(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
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
		st, err := inc.node.disk.Stat(e.ino)
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

func fdTell(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil || e.kind != fdFile {
		return errnoBadf
	}
	putU64(m, u32(s, 1), uint64(e.off))
	return 0
}

func fdSync(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return inc.sync(u32(s, 0), false)
}

func fdDatasync(inc *incarnation, m api.Memory, s []uint64) uint32 {
	return inc.sync(u32(s, 0), true)
}

func (inc *incarnation) sync(fd uint32, dataOnly bool) uint32 {
	e := inc.fd(fd)
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
	op := inc.beginDiskOpOn(name, match, []string{e.path}, "")
	fail := inc.syncShouldFail(op.n, match, e.path)
	site := inc.syncSite(e)
	st := &inc.w.stats
	switch {
	case e.kind == fdDir:
		st.DirSyncs++
	case dataOnly:
		st.Fdatasyncs++
	default:
		st.Fsyncs++
	}
	if op.crash {
		if inc.crashStream().IntN(2) == 0 {
			inc.node.disk.Sync(e.ino, dataOnly, fail)
		}
		inc.crashNow(op, "")
	}
	var err error
	if inc.w.opt.mutation != MutSitePrefix+site || fail {
		err = inc.node.disk.Sync(e.ino, dataOnly, fail)
	}
	inc.endDiskOp()
	if fail {
		inc.w.tracef(inc.label, "disk #%d %s %s: EIO (injected)", op.n, name, e.path)
	}
	return errnoOf(err)
}

func fdFilestatSetSize(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdFile || e.noWrite {
		return errnoInval // ftruncate of a read-only fd is EINVAL on Linux
	}
	size := int64(s[1])
	op := inc.beginDiskOp("truncate", e.path, fmt.Sprint(size))
	if op.crash {
		inc.maybeApply(func() { inc.node.disk.Truncate(e.ino, size) })
		inc.crashNow(op, "")
	}
	err := inc.node.disk.Truncate(e.ino, size)
	inc.endDiskOp()
	if err != nil {
		return inc.diskErr(op, err)
	}
	return 0
}

func fdAllocate(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil || e.kind != fdFile || e.noWrite {
		return errnoBadf
	}
	end := int64(s[1]) + int64(s[2])
	st, err := inc.node.disk.Stat(e.ino)
	if err != nil {
		return errnoOf(err)
	}
	if end <= st.Size {
		return 0
	}
	op := inc.beginDiskOp("allocate", e.path, fmt.Sprint(end))
	if op.crash {
		inc.crashNow(op, "")
	}
	err = inc.node.disk.Truncate(e.ino, end)
	inc.endDiskOp()
	if err != nil {
		return inc.diskErr(op, err)
	}
	return 0
}

// diskErr traces a disk op that failed, naming the limit behind ENOSPC and EFBIG so that
// a guest's "no space left on device" can be traced to its config knob, and returns the
// errno.
func (inc *incarnation) diskErr(op diskOp, err error) uint32 {
	d := inc.node.disk
	why := ""
	switch err {
	case disk.ENOSPC:
		why = fmt.Sprintf(" (disk full: disk_limit_mib is %d, %d bytes in use)", d.MaxBytes()>>20, d.Used())
	case disk.EFBIG:
		why = fmt.Sprintf(" (file too large: file_limit_mib is %d)", d.MaxFileBytes()>>20)
	}
	inc.w.tracef(inc.label, "disk #%d %s: %s%s", op.n, op.what, errName(err), why)
	return errnoOf(err)
}

// errName is the symbolic name of a disk error ("ENOSPC").
func errName(err error) string {
	name, _, _ := strings.Cut(err.Error(), ":")
	return name
}

// ---- paths ----

func (inc *incarnation) resolvePath(m api.Memory, dirfd, ptr, n uint32) (string, uint32) {
	p, _, errno := inc.resolvePathSlash(m, dirfd, ptr, n)
	return p, errno
}

// resolvePathSlash is resolvePath that also reports a trailing slash, which on Linux
// requires the path to name a directory ("file/" is ENOTDIR).
func (inc *incarnation) resolvePathSlash(m api.Memory, dirfd, ptr, n uint32) (string, bool, uint32) {
	e := inc.fd(dirfd)
	if e == nil {
		return "", false, errnoBadf
	}
	if e.kind != fdDir {
		return "", false, errnoNotDir
	}
	p := readString(m, ptr, n)
	if strings.IndexByte(p, 0) >= 0 {
		return "", false, errnoInval
	}
	slash := strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.")
	return path.Join("/", e.path, p), slash, 0
}

// isFile reports whether p names an existing non-directory.
func (inc *incarnation) isFile(p string) bool {
	d := inc.node.disk
	ino, err := d.Lookup(p)
	if err != nil {
		return false
	}
	st, err := d.Stat(ino)
	return err == nil && !st.Dir
}

// renamed points the fds under oldpath to newpath after a rename, as a Linux fd follows
// its dentry: the trace, fault lines and call sites then name a file by its current path,
// and paths relative to a renamed directory's fd resolve inside it.
func (inc *incarnation) renamed(oldpath, newpath string) {
	for _, e := range inc.fds {
		if e == nil || (e.kind != fdFile && e.kind != fdDir) || e.preopen {
			continue
		}
		if e.path == oldpath {
			e.path = newpath
		} else if rest, ok := strings.CutPrefix(e.path, oldpath+"/"); ok {
			e.path = newpath + "/" + rest
		}
	}
}

func pathOpen(inc *incarnation, m api.Memory, s []uint64) uint32 {
	dirfd, pptr, plen, oflags, fdflags, fdOut := u32(s, 0), u32(s, 2), u32(s, 3), u32(s, 4), u32(s, 7), u32(s, 8)
	p, slash, errno := inc.resolvePathSlash(m, dirfd, pptr, plen)
	if errno != 0 {
		return errno
	}
	d := inc.node.disk
	ino, err := d.Lookup(p)
	if err != nil {
		if errnoOf(err) != errnoNoent || oflags&oflagCreat == 0 {
			return errnoOf(err)
		}
		if slash {
			return errnoIsDir // open("new/", O_CREAT) on Linux
		}
		op := inc.beginDiskOp("create", p, "")
		if op.crash {
			inc.maybeApply(func() { d.Create(p, false) })
			inc.crashNow(op, "")
		}
		ino, err = d.Create(p, oflags&oflagDirectory != 0)
		inc.endDiskOp()
		if err != nil {
			return errnoOf(err)
		}
	} else if oflags&oflagCreat != 0 && oflags&oflagExcl != 0 {
		return errnoExist
	}
	st, err := d.Stat(ino)
	if err != nil {
		return errnoOf(err)
	}
	if (oflags&oflagDirectory != 0 || slash) && !st.Dir {
		return errnoNotDir
	}
	// Linux refuses to open a directory for writing, to truncate or to create it.
	if st.Dir && (s[5]&rightFdWrite != 0 || oflags&(oflagTrunc|oflagCreat) != 0) {
		return errnoIsDir
	}
	e := &fdEntry{kind: fdFile, ino: ino, path: p, flags: uint16(fdflags),
		noRead: s[5]&rightFdRead == 0, noWrite: s[5]&rightFdWrite == 0}
	if st.Dir {
		e.kind = fdDir
	} else if oflags&oflagTrunc != 0 && st.Size > 0 {
		op := inc.beginDiskOp("truncate", p, "0")
		if op.crash {
			inc.maybeApply(func() { d.Truncate(ino, 0) })
			inc.crashNow(op, "")
		}
		err := d.Truncate(ino, 0)
		inc.endDiskOp()
		if err != nil {
			return errnoOf(err)
		}
	}
	putU32(m, fdOut, inc.newFD(e))
	return 0
}

func pathCreateDirectory(inc *incarnation, m api.Memory, s []uint64) uint32 {
	p, errno := inc.resolvePath(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	d := inc.node.disk
	if _, err := d.Lookup(p); err == nil {
		return errnoExist
	}
	op := inc.beginDiskOp("mkdir", p, "")
	if op.crash {
		inc.maybeApply(func() { d.Create(p, true) })
		inc.crashNow(op, "")
	}
	_, err := d.Create(p, true)
	inc.endDiskOp()
	return errnoOf(err)
}

func pathFilestatGet(inc *incarnation, m api.Memory, s []uint64) uint32 {
	p, slash, errno := inc.resolvePathSlash(m, u32(s, 0), u32(s, 2), u32(s, 3))
	if errno != 0 {
		return errno
	}
	if slash && inc.isFile(p) {
		return errnoNotDir
	}
	d := inc.node.disk
	ino, err := d.Lookup(p)
	if err != nil {
		return errnoOf(err)
	}
	st, err := d.Stat(ino)
	if err != nil {
		return errnoOf(err)
	}
	return writeFilestat(m, u32(s, 4), st)
}

func pathFilestatSetTimes(inc *incarnation, m api.Memory, s []uint64) uint32 {
	p, errno := inc.resolvePath(m, u32(s, 0), u32(s, 2), u32(s, 3))
	if errno != 0 {
		return errno
	}
	ino, err := inc.node.disk.Lookup(p)
	if err != nil {
		return errnoOf(err)
	}
	return inc.setTimes(ino, int64(s[4]), int64(s[5]), u32(s, 6))
}

// pathLink is link(2): a hard link, another name for the same file.
func pathLink(inc *incarnation, m api.Memory, s []uint64) uint32 {
	from, fslash, errno := inc.resolvePathSlash(m, u32(s, 0), u32(s, 2), u32(s, 3))
	if errno != 0 {
		return errno
	}
	to, tslash, errno := inc.resolvePathSlash(m, u32(s, 4), u32(s, 5), u32(s, 6))
	if errno != 0 {
		return errno
	}
	d := inc.node.disk
	if (fslash || tslash) && inc.isFile(from) {
		return errnoNotDir
	}
	if _, err := d.Lookup(to); err == nil {
		return errnoExist
	}
	op := inc.beginDiskOpOn("link", "link", []string{from, to}, "-> "+to)
	if op.crash {
		inc.maybeApply(func() { d.Link(from, to) })
		inc.crashNow(op, "")
	}
	err := d.Link(from, to)
	inc.endDiskOp()
	return errnoOf(err)
}

func pathSymlink(inc *incarnation, m api.Memory, s []uint64) uint32  { return errnoNotSup }
func pathReadlink(inc *incarnation, m api.Memory, s []uint64) uint32 { return errnoInval }

func pathRemoveDirectory(inc *incarnation, m api.Memory, s []uint64) uint32 {
	p, errno := inc.resolvePath(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	d := inc.node.disk
	op := inc.beginDiskOp("rmdir", p, "")
	if op.crash {
		inc.maybeApply(func() { d.Rmdir(p) })
		inc.crashNow(op, "")
	}
	err := d.Rmdir(p)
	inc.endDiskOp()
	return errnoOf(err)
}

func pathUnlinkFile(inc *incarnation, m api.Memory, s []uint64) uint32 {
	p, slash, errno := inc.resolvePathSlash(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	if slash && inc.isFile(p) {
		return errnoNotDir
	}
	d := inc.node.disk
	op := inc.beginDiskOp("unlink", p, "")
	if op.crash {
		inc.maybeApply(func() { d.Unlink(p) })
		inc.crashNow(op, "")
	}
	err := d.Unlink(p)
	inc.endDiskOp()
	return errnoOf(err)
}

func pathRename(inc *incarnation, m api.Memory, s []uint64) uint32 {
	from, fslash, errno := inc.resolvePathSlash(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	to, tslash, errno := inc.resolvePathSlash(m, u32(s, 3), u32(s, 4), u32(s, 5))
	if errno != 0 {
		return errno
	}
	if (fslash || tslash) && inc.isFile(from) {
		return errnoNotDir
	}
	d := inc.node.disk
	if ino, err := d.Lookup(to); err == nil {
		if st, err := d.Stat(ino); err == nil && !st.Dir {
			inc.w.stats.Replacing++
		}
	}
	op := inc.beginDiskOpOn("rename", "rename", []string{from, to}, "-> "+to)
	if op.crash {
		inc.maybeApply(func() { d.Rename(from, to) })
		inc.crashNow(op, "")
	}
	err := d.Rename(from, to)
	if err == nil {
		inc.renamed(from, to)
	}
	inc.endDiskOp()
	return errnoOf(err)
}

// ---- poll ----

const (
	subClock   = 0
	subFdRead  = 1
	subFdWrite = 2
)

func pollOneoff(inc *incarnation, m api.Memory, s []uint64) uint32 {
	in, out, nsubs, neventsPtr := u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 3)
	if nsubs == 0 {
		return errnoInval
	}
	raw := readBytes(m, in, nsubs*48)
	subs := append([]byte(nil), raw...)
	w := inc.w
	inc.advance(tick)
	// Deadlines are computed once, at the first call, so a wake-up after a block does not
	// push a relative timeout further out.
	deadlines := make([]int64, nsubs)
	for i := uint32(0); i < nsubs; i++ {
		sub := subs[i*48:]
		deadlines[i] = -1
		if sub[8] == subClock {
			timeout := int64(binary.LittleEndian.Uint64(sub[24:]))
			flags := binary.LittleEndian.Uint16(sub[40:])
			id := binary.LittleEndian.Uint32(sub[16:])
			if flags&1 != 0 {
				// Absolute: convert from the node's clock to global virtual time.
				timeout -= inc.node.clockNS(w.now, id == 0)
				if timeout < 0 {
					timeout = 0
				}
			}
			deadlines[i] = inc.node.timerDeadline(w.now, timeout)
		}
	}
	for {
		var evs []byte
		nev := uint32(0)
		minDeadline := int64(-1)
		for i := uint32(0); i < nsubs; i++ {
			sub := subs[i*48:]
			tag := sub[8]
			ready := false
			var errno uint16
			switch tag {
			case subClock:
				if deadlines[i] <= w.now {
					ready = true
				} else if minDeadline < 0 || deadlines[i] < minDeadline {
					minDeadline = deadlines[i]
				}
			case subFdRead, subFdWrite:
				fd := binary.LittleEndian.Uint32(sub[16:])
				e := inc.fd(fd)
				switch {
				case e == nil:
					ready, errno = true, errnoBadf
				case e.kind != fdSock:
					ready = true
				case tag == subFdRead:
					ready = e.sock.readable()
				default:
					ready = e.sock.writable()
				}
			}
			if ready {
				var ev [32]byte
				copy(ev[0:8], sub[0:8])
				binary.LittleEndian.PutUint16(ev[8:], errno)
				ev[10] = tag
				if tag != subClock {
					binary.LittleEndian.PutUint64(ev[16:], 1)
				}
				evs = append(evs, ev[:]...)
				nev++
			}
		}
		if nev > 0 {
			m.Write(out, evs)
			putU32(m, neventsPtr, nev)
			return 0
		}
		// Nothing ready: block until a deadline or a socket changes.
		inc.state = incBlocked
		inc.wakeGen++
		gen := inc.wakeGen
		inc.deadline = minDeadline
		if minDeadline >= 0 {
			w.schedule(minDeadline, func() {
				if inc.state == incBlocked && inc.wakeGen == gen {
					w.makeRunnable(inc)
				}
			})
		}
		inc.park()
	}
}

// ---- sockets (WASI part) ----

func sockAccept(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock || !e.sock.listener {
		return errnoNotSock
	}
	inc.advance(tick)
	ln := e.sock
	if len(ln.backlog) == 0 {
		return errnoAgain
	}
	c := ln.backlog[0]
	ln.backlog = ln.backlog[1:]
	c.owner = inc
	fd := inc.newFD(&fdEntry{kind: fdSock, sock: c, flags: uint16(u32(s, 1))})
	inc.w.tracef(inc.label, "accept %s from %s", c.localAddr(), c.remoteAddr())
	putU32(m, u32(s, 2), fd)
	return 0
}

func sockShutdown(inc *incarnation, m api.Memory, s []uint64) uint32 {
	e := inc.fd(u32(s, 0))
	if e == nil {
		return errnoBadf
	}
	if e.kind != fdSock {
		return errnoNotSock
	}
	how := u32(s, 1)
	if how&2 != 0 {
		inc.w.net.shutdownWrite(e.sock)
	}
	return 0
}

// ---- output ----

// output captures a guest's stdout/stderr into the trace, one line at a time.
func (inc *incarnation) output(fd int, data []byte) {
	limit := inc.w.cfg.OutputLimitKiB * 1024
	if inc.outBytes >= limit {
		inc.outBytes += len(data)
		return
	}
	inc.outBytes += len(data)
	if inc.outBytes >= limit {
		data = data[:max(0, len(data)-(inc.outBytes-limit))]
	}
	b := &inc.out[fd]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n') // not string(data): that copies the rest per line
		if i < 0 {
			b.Write(data)
			break
		}
		b.Write(data[:i])
		inc.emitLine(b.String())
		b.Reset()
		data = data[i+1:]
	}
	if inc.outBytes >= limit {
		inc.w.tracef(inc.label, "output limit of %d KiB reached; further output is counted and dropped", inc.w.cfg.OutputLimitKiB)
	}
}

func (inc *incarnation) emitLine(line string) {
	if strings.TrimSpace(line) != "" {
		inc.lastLine = strings.TrimSpace(line)
	}
	inc.panics.line(line)
	inc.w.addLine(fmt.Sprintf("%12s %s | %s", FormatDuration(inc.w.now), inc.label, line))
}

func (inc *incarnation) flushOutput() {
	for i := 1; i <= 2; i++ {
		if inc.out[i].Len() > 0 {
			inc.emitLine(inc.out[i].String())
			inc.out[i].Reset()
		}
	}
}
