// Package goloc finds the guest's source location (file:line and function) of a host
// call made by a Go wasip1 module, without DWARF and without touching the guest.
//
// Go's wasm binaries carry no DWARF, but they carry the runtime's own symbol tables
// (pclntab, moduledata, inline trees) in the data section, because the runtime needs
// them for tracebacks. Go on wasm keeps its call stack in linear memory: the stack
// pointer is wasm global 0 and every Go call pushes an 8-byte return PC
// (PC_F<<16 | PC_B) before the wasm call. A //go:wasmimport wrapper has a zero-size
// frame, so during a host call mem[SP] is the return PC into the wrapper's caller, and
// the runtime's own unwinding rule (frame size = pcsp table at the PC, return PC just
// above the frame) walks the rest. This is what runtime.Callers would see, read from
// the outside: the wasm call stack is NOT used (after a goroutine switch the wasm stack
// holds only the frames since resumption; the Go stack in memory is always complete).
//
// Locate only reads guest memory and global 0, so it is deterministic and does not
// perturb the guest. It needs no function listener: any host function (which gets the
// calling api.Module) can call it. It may not write guest memory or call into the
// guest, and it knows nothing of the world: it answers "where is this call from".
package goloc

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// SimPackage is skipped by default besides the standard library.
const SimPackage = "github.com/seedfall/seedfall/sim"

// maxDepth bounds a stack walk (a location deeper than this is reported as unknown).
const maxDepth = 256

// Table holds what Locate needs from one compiled module. Build it once per module
// (Load) and share it: it is safe for concurrent use.
type Table struct {
	tab  *pclntab
	mod  *module
	skip []string // package path prefixes skipped besides std

	cache sync.Map // return PC -> *pcInfo

	byNameOnce sync.Once
	byName     map[string]uint32 // name-section name -> function index (lowest if shared)
}

// Location is a guest source position.
type Location struct {
	File string // full file path as recorded (module-path based under -trimpath)
	Line int
	Func string // full function name, e.g. github.com/x/y.(*T).M
	PC   uint64 // Go PC of the frame (PC_F<<16 | PC_B)
}

// String gives "kvlog/kvstore/kvstore.go:88 kvstore.(*Store).Put", or "" if unknown.
func (l Location) String() string {
	if l.File == "" {
		return ""
	}
	return ShortFile(l.File) + ":" + strconv.Itoa(l.Line) + " " + ShortFunc(l.Func)
}

// FileLine gives "kvlog/kvstore/kvstore.go:88", or "" if unknown.
func (l Location) FileLine() string {
	if l.File == "" {
		return ""
	}
	return ShortFile(l.File) + ":" + strconv.Itoa(l.Line)
}

// ShortFile keeps the last three elements of a path.
func ShortFile(p string) string {
	n := 0
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			n++
			if n == 3 {
				return p[i+1:]
			}
		}
	}
	return p
}

// ShortFunc drops the package path's directories: kvstore.(*Store).Put.
func ShortFunc(name string) string {
	head := name
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	if i := strings.LastIndexByte(head, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// Load parses a Go wasip1 module's symbol tables. Extra package path prefixes to skip
// (besides the standard library and SimPackage) may be given.
func Load(wasm []byte, skip ...string) (*Table, error) {
	m, err := parseModule(wasm)
	if err != nil {
		return nil, err
	}
	tab, err := findPclntab(m)
	if err != nil {
		return nil, err
	}
	return &Table{tab: tab, mod: m, skip: append([]string{SimPackage}, skip...)}, nil
}

// Memory is what a stack walk reads; api.Memory satisfies it.
type Memory interface {
	ReadUint64Le(offset uint32) (uint64, bool)
}

// Locate returns the location of the first frame outside std and the skipped packages
// for the host call mod is making now. Call it from inside a host function (or a
// FunctionListener's Before) with the calling module. ok is false if there is none
// (e.g. a runtime-internal call such as the scheduler's poll_oneoff).
func (t *Table) Locate(mod api.Module) (Location, bool) {
	im, ok := mod.(experimental.InternalModule)
	if !ok || im.NumGlobal() == 0 {
		return Location{}, false
	}
	return t.LocateSP(mod.Memory(), uint32(im.Global(0).Get()))
}

// LocateSP is Locate given the memory and the Go stack pointer (global 0) at a host call
// made through a //go:wasmimport wrapper.
func (t *Table) LocateSP(mem Memory, sp uint32) (Location, bool) {
	var loc Location
	ok := t.walk(mem, sp, func(pc uint64, in *pcInfo) bool {
		if in.user != nil {
			loc = *in.user
			return false
		}
		return true
	})
	return loc, ok && loc.File != ""
}

// Stack returns every logical frame (inlined ones included, innermost first) of the host
// call, std and skipped packages included; for diagnostics.
func (t *Table) Stack(mod api.Module) []Location {
	im, ok := mod.(experimental.InternalModule)
	if !ok || im.NumGlobal() == 0 {
		return nil
	}
	var out []Location
	t.walk(mod.Memory(), uint32(im.Global(0).Get()), func(pc uint64, in *pcInfo) bool {
		f, _ := t.tab.findFunc(pc)
		for _, fr := range f.frames(pc-1, nil) {
			out = append(out, Location{File: fr.file, Line: fr.line, Func: fr.fn, PC: pc})
		}
		return true
	})
	return out
}

// pcInfo is what a stack walk needs about one return PC; cached per PC.
type pcInfo struct {
	valid   bool
	spdelta uint32    // frame size at the PC
	top     bool      // last frame of a stack
	user    *Location // first logical frame at the PC outside std/skip, if any
}

func (t *Table) info(pc uint64) *pcInfo {
	if v, ok := t.cache.Load(pc); ok {
		return v.(*pcInfo)
	}
	in := &pcInfo{}
	if f, ok := t.tab.findFunc(pc); ok && pc > f.entry {
		if d, ok := f.pcvalue(f.u32(fnPcsp), pc); ok && d >= 0 {
			in.valid = true
			in.spdelta = uint32(d)
			in.top = f.flag()&(funcFlagTopFrame|funcFlagSPWrite) != 0
			for _, fr := range f.frames(pc-1, nil) {
				if !t.skipped(fr) {
					in.user = &Location{File: fr.file, Line: fr.line, Func: fr.fn, PC: pc}
					break
				}
			}
		}
	}
	v, _ := t.cache.LoadOrStore(pc, in)
	return v.(*pcInfo)
}

// walk calls visit for each physical frame's return PC, innermost first, until visit
// returns false (ok=true) or the stack ends or looks wrong.
func (t *Table) walk(mem Memory, sp uint32, visit func(pc uint64, in *pcInfo) bool) bool {
	if sp == 0 {
		return false
	}
	pc, ok := mem.ReadUint64Le(sp) // return PC into the caller of the wasmimport wrapper
	if !ok {
		return false
	}
	sp += 8
	for depth := 0; depth < maxDepth && pc != 0; depth++ {
		in := t.info(pc)
		if !in.valid {
			return false
		}
		if !visit(pc, in) {
			return true
		}
		if in.top {
			return false
		}
		if pc, ok = mem.ReadUint64Le(sp + in.spdelta); !ok {
			return false
		}
		sp += in.spdelta + 8
	}
	return false
}

// skipped reports whether a frame belongs to the standard library, a skipped package, or
// compiler-generated code.
func (t *Table) skipped(fr frame) bool {
	if fr.file == "<autogenerated>" || fr.file == "?" {
		return true
	}
	if LayerFile(fr.file) {
		return true
	}
	pkg := funcPackage(fr.fn)
	if isStd(pkg) || pkg == xsysUnix {
		return true
	}
	for _, p := range t.skip {
		if pkg == p || strings.HasPrefix(pkg, p) && pkg[len(p)] == '/' {
			return true
		}
	}
	return false
}

// LayerFile reports whether file is one the wasip1 platform layer adds to a dependency
// (golang.org/x/sys/unix's system call entry points, ...): seedfall's code, not the
// user's, so locations name its caller (internal/platform).
func LayerFile(file string) bool {
	base := path.Base(file)
	return base == "seedfall_wasip1.go" || base == "seedfall_wasm.go" || base == "seedfall_personality.go"
}

// xsysUnix is golang.org/x/sys/unix, the system call layer of Linux code (as package
// syscall is the standard library's): a location names the code that called it.
const xsysUnix = "golang.org/x/sys/unix"

// funcPackage returns the package path of a function name as the runtime prints it.
func funcPackage(name string) string {
	head := name
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	slash := strings.LastIndexByte(head, '/')
	if i := strings.IndexByte(head[slash+1:], '.'); i >= 0 {
		return head[:slash+1+i]
	}
	return head
}

// isStd reports whether a package path is the standard library's: its first element has
// no dot and is one of std's top-level directories (so dotless user modules such as
// "kvlog" are not mistaken for std).
func isStd(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	if strings.Contains(first, ".") {
		return false
	}
	return stdTop[first]
}

var stdTop = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`archive arena bufio builtin bytes cmp compress container
		context crypto database debug embed encoding errors expvar flag fmt go hash html image
		index internal io iter log maps math mime net os path plugin reflect regexp runtime
		slices sort strconv strings structs sync syscall testing text time unicode unique
		unsafe vendor weak type go:buildid`) {
		stdTop[s] = true
	}
}

// FuncName returns the Go function name at a Go PC (for tests and diagnostics).
func (t *Table) FuncName(pc uint64) string {
	f, ok := t.tab.findFunc(pc)
	if !ok {
		return ""
	}
	return f.name()
}

// WasmName returns the name-section name of the wasm function holding Go PC pc.
func (t *Table) WasmName(pc uint64) string {
	return t.mod.names[t.mod.numFuncImports+uint32(pc>>16)-funcValueOffset]
}

// FuncOfWasmName returns the Go function name of the module's function that the name
// section calls name, the name a wasm stack trace prints (".go.etcd.io_bbolt.__Cursor_.last"
// without the module's name and its dot, for go.etcd.io/bbolt.(*Cursor).last). It
// returns "" for a name the module does not hold or one that is not a Go function.
func (t *Table) FuncOfWasmName(name string) string {
	t.byNameOnce.Do(func() {
		t.byName = make(map[string]uint32, len(t.mod.names))
		for idx, n := range t.mod.names {
			if idx < t.mod.numFuncImports {
				continue
			}
			if prev, ok := t.byName[n]; !ok || idx < prev {
				t.byName[n] = idx
			}
		}
	})
	idx, ok := t.byName[name]
	if !ok {
		return ""
	}
	return t.FuncName(uint64(idx-t.mod.numFuncImports+funcValueOffset) << 16)
}

// NumFuncs is the number of Go functions in the table.
func (t *Table) NumFuncs() int { return t.tab.nfunc }

func (l Location) GoString() string {
	return fmt.Sprintf("%s:%d %s pc=%#x", l.File, l.Line, l.Func, l.PC)
}

// StdFunc reports whether a function name, as the runtime prints it in a traceback
// ("sort.Slice", "runtime.gopanic"), belongs to the standard library.
func StdFunc(name string) bool { return isStd(funcPackage(name)) }
