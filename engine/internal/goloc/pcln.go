package goloc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// Layout of the Go 1.20+ runtime symbol tables (runtime/symtab.go, runtime/runtime2.go,
// runtime/symtabinl.go, internal/abi/symtab.go) for GOARCH=wasm (ptrSize 8, PCQuantum 1).
const (
	go120Magic = 0xfffffff1

	// pcHeader field offsets.
	hdrNfunc          = 8
	hdrFuncnameOffset = 32
	hdrCuOffset       = 40
	hdrFiletabOffset  = 48
	hdrPctabOffset    = 56
	hdrPclnOffset     = 64
	hdrSize           = 72

	// moduledata field offsets: pcHeader, 5 slices (24 bytes each), ftab slice,
	// findfunctab, minpc, maxpc, text, etext, ... gofunc, epclntab.
	mdFuncnametab = 8
	mdPclntable   = 104
	mdText        = 176

	// _func field offsets.
	fnEntryOff  = 0
	fnNameOff   = 4
	fnPcsp      = 16
	fnPcfile    = 20
	fnPcln      = 24
	fnNpcdata   = 28
	fnCuOffset  = 32
	fnFuncID    = 40
	fnFlag      = 41
	fnNfuncdata = 43
	fnSize      = 44

	pcdataInlTreeIndex = 2
	funcdataInlTree    = 3
	inlinedCallSize    = 16

	funcFlagTopFrame = 1
	funcFlagSPWrite  = 2

	// wasm: PC = (funcValueOffset + function index without imports) << 16 | resume block.
	funcValueOffset = 0x1000
)

// mdGofunc are the offsets of moduledata.gofunc in the releases goloc reads: go1.20 to
// go1.26, then go1.27, which added typedesclen, itaboffset and itabsize before it
// (runtime/symtab.go).
var mdGofunc = []int{320, 344}

// gofuncAlign bounds the padding between the pclntab's end and go:func.*.
const gofuncAlign = 64

// gofuncOf reads moduledata.gofunc from md, the moduledata and what follows it: the
// value at one of the releases' offsets that lies just past the end of pclntable.
func gofuncOf(md []byte) (uint64, error) {
	le := binary.LittleEndian
	if len(md) < mdPclntable+16 {
		return 0, errors.New("goloc: moduledata cut short")
	}
	end := le.Uint64(md[mdPclntable:]) + le.Uint64(md[mdPclntable+8:])
	for _, g := range mdGofunc {
		if g+8 > len(md) {
			continue
		}
		if v := le.Uint64(md[g:]); v >= end && v-end < gofuncAlign {
			return v, nil
		}
	}
	return 0, fmt.Errorf("goloc: moduledata of an unknown layout (no gofunc just past pclntable's end %#x at the offsets %v): a Go release goloc does not read yet", end, mdGofunc)
}

// pclntab is a decoded view of the runtime's tables, read from the data section.
type pclntab struct {
	funcnametab []byte
	cutab       []byte // []uint32
	filetab     []byte
	pctab       []byte
	pclntable   []byte // starts with ftab
	nfunc       int
	text        uint64 // moduledata.text (0 on wasm): entry offsets are from it
	gofunc      uint64 // moduledata.gofunc: funcdata offsets are from it
	mem         *image

	entries []uint64 // entry PC of function i (sorted), plus the end PC
}

func findPclntab(m *module) (*pclntab, error) {
	// The pcHeader: magic, pad1=0, pad2=0, minLC=1, ptrSize=8, 8-aligned.
	d := m.mem.data
	for off := int((8 - m.mem.base%8) % 8); off+hdrSize <= len(d); off += 8 {
		if binary.LittleEndian.Uint32(d[off:]) != go120Magic || d[off+4] != 0 || d[off+5] != 0 || d[off+6] != 1 || d[off+7] != 8 {
			continue
		}
		t, err := parsePclntab(m, m.mem.base+uint64(off), d[off:])
		if err == nil {
			return t, nil
		}
	}
	return nil, errors.New("goloc: no Go 1.20+ pclntab in the data section (not a Go wasm binary?)")
}

func parsePclntab(m *module, hdrAddr uint64, d []byte) (*pclntab, error) {
	le := binary.LittleEndian
	nfunc := le.Uint64(d[hdrNfunc:])
	offs := [5]uint64{}
	for i := range offs {
		offs[i] = le.Uint64(d[hdrFuncnameOffset+8*i:])
	}
	for i := 1; i < 5; i++ {
		if offs[i] < offs[i-1] || offs[4] > uint64(len(d)) {
			return nil, errors.New("bad pcHeader offsets")
		}
	}
	if nfunc == 0 || nfunc > 1<<24 {
		return nil, errors.New("bad nfunc")
	}
	t := &pclntab{
		funcnametab: d[offs[0]:offs[1]],
		cutab:       d[offs[1]:offs[2]],
		filetab:     d[offs[2]:offs[3]],
		pctab:       d[offs[3]:offs[4]],
		pclntable:   d[offs[4]:],
		nfunc:       int(nfunc),
		mem:         &m.mem,
	}
	if uint64(len(t.pclntable)) < (nfunc+1)*8 {
		return nil, errors.New("short ftab")
	}
	// moduledata: a pointer to the pcHeader followed by funcnametab's data pointer.
	found := false
	md := m.mem.data
	for off := int((8 - m.mem.base%8) % 8); off+mdPclntable+16 <= len(md); off += 8 {
		if le.Uint64(md[off:]) != hdrAddr || le.Uint64(md[off+mdFuncnametab:]) != hdrAddr+offs[0] {
			continue
		}
		t.text = le.Uint64(md[off+mdText:])
		// The linker lays go:func.* out right after the pclntab's pclntable, aligned, so
		// gofunc is where moduledata.pclntable ends, rounded up: that tells the releases'
		// layouts apart.
		var err error
		if t.gofunc, err = gofuncOf(md[off:]); err != nil {
			return nil, err
		}
		found = true
		break
	}
	if !found {
		return nil, errors.New("goloc: runtime moduledata not found")
	}
	if t.gofunc < m.mem.base || t.gofunc >= m.mem.base+uint64(len(m.mem.data)) {
		return nil, fmt.Errorf("goloc: moduledata.gofunc %#x outside the data (moduledata layout changed?)", t.gofunc)
	}
	// On wasm an entry offset is a function's PC_F (runtime.textAddr): PC = (text+off)<<16.
	t.entries = make([]uint64, nfunc+1)
	for i := range t.entries {
		t.entries[i] = (t.text + uint64(le.Uint32(t.pclntable[8*i:]))) << 16
	}
	if t.entries[0] != funcValueOffset<<16 {
		return nil, fmt.Errorf("goloc: first function at %#x, want %#x (moduledata layout changed?)", t.entries[0], funcValueOffset<<16)
	}
	if !sort.SliceIsSorted(t.entries, func(i, j int) bool { return t.entries[i] < t.entries[j] }) {
		return nil, errors.New("goloc: ftab not sorted")
	}
	return t, nil
}

// fn is one function's _func record.
type fn struct {
	t     *pclntab
	entry uint64
	rec   []byte // the _func struct and its pcdata/funcdata arrays
}

func (t *pclntab) findFunc(pc uint64) (fn, bool) {
	i := sort.Search(t.nfunc, func(i int) bool { return t.entries[i+1] > pc })
	if i >= t.nfunc || pc < t.entries[i] {
		return fn{}, false
	}
	funcoff := binary.LittleEndian.Uint32(t.pclntable[8*i+4:])
	if uint64(funcoff)+fnSize > uint64(len(t.pclntable)) {
		return fn{}, false
	}
	rec := t.pclntable[funcoff:]
	f := fn{t: t, entry: t.entries[i], rec: rec}
	if (uint64(f.u32(fnEntryOff))+t.text)<<16 != f.entry {
		return fn{}, false
	}
	return f, true
}

func (f fn) u32(off int) uint32 { return binary.LittleEndian.Uint32(f.rec[off:]) }
func (f fn) name() string       { return cstring(f.t.funcnametab, uint64(f.u32(fnNameOff))) }
func (f fn) flag() uint8        { return f.rec[fnFlag] }

func (f fn) pcdata(table uint32) uint32 {
	if table >= f.u32(fnNpcdata) {
		return 0
	}
	return f.u32(fnSize + 4*int(table))
}

// funcdata returns the linear-memory address of funcdata i, or 0.
func (f fn) funcdata(i uint8) uint64 {
	if i >= f.rec[fnNfuncdata] {
		return 0
	}
	off := f.u32(fnSize + 4*int(f.u32(fnNpcdata)) + 4*int(i))
	if off == ^uint32(0) {
		return 0
	}
	return f.t.gofunc + uint64(off)
}

// pcvalue decodes the pc-value table at off for targetpc (runtime.pcvalue).
func (f fn) pcvalue(off uint32, targetpc uint64) (int32, bool) {
	if off == 0 || uint64(off) >= uint64(len(f.t.pctab)) {
		return -1, false
	}
	p := f.t.pctab[off:]
	pc := f.entry
	val := int32(-1)
	first := true
	for {
		uv, n := binary.Uvarint(p)
		if n <= 0 || (uv == 0 && !first) {
			return -1, false
		}
		first = false
		p = p[n:]
		u := uint32(uv)
		val += int32(-(u & 1) ^ (u >> 1))
		pcd, n := binary.Uvarint(p)
		if n <= 0 {
			return -1, false
		}
		p = p[n:]
		pc += pcd // PCQuantum is 1 on wasm
		if targetpc < pc {
			return val, true
		}
	}
}

// fileLine returns the file and line at pc (the innermost inlined position).
func (f fn) fileLine(pc uint64) (string, int) {
	fileno, ok1 := f.pcvalue(f.u32(fnPcfile), pc)
	line, ok2 := f.pcvalue(f.u32(fnPcln), pc)
	if !ok1 || !ok2 || fileno < 0 {
		return "?", 0
	}
	ci := 4 * (uint64(f.u32(fnCuOffset)) + uint64(fileno))
	if ci+4 > uint64(len(f.t.cutab)) {
		return "?", 0
	}
	fo := binary.LittleEndian.Uint32(f.t.cutab[ci:])
	if fo == ^uint32(0) {
		return "?", 0
	}
	return cstring(f.t.filetab, uint64(fo)), int(line)
}

// frame is one logical (possibly inlined) Go frame.
type frame struct {
	fn   string
	file string
	line int
}

// frames expands the inline tree at pc (innermost first), as runtime.inlineUnwinder.
func (f fn) frames(pc uint64, out []frame) []frame {
	tree := f.funcdata(funcdataInlTree)
	for depth := 0; depth < 100; depth++ {
		file, line := f.fileLine(pc)
		ix := int32(-1)
		if tree != 0 {
			if v, ok := f.pcvalue(f.pcdata(pcdataInlTreeIndex), pc); ok {
				ix = v
			}
		}
		if ix < 0 {
			return append(out, frame{fn: f.name(), file: file, line: line})
		}
		rec, ok := f.t.mem.slice(tree+uint64(ix)*inlinedCallSize, inlinedCallSize)
		if !ok {
			return append(out, frame{fn: f.name(), file: file, line: line})
		}
		nameOff := binary.LittleEndian.Uint32(rec[4:])
		parentPc := binary.LittleEndian.Uint32(rec[8:])
		out = append(out, frame{fn: cstring(f.t.funcnametab, uint64(nameOff)), file: file, line: line})
		pc = f.entry + uint64(parentPc)
	}
	return out
}

func cstring(b []byte, off uint64) string {
	if off >= uint64(len(b)) {
		return "?"
	}
	b = b[off:]
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
