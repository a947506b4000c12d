package overlay

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// HostModule is the name of seedfall's wasm host module.
const HostModule = "seedfall"

// Import kinds (the wasm binary format's importdesc tags).
const (
	KindFunc   byte = 0
	KindTable  byte = 1
	KindMemory byte = 2
	KindGlobal byte = 3
	KindTag    byte = 4
)

// Import is one entry of a wasm module's import section.
type Import struct {
	Module string
	Name   string
	Kind   byte // KindFunc, KindTable, ...
}

func (im Import) String() string { return im.Module + "." + im.Name }

// Imports parses the import section of a wasm binary module.
func Imports(wasm []byte) ([]Import, error) {
	r := &reader{b: wasm}
	magic, err := r.bytes(4)
	if err != nil || string(magic) != "\x00asm" {
		return nil, errors.New("wasm: not a wasm binary (bad magic)")
	}
	version, err := r.bytes(4)
	if err != nil {
		return nil, errors.New("wasm: truncated header")
	}
	if string(version) != "\x01\x00\x00\x00" {
		return nil, fmt.Errorf("wasm: unsupported binary version % x", version)
	}
	for r.off < len(r.b) {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("wasm: section %d size: %w", id, err)
		}
		body, err := r.bytes(int(size))
		if err != nil {
			return nil, fmt.Errorf("wasm: section %d: %w", id, err)
		}
		if id == 2 {
			return parseImports(body)
		}
		// Non-custom sections come in increasing id order; the import
		// section (2) comes after type (1), so a later one means none
		// (custom sections, id 0, may appear anywhere).
		if id > 2 {
			break
		}
	}
	return nil, nil
}

func parseImports(body []byte) ([]Import, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, fmt.Errorf("wasm: import count: %w", err)
	}
	var out []Import
	for i := uint32(0); i < n; i++ {
		mod, err := r.name()
		if err != nil {
			return nil, fmt.Errorf("wasm: import %d module: %w", i, err)
		}
		name, err := r.name()
		if err != nil {
			return nil, fmt.Errorf("wasm: import %d name: %w", i, err)
		}
		kind, err := r.byte()
		if err != nil {
			return nil, fmt.Errorf("wasm: import %d kind: %w", i, err)
		}
		switch kind {
		case KindFunc:
			_, err = r.u32() // type index
		case KindTable:
			if _, err = r.byte(); err == nil { // reftype
				err = r.limits()
			}
		case KindMemory:
			err = r.limits()
		case KindGlobal:
			if _, err = r.byte(); err == nil { // valtype
				_, err = r.byte() // mutability
			}
		case KindTag:
			if _, err = r.byte(); err == nil { // attribute
				_, err = r.u32() // type index
			}
		default:
			return nil, fmt.Errorf("wasm: import %d (%s.%s): unknown kind %d", i, mod, name, kind)
		}
		if err != nil {
			return nil, fmt.Errorf("wasm: import %d (%s.%s): %w", i, mod, name, err)
		}
		out = append(out, Import{Module: mod, Name: name, Kind: kind})
	}
	if r.off != len(r.b) {
		return nil, errors.New("wasm: trailing bytes in import section")
	}
	return out, nil
}

// VerifyImports returns an error unless the module imports a socket call
// (sock_*) of the seedfall host module. A build with the net overlay that
// does not import one was built without it: most likely the overlay's keys
// did not match the toolchain's GOROOT, which go build ignores silently.
// (A program that never creates sockets does not import them either.)
// Other seedfall imports (coverage's, interleave's sched_pick) do not count:
// they come from other overlays.
func VerifyImports(wasm []byte) error {
	imps, err := Imports(wasm)
	if err != nil {
		return err
	}
	mods := map[string]bool{}
	for _, im := range imps {
		if im.Module == HostModule && strings.HasPrefix(im.Name, "sock_") {
			return nil
		}
		mods[im.Module] = true
	}
	names := make([]string, 0, len(mods))
	for m := range mods {
		names = append(names, m)
	}
	sort.Strings(names)
	return fmt.Errorf("net overlay not applied: the module imports no socket call (sock_*) from %q (imports from: %s); "+
		"the overlay's keys must be under the building toolchain's `go env GOROOT` (go build silently ignores keys that match no file), "+
		"and the program must use package net's sockets", HostModule, strings.Join(names, ", "))
}

type reader struct {
	b   []byte
	off int
}

var errTruncated = errors.New("truncated")

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errTruncated
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

// uleb reads an unsigned LEB128 number of at most bits bits.
func (r *reader) uleb(bits uint) (uint64, error) {
	var v uint64
	var shift uint
	for {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift >= bits || (bits-shift < 7 && uint64(c&0x7f)>>(bits-shift) != 0) {
			return 0, errors.New("LEB128 overflow")
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
		shift += 7
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// limits skips a table or memory limits (with the threads and memory64
// flag bits).
func (r *reader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("bad limits flags %#x", flags)
	}
	bits := uint(32)
	if flags&4 != 0 {
		bits = 64
	}
	if _, err := r.uleb(bits); err != nil {
		return err
	}
	if flags&1 != 0 {
		if _, err := r.uleb(bits); err != nil {
			return err
		}
	}
	return nil
}
