package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Instantiating from a memory image.
//
// A Go wasm module carries its initialized globals (type descriptors, the pclntab, string
// literals, ...) as thousands of active data segments, and wazero evaluates each
// segment's offset expression and copies it into a fresh memory on every
// InstantiateModule. A sweep instantiates thousands of guests of the same few modules,
// so seedfall applies the segments once per module into a template (the module's memory
// image) and instantiates a rewritten copy of the module whose data section is empty,
// over a memory that already holds the template: a copy-on-write mapping of it where the
// platform has one (memimage_linux.go), otherwise the plain path.
//
// The guest cannot tell the difference: its memory holds the same bytes at the same
// addresses when _start runs, and it has the same size. Only active segments at
// constant offsets into memory 0 are handled, which is all the Go toolchain emits;
// anything else (a passive segment, an imported memory, an offset from a global) keeps
// the module on the plain path.

// memImage is a module's rewritten binary and its initial memory contents.
type memImage struct {
	wasm []byte // the module with zero data segments
	init []byte // memory bytes [0, len(init)) after the data segments; the rest is zero
	// minBytes is the memory's initial size: the image always fits inside it.
	minBytes uint64
}

// errNoImage says why a module stays on the plain path.
var errNoImage = errors.New("no memory image")

const (
	secMemory    = 5
	secData      = 11
	secDataCount = 12
	pageSize     = 65536
)

// buildImage splits a wasm binary into a module without active data segments and the
// memory image those segments make. It returns an error wrapping errNoImage when the
// module does something the image path does not reproduce exactly.
func buildImage(wasm []byte) (*memImage, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: not a wasm binary", errNoImage)
	}
	out := append([]byte(nil), wasm[:8]...)
	img := &memImage{}
	haveMem, haveData := false, false
	type seg struct {
		off  uint32
		data []byte
	}
	var segs []seg
	p := 8
	for p < len(wasm) {
		id := wasm[p]
		size, n := binary.Uvarint(wasm[p+1:])
		if n <= 0 || uint64(len(wasm)-p-1-n) < size {
			return nil, fmt.Errorf("%w: malformed section at byte %d", errNoImage, p)
		}
		body := wasm[p+1+n : p+1+n+int(size)]
		whole := wasm[p : p+1+n+int(size)]
		p += 1 + n + int(size)
		switch id {
		case secMemory:
			count, k := binary.Uvarint(body)
			if k <= 0 || count != 1 || len(body) < k+2 {
				return nil, fmt.Errorf("%w: %d memories", errNoImage, count)
			}
			if flags := body[k]; flags > 1 { // shared or memory64
				return nil, fmt.Errorf("%w: memory flags %#x", errNoImage, flags)
			}
			min, m := binary.Uvarint(body[k+1:])
			if m <= 0 {
				return nil, fmt.Errorf("%w: malformed memory section", errNoImage)
			}
			img.minBytes = min * pageSize
			haveMem = true
			out = append(out, whole...)
		case secDataCount:
			// Kept consistent with the rewritten data section: zero segments. Code that
			// names a segment (memory.init, data.drop) then fails to compile, and the
			// module stays on the plain path.
			out = append(out, secDataCount, 1, 0)
		case secData:
			haveData = true
			count, k := binary.Uvarint(body)
			if k <= 0 {
				return nil, fmt.Errorf("%w: malformed data section", errNoImage)
			}
			q := k
			for i := uint64(0); i < count; i++ {
				if q >= len(body) {
					return nil, fmt.Errorf("%w: data segment %d truncated", errNoImage, i)
				}
				if body[q] != 0 { // passive (1) or explicit memory index (2)
					return nil, fmt.Errorf("%w: data segment %d has mode %d", errNoImage, i, body[q])
				}
				q++
				if q >= len(body) || body[q] != 0x41 { // i32.const
					return nil, fmt.Errorf("%w: data segment %d offset is not i32.const", errNoImage, i)
				}
				q++
				off, m := sleb32(body[q:])
				if m <= 0 || q+m >= len(body) || body[q+m] != 0x0b { // end
					return nil, fmt.Errorf("%w: data segment %d offset is not a constant", errNoImage, i)
				}
				q += m + 1
				l, m2 := binary.Uvarint(body[q:])
				if m2 <= 0 || uint64(len(body)-q-m2) < l {
					return nil, fmt.Errorf("%w: data segment %d truncated", errNoImage, i)
				}
				q += m2
				segs = append(segs, seg{uint32(off), body[q : q+int(l)]})
				q += int(l)
			}
			// An empty data section: count 0.
			out = append(out, secData, 1, 0)
		default:
			out = append(out, whole...)
		}
	}
	if !haveMem {
		return nil, fmt.Errorf("%w: no memory section (imported memory?)", errNoImage)
	}
	if !haveData || len(segs) == 0 {
		return nil, fmt.Errorf("%w: no data segments", errNoImage)
	}
	var end uint64
	for _, s := range segs {
		end = max(end, uint64(s.off)+uint64(len(s.data)))
	}
	if end > img.minBytes {
		// wazero fails such a module at instantiation; keep its error.
		return nil, fmt.Errorf("%w: data ends at %d, beyond the initial memory (%d bytes)", errNoImage, end, img.minBytes)
	}
	img.init = make([]byte, end)
	for _, s := range segs { // in order: a later segment overwrites an earlier one
		copy(img.init[s.off:], s.data)
	}
	img.wasm = out
	return img, nil
}

// sleb32 decodes a signed LEB128 value of at most 32 bits.
func sleb32(b []byte) (int32, int) {
	var v int64
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return int32(v), i + 1
		}
	}
	return 0, 0
}
