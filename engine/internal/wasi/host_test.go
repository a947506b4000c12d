package wasi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/internal/disk"
)

// Unit tests of the host functions, each alone, in wazero's style: the arguments and
// the guest memory go in, the memory and the errno come out. The world is a fake Proc
// that logs what the host asked of it; the memory is a real wazero linear memory.

// fakeProc is a Proc with a real simulated disk and a log of the calls the host made.
// Methods a test does not expect panic (the embedded nil Proc).
type fakeProc struct {
	Proc
	fs      *disk.FS
	log     []string
	ops     int64
	crashAt int64 // the disk op (number) a crash is planned for; 0: none
	land    bool  // a crash lands the interrupted namespace op
	rnd     uint64
	args    []string
}

// crashed is what CrashNow panics with, standing in for the guest's exit.
type crashed struct{ op int64 }

func (p *fakeProc) Disk() *disk.FS { return p.fs }
func (p *fakeProc) Args() []string { return p.args }
func (p *fakeProc) Advance()       { p.log = append(p.log, "advance") }
func (p *fakeProc) Clock(rt bool) int64 {
	return map[bool]int64{true: 1_700_000_000_000_000_000, false: 42}[rt]
}
func (p *fakeProc) RandUint64() uint64 { p.rnd++; return 0x0102030405060708 * p.rnd }
func (p *fakeProc) CountReplace()      { p.log = append(p.log, "replace") }
func (p *fakeProc) EndDiskOp()         { p.log = append(p.log, fmt.Sprintf("end #%d", p.ops)) }
func (p *fakeProc) CrashStream() disk.Chooser {
	return rand.New(rand.NewPCG(1, 2))
}

func (p *fakeProc) BeginDiskOp(kind, match string, paths []string, detail string) DiskOp {
	p.ops++
	what := strings.TrimSpace(kind + " " + strings.Join(paths, " ") + " " + detail)
	p.log = append(p.log, fmt.Sprintf("begin #%d %s", p.ops, what))
	return DiskOp{N: p.ops, What: what, Crash: p.ops == p.crashAt}
}

func (p *fakeProc) InflightWrite(disk.Ino, int64, []byte) {}

func (p *fakeProc) MaybeApply(fn func()) {
	p.log = append(p.log, fmt.Sprintf("maybe-apply %v", p.land))
	if p.land {
		fn()
	}
}

func (p *fakeProc) CrashNow(op DiskOp, partial string) {
	p.log = append(p.log, fmt.Sprintf("crash #%d", op.N))
	panic(crashed{op.N})
}

// memory is one page of a real wazero linear memory.
func memory(t *testing.T) api.Memory {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	// (module (memory (export "memory") 1))
	bin := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 10, 1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 2, 0}
	mod, err := rt.Instantiate(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	return mod.Memory()
}

func newHost(t *testing.T) (*Process, *fakeProc, api.Memory) {
	t.Helper()
	p := &fakeProc{fs: disk.New(disk.Options{}), args: []string{"server", "-x"}}
	return NewProcess(p), p, memory(t)
}

// put writes s at ptr and returns its length.
func put(m api.Memory, ptr uint32, s string) uint32 {
	if !m.WriteString(ptr, s) {
		panic(fmt.Sprintf("write %q at %d", s, ptr))
	}
	return uint32(len(s))
}

func stack(vs ...uint32) []uint64 {
	out := make([]uint64, len(vs))
	for i, v := range vs {
		out[i] = uint64(v)
	}
	return out
}

// exitCode runs fn and returns the exit code it stopped the guest with (-1: none).
func exitCode(fn func()) (code int) {
	defer func() {
		code = -1
		if r := recover(); r != nil {
			var ee *sys.ExitError
			if err, ok := r.(error); ok && errors.As(err, &ee) {
				code = int(ee.ExitCode())
				return
			}
			panic(r)
		}
	}()
	fn()
	return -1
}

func TestArgsSizesGetAndArgsGet(t *testing.T) {
	h, _, m := newHost(t)
	if e := argsSizesGet(h, m, stack(0, 4)); e != 0 {
		t.Fatalf("errno %d", e)
	}
	n, _ := m.ReadUint32Le(0)
	size, _ := m.ReadUint32Le(4)
	if n != 2 || size != uint32(len("server\x00-x\x00")) {
		t.Errorf("argc %d, size %d", n, size)
	}
	if e := argsGet(h, m, stack(100, 200)); e != 0 {
		t.Fatalf("errno %d", e)
	}
	p0, _ := m.ReadUint32Le(100)
	p1, _ := m.ReadUint32Le(104)
	buf, _ := m.Read(200, size)
	if p0 != 200 || p1 != 207 || string(buf) != "server\x00-x\x00" {
		t.Errorf("argv pointers %d %d, strings %q", p0, p1, buf)
	}
}

func TestClockTimeGet(t *testing.T) {
	h, p, m := newHost(t)
	for _, tc := range []struct {
		id   uint32
		want uint64
	}{{0, 1_700_000_000_000_000_000}, {1, 42}} {
		if e := clockTimeGet(h, m, stack(tc.id, 0, 8)); e != 0 {
			t.Fatalf("clock %d: errno %d", tc.id, e)
		}
		if got, _ := m.ReadUint64Le(8); got != tc.want {
			t.Errorf("clock %d: %d, want %d", tc.id, got, tc.want)
		}
	}
	if e := clockTimeGet(h, m, stack(9, 0, 8)); e != errnoInval {
		t.Errorf("unknown clock: errno %d, want EINVAL", e)
	}
	if !slices.Contains(p.log, "advance") {
		t.Errorf("reading the clock did not move time on: %v", p.log)
	}
}

func TestRandomGet(t *testing.T) {
	h, _, m := newHost(t)
	if e := randomGet(h, m, stack(16, 10)); e != 0 {
		t.Fatalf("errno %d", e)
	}
	got, _ := m.Read(16, 12)
	var want [16]byte
	binary.LittleEndian.PutUint64(want[:], 0x0102030405060708)
	binary.LittleEndian.PutUint64(want[8:], 2*0x0102030405060708)
	if string(got[:10]) != string(want[:10]) || got[10] != 0 || got[11] != 0 {
		t.Errorf("random bytes % x, want % x then untouched zeros", got, want[:10])
	}
}

func TestPathOpen(t *testing.T) {
	const oflagsCreat, rights = oflagCreat, rightFdRead | rightFdWrite
	for _, tc := range []struct {
		name   string
		exists bool
		oflags uint32
		errno  uint32
	}{
		{"create", false, oflagsCreat, 0},
		{"missing without O_CREAT", false, 0, errnoNoent},
		{"exists with O_EXCL", true, oflagCreat | oflagExcl, errnoExist},
		{"exists", true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p, m := newHost(t)
			if tc.exists {
				if _, err := p.fs.Create("/f", false); err != nil {
					t.Fatal(err)
				}
			}
			n := put(m, 0, "f")
			s := []uint64{3, 0, 0, uint64(n), uint64(tc.oflags), rights, rights, 0, 64}
			if e := pathOpen(h, m, s); e != tc.errno {
				t.Fatalf("errno %d, want %d", e, tc.errno)
			}
			if tc.errno != 0 {
				return
			}
			fd, _ := m.ReadUint32Le(64)
			if fd != 4 {
				t.Errorf("fd %d, want 4 (after stdio and the preopen)", fd)
			}
			if _, err := p.fs.Lookup("/f"); err != nil {
				t.Errorf("no /f after open: %v", err)
			}
			if want := !tc.exists; (p.ops == 1) != want {
				t.Errorf("disk ops %d (log %v): a create is one disk op, an open none", p.ops, p.log)
			}
		})
	}
}

// TestBadPointerStopsTheGuest: a pointer outside linear memory ends the incarnation with
// exit code 2 (docs/ABI.md: not EFAULT).
func TestBadPointerStopsTheGuest(t *testing.T) {
	h, _, m := newHost(t)
	if code := exitCode(func() { randomGet(h, m, stack(m.Size()-4, 8)) }); code != 2 {
		t.Errorf("random_get past the end of memory: exit %d, want 2", code)
	}
	if code := exitCode(func() { randomGet(h, m, stack(0, 8)) }); code != -1 {
		t.Errorf("a good pointer stopped the guest: exit %d", code)
	}
}

func TestSockSendRecvAreENOSYS(t *testing.T) {
	for _, f := range wasiFuncs() {
		if f.name == "sock_send" || f.name == "sock_recv" {
			if e := f.fn(nil, nil, make([]uint64, len(f.params))); e != errnoNosys {
				t.Errorf("%s: errno %d, want ENOSYS", f.name, e)
			}
		}
	}
}

// TestNamespaceOps: rmdir, unlink and rename are each one disk op, bracketed by begin
// and end; a crash planned for the op lands the change or not (the crash stream's
// draw) and stops the guest before the op ends.
func TestNamespaceOps(t *testing.T) {
	type op struct {
		name string
		prep func(fs *disk.FS)
		call func(h *Process, m api.Memory) uint32
		done func(fs *disk.FS) bool // the change is on the disk
	}
	exists := func(fs *disk.FS, p string) bool { _, err := fs.Lookup(p); return err == nil }
	ops := []op{
		{"rmdir", func(fs *disk.FS) { fs.Create("/d", true) },
			func(h *Process, m api.Memory) uint32 { return pathRemoveDirectory(h, m, stack(3, 0, put(m, 0, "d"))) },
			func(fs *disk.FS) bool { return !exists(fs, "/d") }},
		{"unlink", func(fs *disk.FS) { fs.Create("/f", false) },
			func(h *Process, m api.Memory) uint32 { return pathUnlinkFile(h, m, stack(3, 0, put(m, 0, "f"))) },
			func(fs *disk.FS) bool { return !exists(fs, "/f") }},
		{"rename", func(fs *disk.FS) { fs.Create("/a", false) },
			func(h *Process, m api.Memory) uint32 {
				return pathRename(h, m, stack(3, 0, put(m, 0, "a"), 3, 16, put(m, 16, "b")))
			},
			func(fs *disk.FS) bool { return !exists(fs, "/a") && exists(fs, "/b") }},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			h, p, m := newHost(t)
			o.prep(p.fs)
			if e := o.call(h, m); e != 0 || !o.done(p.fs) {
				t.Fatalf("errno %d, done %v", e, o.done(p.fs))
			}
			if len(p.log) != 2 || !strings.HasPrefix(p.log[0], "begin #1 "+o.name) || p.log[1] != "end #1" {
				t.Errorf("log %q, want begin and end of op #1", p.log)
			}
			for _, land := range []bool{false, true} {
				h, p, m := newHost(t)
				o.prep(p.fs)
				p.crashAt, p.land = 1, land
				func() {
					defer func() {
						if r := recover(); r != (crashed{1}) {
							t.Errorf("land %v: recovered %v, want the crash of op #1", land, r)
						}
					}()
					o.call(h, m)
				}()
				if got := o.done(p.fs); got != land {
					t.Errorf("land %v: the change is on the disk: %v", land, got)
				}
				if want := []string{"begin #1", "maybe-apply", "crash #1"}; len(p.log) != 3 || slices.Contains(p.log, "end #1") {
					t.Errorf("land %v: log %q, want %v and no end", land, p.log, want)
				}
			}
		})
	}
}
