package goloc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// image is the initial linear memory as the module's data section describes it, flat
// from the lowest to the highest initialized address (the linker splits segments at runs
// of zeroes; the gaps are zero here too). The pclntab, moduledata and inline trees are
// read-only after start-up, so the initial image is all Locate needs besides the stack.
type image struct {
	base uint64
	data []byte
}

// slice returns n bytes at addr.
func (m *image) slice(addr, n uint64) ([]byte, bool) {
	if addr < m.base || addr-m.base+n > uint64(len(m.data)) {
		return nil, false
	}
	off := addr - m.base
	return m.data[off : off+n], true
}

// module is what goloc needs from a wasm binary.
type module struct {
	numFuncImports uint32
	mem            image
	segs           []segment
	names          map[uint32]string // function index -> name (name section)
}

type reader struct {
	b   []byte
	off int
	err error
}

type segment struct {
	addr uint64
	data []byte
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail("wasm: unexpected end at %d", r.off)
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
		shift += 7
		if shift > 63 {
			r.fail("wasm: bad leb128")
			return 0
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
		if shift > 63 {
			r.fail("wasm: bad leb128")
			return 0
		}
	}
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if uint64(len(r.b)-r.off) < n {
		r.fail("wasm: unexpected end at %d", r.off)
		return nil
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

func (r *reader) name() string { return string(r.bytes(r.uleb())) }

// parseModule reads the import, data and name sections.
func parseModule(wasm []byte) (*module, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("goloc: not a wasm binary")
	}
	m := &module{names: map[uint32]string{}}
	r := &reader{b: wasm, off: 8}
	for r.off < len(r.b) && r.err == nil {
		id := r.byte()
		size := r.uleb()
		body := r.bytes(size)
		if r.err != nil {
			break
		}
		s := &reader{b: body}
		switch id {
		case 0: // custom
			if s.name() == "name" {
				parseNames(s, m)
			}
		case 2: // import
			n := s.uleb()
			for i := uint64(0); i < n && s.err == nil; i++ {
				s.name()
				s.name()
				switch kind := s.byte(); kind {
				case 0: // func
					s.uleb()
					m.numFuncImports++
				case 1: // table
					s.byte()
					skipLimits(s)
				case 2: // memory
					skipLimits(s)
				case 3: // global
					s.byte()
					s.byte()
				default:
					s.fail("wasm: bad import kind %d", kind)
				}
			}
		case 11: // data
			n := s.uleb()
			for i := uint64(0); i < n && s.err == nil; i++ {
				flags := s.uleb()
				var addr int64
				active := true
				switch flags {
				case 0:
				case 2:
					s.uleb() // memory index
				case 1:
					active = false
				default:
					s.fail("wasm: bad data segment flags %d", flags)
				}
				if active {
					if op := s.byte(); op != 0x41 { // i32.const
						s.fail("wasm: data offset is not i32.const")
					}
					addr = s.sleb()
					if op := s.byte(); op != 0x0b {
						s.fail("wasm: data offset expression too long")
					}
				}
				data := s.bytes(s.uleb())
				if active && s.err == nil {
					m.segs = append(m.segs, segment{addr: uint64(uint32(addr)), data: data})
				}
			}
		}
		if s.err != nil {
			return nil, s.err
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(m.segs) == 0 {
		return nil, errors.New("goloc: no data segments")
	}
	lo, hi := m.segs[0].addr, uint64(0)
	for _, s := range m.segs {
		lo = min(lo, s.addr)
		hi = max(hi, s.addr+uint64(len(s.data)))
	}
	if hi-lo > 1<<30 {
		return nil, errors.New("goloc: data segments span more than 1 GiB")
	}
	m.mem = image{base: lo, data: make([]byte, hi-lo)}
	for _, s := range m.segs {
		copy(m.mem.data[s.addr-lo:], s.data)
	}
	m.segs = nil
	return m, nil
}

func skipLimits(s *reader) {
	if flags := s.byte(); flags&1 != 0 {
		s.uleb()
		s.uleb()
	} else {
		s.uleb()
	}
}

func parseNames(s *reader, m *module) {
	for s.off < len(s.b) && s.err == nil {
		id := s.byte()
		sub := &reader{b: s.bytes(s.uleb())}
		if id != 1 {
			continue
		}
		n := sub.uleb()
		for i := uint64(0); i < n && sub.err == nil; i++ {
			idx := sub.uleb()
			m.names[uint32(idx)] = sub.name()
		}
	}
	s.err = nil // a broken name section is not fatal
}

func (m *image) u64(addr uint64) (uint64, bool) {
	b, ok := m.slice(addr, 8)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}
