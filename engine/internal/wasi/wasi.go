// Package wasi is the host side of a guest's imports: wasi_snapshot_preview1 and the
// seedfall module (what WASI lacks: sockets that listen and dial, assertions, the
// linearizability history; see docs/ABI.md). One file per group of functions: fd.go
// (fd_*), path.go (path_*), poll.go (poll_oneoff), sock.go (sockets of both modules),
// clock.go (args, environ, clocks, random, sched_yield, proc_exit), seedfall.go (the
// rest of the seedfall module), mmap.go (its flock and mmap family, for the wasip1
// platform layer); wasi.go registers them and holds the memory helpers
// and the fd table.
//
// It owns the guest-facing ABI: decoding arguments from linear memory, errno
// numbering, the fd table (Process) and the Linux semantics of each call over the
// simulated disk (internal/disk) and sockets (internal/netsim). It talks to the rest
// of the world only through Proc, whose doc states the contract: no host clock, no
// randomness or scheduling of its own, every blocking call through the scheduler.
// It may not import the engine, decide a verdict or write the trace other than
// through Proc.
package wasi

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/errno"
	"github.com/seedfall/seedfall/engine/internal/netsim"
)

// WASI errnos, from the one table (internal/errno), as the host functions return them.
const (
	errnoSuccess     = uint32(errno.Success)
	errnoAddrInUse   = uint32(errno.EADDRINUSE)
	errnoAgain       = uint32(errno.EAGAIN)
	errnoBadf        = uint32(errno.EBADF)
	errnoConnRefused = uint32(errno.ECONNREFUSED)
	errnoConnReset   = uint32(errno.ECONNRESET)
	errnoExist       = uint32(errno.EEXIST)
	errnoHostUnreach = uint32(errno.EHOSTUNREACH)
	errnoIntr        = uint32(errno.EINTR)
	errnoInval       = uint32(errno.EINVAL)
	errnoIO          = uint32(errno.EIO)
	errnoIsDir       = uint32(errno.EISDIR)
	errnoNoent       = uint32(errno.ENOENT)
	errnoNosys       = uint32(errno.ENOSYS)
	errnoNotConn     = uint32(errno.ENOTCONN)
	errnoNotDir      = uint32(errno.ENOTDIR)
	errnoNotSock     = uint32(errno.ENOTSOCK)
	errnoNotSup      = uint32(errno.ENOTSUP)
	errnoPerm        = uint32(errno.EPERM)
	errnoPipe        = uint32(errno.EPIPE)
	errnoSpipe       = uint32(errno.ESPIPE)
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
	sock    *netsim.Sock
	preopen bool
	dirEnts []disk.Entry // fd_readdir snapshot
	// noRead and noWrite record a file opened without the fd_read or fd_write right
	// (O_WRONLY, O_RDONLY): such reads and writes fail with EBADF, as on Linux.
	noRead, noWrite bool
}

type procKey struct{}

// WithProcess returns ctx carrying h: the context a guest's instance is instantiated
// and started with, so that its host calls reach h.
func WithProcess(ctx context.Context, h *Process) context.Context {
	return context.WithValue(ctx, procKey{}, h)
}

func processOf(ctx context.Context) *Process { return ctx.Value(procKey{}).(*Process) }

// Process is the WASI side of one incarnation: its Proc and its fd table (stdio, the
// preopened root "/", then the files and sockets it opened).
type Process struct {
	p   Proc
	fds []*fdEntry
	// locks are the flock locks of the incarnation's open files, maps its mappings
	// (mmap.go), mapped their bytes.
	locks  map[disk.Ino]*flockState
	maps   []*mapping
	mapped int64
}

// NewProcess returns the host state of a new incarnation p.
func NewProcess(p Proc) *Process {
	h := &Process{p: p}
	h.fds = []*fdEntry{
		{kind: fdStdio}, {kind: fdStdio}, {kind: fdStdio},
		{kind: fdDir, ino: 1, path: "/", preopen: true},
	}
	return h
}

// Sockets returns the sockets of the open fds, in fd order.
func (h *Process) Sockets() []*netsim.Sock {
	var out []*netsim.Sock
	for _, e := range h.fds {
		if e != nil && e.sock != nil {
			out = append(out, e.sock)
		}
	}
	return out
}

func (h *Process) fd(fd uint32) *fdEntry {
	if int(fd) >= len(h.fds) {
		return nil
	}
	return h.fds[fd]
}

func (h *Process) newFD(e *fdEntry) uint32 {
	for i := 4; i < len(h.fds); i++ {
		if h.fds[i] == nil {
			h.fds[i] = e
			return uint32(i)
		}
	}
	h.fds = append(h.fds, e)
	return uint32(len(h.fds) - 1)
}

// hostFn adapts a host function body; every i32 parameter must be masked by the body
// (wazero passes i32s in uint64 slots whose upper bits are garbage).
type hostFn func(h *Process, m api.Memory, s []uint64) uint32

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

// Instantiate registers wasi_snapshot_preview1 and seedfall on rt. A module
// instantiated on rt must be started with a context from WithProcess.
func Instantiate(ctx context.Context, rt wazero.Runtime) error {
	if err := buildHost(ctx, rt, "wasi_snapshot_preview1", wasiFuncs()); err != nil {
		return err
	}
	return buildHost(ctx, rt, "seedfall", append(seedfallFuncs(), mmapFuncs()...))
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
			h := processOf(ctx)
			if h.p.HostCall(mod, f.name) {
				defer h.p.HostReturn()
			}
			r := f.fn(h, mod.Memory(), stack)
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
		{name: "proc_raise", params: params(i32), fn: func(*Process, api.Memory, []uint64) uint32 { return errnoNosys }},
		{name: "random_get", params: params(i32, i32), fn: randomGet},
		{name: "sched_yield", params: params(), fn: schedYield},
		{name: "sock_accept", params: params(i32, i32, i32), fn: sockAccept},
		{name: "sock_recv", params: params(i32, i32, i32, i32, i32, i32), fn: func(*Process, api.Memory, []uint64) uint32 { return errnoNosys }},
		{name: "sock_send", params: params(i32, i32, i32, i32, i32), fn: func(*Process, api.Memory, []uint64) uint32 { return errnoNosys }},
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
