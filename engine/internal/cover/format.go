package cover

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
)

// Pkg is one instrumented package of a binary: its meta-data blob as the compiler
// emitted it, and what the runtime registered with it.
type Pkg struct {
	Blob  []byte
	Hash  [16]byte // the blob's hash
	Path  string   // import path
	PkgID int32    // hard-coded ID of a runtime package, or -1
	Mode  uint8
	Gran  uint8
}

// Meta is the meta-data of one binary: what a covmeta file holds.
type Meta struct {
	Hash [16]byte // MetaHash(Pkgs, Mode, Gran): names the files
	Mode uint8
	Gran uint8
	Pkgs []Pkg
}

// MetaHash is the hash that names a binary's coverage files: FNV-128a over the
// packages' blob hashes, then the mode's and the granularity's names.
func MetaHash(pkgs []Pkg, mode, gran uint8) [16]byte {
	h := fnv.New128a()
	for _, p := range pkgs {
		h.Write(p.Hash[:])
	}
	h.Write([]byte(ModeName(mode)))
	h.Write([]byte(GranName(gran)))
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return out
}

// FileName is the meta-data file's name, "covmeta.<hash>".
func (m *Meta) FileName() string { return "covmeta." + hexHash(m.Hash) }

// HashString is the hash in hex, as the file names carry it.
func (m *Meta) HashString() string { return hexHash(m.Hash) }

// Sizes of the fixed parts of the files (little-endian, as Go writes them).
const (
	metaFileHeaderSize = 4 + 4 + 8 + 8 + 16 + 4 + 4 + 1 + 1 + 6
	counterHeaderSize  = 4 + 4 + 16 + 1 + 1 + 6
	segmentHeaderSize  = 8 + 4 + 4
	footerSize         = 4 + 4 + 4 + 4
	pkgHeaderSize      = 4 + 4 + 4 + 4 + 16 + 1 + 3 + 4 + 4
)

var (
	metaMagic    = [4]byte{0x00, 'c', 'v', 'm'}
	counterMagic = [4]byte{0x00, 'c', 'w', 'm'}
)

// EncodeMetaFile renders the covmeta file: header, the blobs' offsets and lengths, an
// empty string table, the blobs.
func (m *Meta) EncodeMetaFile() []byte {
	strtab := []byte{1, 0} // one entry, the empty string
	stOff := metaFileHeaderSize + 16*len(m.Pkgs)
	pre := stOff + len(strtab)
	total := pre
	for _, p := range m.Pkgs {
		total += len(p.Blob)
	}
	b := make([]byte, 0, total)
	b = append(b, metaMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, 1) // version
	b = binary.LittleEndian.AppendUint64(b, uint64(total))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(m.Pkgs)))
	b = append(b, m.Hash[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(stOff))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(strtab)))
	b = append(b, m.Mode, m.Gran, 0, 0, 0, 0, 0, 0)
	off := pre
	for _, p := range m.Pkgs {
		b = binary.LittleEndian.AppendUint64(b, uint64(off))
		off += len(p.Blob)
	}
	for _, p := range m.Pkgs {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(p.Blob)))
	}
	b = append(b, strtab...)
	for _, p := range m.Pkgs {
		b = append(b, p.Blob...)
	}
	return b
}

// DecodeMetaFile reads a covmeta file. Package paths and blob hashes come from the
// blobs' headers and string tables (PkgID is not in the file: -1).
func DecodeMetaFile(data []byte) (*Meta, error) {
	if len(data) < metaFileHeaderSize || [4]byte(data[:4]) != metaMagic {
		return nil, errors.New("not a Go coverage meta-data file")
	}
	le := binary.LittleEndian
	if v := le.Uint32(data[4:]); v != 1 {
		return nil, fmt.Errorf("meta-data file version %d (want 1)", v)
	}
	if int(le.Uint64(data[8:])) != len(data) {
		return nil, errors.New("meta-data file: length does not match its header")
	}
	n := le.Uint64(data[16:])
	m := &Meta{Mode: data[48], Gran: data[49]}
	copy(m.Hash[:], data[24:40])
	if n > uint64(len(data)) || metaFileHeaderSize+16*int(n) > len(data) {
		return nil, errors.New("meta-data file: bad package count")
	}
	for i := 0; i < int(n); i++ {
		off := le.Uint64(data[metaFileHeaderSize+8*i:])
		l := le.Uint64(data[metaFileHeaderSize+8*int(n)+8*i:])
		if off > uint64(len(data)) || l > uint64(len(data))-off {
			return nil, fmt.Errorf("meta-data file: package %d out of bounds", i)
		}
		blob := data[off : off+l]
		pd, err := DecodePackage(blob)
		if err != nil {
			return nil, fmt.Errorf("meta-data file: package %d: %w", i, err)
		}
		m.Pkgs = append(m.Pkgs, Pkg{Blob: blob, Hash: pd.Hash, Path: pd.Path, PkgID: -1, Mode: m.Mode, Gran: m.Gran})
	}
	return m, nil
}

// Unit is one coverable unit (a basic block) of a function: its source range and
// statement count. A unit's counter is counters[i] of its function.
type Unit struct {
	StLine, StCol, EnLine, EnCol uint32
	NxStmts                      uint32
}

// Func is one function of a package's meta-data.
type Func struct {
	Name  string
	File  string
	Units []Unit
	Lit   bool // a function literal
}

// Package is a decoded package meta-data blob.
type Package struct {
	Path, Name, Module string
	Hash               [16]byte
	Funcs              []Func
}

// DecodePackage reads one package's meta-data blob: a header, the functions' offsets,
// a string table, and per function its unit count, name, file, units and literal flag
// (ULEB128 numbers).
func DecodePackage(blob []byte) (*Package, error) {
	le := binary.LittleEndian
	if len(blob) < pkgHeaderSize {
		return nil, errors.New("package meta-data too short")
	}
	if int(le.Uint32(blob)) != len(blob) {
		return nil, errors.New("package meta-data length does not match its header")
	}
	nfuncs := le.Uint32(blob[40:])
	if uint64(pkgHeaderSize)+4*uint64(nfuncs) > uint64(len(blob)) {
		return nil, errors.New("package meta-data: bad function count")
	}
	r := &reader{b: blob, off: pkgHeaderSize + 4*int(nfuncs)}
	strs, err := r.strtab()
	if err != nil {
		return nil, err
	}
	str := func(i uint64) (string, error) {
		if i >= uint64(len(strs)) {
			return "", fmt.Errorf("string index %d out of range", i)
		}
		return strs[i], nil
	}
	p := &Package{}
	copy(p.Hash[:], blob[16:32])
	if p.Name, err = str(uint64(le.Uint32(blob[4:]))); err != nil {
		return nil, err
	}
	if p.Path, err = str(uint64(le.Uint32(blob[8:]))); err != nil {
		return nil, err
	}
	if p.Module, err = str(uint64(le.Uint32(blob[12:]))); err != nil {
		return nil, err
	}
	for f := 0; f < int(nfuncs); f++ {
		r.off = int(le.Uint32(blob[pkgHeaderSize+4*f:]))
		if r.off > len(blob) {
			return nil, fmt.Errorf("function %d: offset out of bounds", f)
		}
		nu, name, file := r.uleb(), r.uleb(), r.uleb()
		if r.err != nil || nu > uint64(len(blob)) {
			return nil, fmt.Errorf("function %d: malformed", f)
		}
		fn := Func{Units: make([]Unit, 0, nu)}
		if fn.Name, err = str(name); err != nil {
			return nil, err
		}
		if fn.File, err = str(file); err != nil {
			return nil, err
		}
		for u := uint64(0); u < nu; u++ {
			fn.Units = append(fn.Units, Unit{StLine: uint32(r.uleb()), StCol: uint32(r.uleb()),
				EnLine: uint32(r.uleb()), EnCol: uint32(r.uleb()), NxStmts: uint32(r.uleb())})
		}
		fn.Lit = r.uleb() != 0
		if r.err != nil {
			return nil, fmt.Errorf("function %d: %w", f, r.err)
		}
		p.Funcs = append(p.Funcs, fn)
	}
	return p, nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if r.off >= len(r.b) || shift > 63 {
			if r.err == nil {
				r.err = errors.New("truncated number")
			}
			return 0
		}
		c := r.b[r.off]
		r.off++
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) strtab() ([]string, error) {
	n := r.uleb()
	if n > uint64(len(r.b)) {
		return nil, errors.New("bad string table")
	}
	out := make([]string, 0, n)
	for i := uint64(0); i < n; i++ {
		l := r.uleb()
		if r.err != nil || l > uint64(len(r.b)-r.off) {
			return nil, errors.New("bad string table")
		}
		out = append(out, string(r.b[r.off:r.off+int(l)]))
		r.off += int(l)
	}
	return out, r.err
}

func appendUleb(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// FuncCounters are the counters of one function: Pkg is the package's index in the
// meta-data file, Func the function's index in the package.
type FuncCounters struct {
	Pkg, Func uint32
	Counters  []uint32
}

// EncodeCounterFile renders a counter file with one segment: header, segment header,
// string table, the args (sorted by key), and the functions' counters as ULEB128
// numbers, then the footer. Functions are written in the order given.
func EncodeCounterFile(hash [16]byte, args map[string]string, funcs []FuncCounters) []byte {
	b := append([]byte(nil), counterMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, 1) // version
	b = append(b, hash[:]...)
	b = append(b, 2, 0, 0, 0, 0, 0, 0, 0) // ULEB128 counters, little-endian, padding

	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	strs := []string{""}
	index := map[string]uint64{"": 0}
	intern := func(s string) uint64 {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = uint64(len(strs))
		strs = append(strs, s)
		return index[s]
	}
	var kv []uint64
	for _, k := range keys {
		kv = append(kv, intern(k), intern(args[k]))
	}
	var st []byte
	st = appendUleb(st, uint64(len(strs)))
	for _, s := range strs {
		st = appendUleb(st, uint64(len(s)))
		st = append(st, s...)
	}
	var ab []byte
	ab = appendUleb(ab, uint64(len(keys)))
	for _, i := range kv {
		ab = appendUleb(ab, i)
	}
	for (segmentHeaderSize+len(st)+len(ab))%4 != 0 {
		ab = append(ab, 0)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(funcs)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(st)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ab)))
	b = append(b, st...)
	b = append(b, ab...)
	for _, f := range funcs {
		b = appendUleb(b, uint64(len(f.Counters)))
		b = appendUleb(b, uint64(f.Pkg))
		b = appendUleb(b, uint64(f.Func))
		for _, c := range f.Counters {
			b = appendUleb(b, uint64(c))
		}
	}
	b = append(b, counterMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 1) // one segment
	b = binary.LittleEndian.AppendUint32(b, 0)
	return b
}

// CounterFileName is a counter file's name for a meta-data hash; n tells apart the
// files of one directory (it stands where Go puts the process ID and the time).
func CounterFileName(hash [16]byte, n int) string {
	return fmt.Sprintf("covcounters.%s.%d.%d", hexHash(hash), n, 0)
}
