package cover

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// pkgBlob builds a package meta-data blob the way the compiler lays it out: header,
// function offsets, string table, functions.
func pkgBlob(path string, funcs []Func) []byte {
	strs := []string{"", "p", path, "mod"}
	idx := func(s string) uint64 {
		for i, x := range strs {
			if x == s {
				return uint64(i)
			}
		}
		strs = append(strs, s)
		return uint64(len(strs) - 1)
	}
	var bodies [][]byte
	for _, f := range funcs {
		var b []byte
		b = appendUleb(b, uint64(len(f.Units)))
		b = appendUleb(b, idx(f.Name))
		b = appendUleb(b, idx(f.File))
		for _, u := range f.Units {
			for _, v := range []uint32{u.StLine, u.StCol, u.EnLine, u.EnCol, u.NxStmts} {
				b = appendUleb(b, uint64(v))
			}
		}
		lit := uint64(0)
		if f.Lit {
			lit = 1
		}
		bodies = append(bodies, appendUleb(b, lit))
	}
	var st []byte
	st = appendUleb(st, uint64(len(strs)))
	for _, s := range strs {
		st = append(appendUleb(st, uint64(len(s))), s...)
	}
	off := pkgHeaderSize + 4*len(funcs) + len(st)
	var offs []byte
	for _, b := range bodies {
		offs = binary.LittleEndian.AppendUint32(offs, uint32(off))
		off += len(b)
	}
	h := make([]byte, pkgHeaderSize)
	binary.LittleEndian.PutUint32(h[0:], uint32(off))
	binary.LittleEndian.PutUint32(h[4:], 1)
	binary.LittleEndian.PutUint32(h[8:], 2)
	binary.LittleEndian.PutUint32(h[12:], 3)
	copy(h[16:32], path)
	binary.LittleEndian.PutUint32(h[40:], uint32(len(funcs)))
	out := append(append(h, offs...), st...)
	for _, b := range bodies {
		out = append(out, b...)
	}
	return out
}

// TestMetaFileRoundTrip: a meta-data file written by EncodeMetaFile reads back with
// its hash, mode and packages, and each package's functions and units.
func TestMetaFileRoundTrip(t *testing.T) {
	fns := []Func{
		{Name: "main", File: "x/main.go", Units: []Unit{{3, 13, 5, 2, 2}, {7, 1, 9, 300, 1}}},
		{Name: "func1", File: "x/main.go", Units: []Unit{{4, 2, 4, 20, 1}}, Lit: true},
	}
	var pkgs []Pkg
	for _, path := range []string{"example.com/x", "example.com/y"} {
		b := pkgBlob(path, fns)
		var h [16]byte
		copy(h[:], b[16:32])
		pkgs = append(pkgs, Pkg{Blob: b, Hash: h, Path: path, PkgID: -1, Mode: ModeCount, Gran: GranPerBlock})
	}
	m := &Meta{Hash: MetaHash(pkgs, ModeCount, GranPerBlock), Mode: ModeCount, Gran: GranPerBlock, Pkgs: pkgs}
	data := m.EncodeMetaFile()
	got, err := DecodeMetaFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != m.Hash || got.Mode != ModeCount || got.Gran != GranPerBlock || len(got.Pkgs) != 2 {
		t.Fatalf("read back %+v", got)
	}
	for i, p := range got.Pkgs {
		if !bytes.Equal(p.Blob, pkgs[i].Blob) || p.Path != pkgs[i].Path {
			t.Errorf("package %d: %q, want %q", i, p.Path, pkgs[i].Path)
		}
		d, err := DecodePackage(p.Blob)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Funcs) != 2 || d.Funcs[0].Name != "main" || d.Funcs[0].Units[1] != fns[0].Units[1] || !d.Funcs[1].Lit || d.Module != "mod" {
			t.Errorf("package %d decoded as %+v", i, d)
		}
	}
	if MetaHash(pkgs[:1], ModeCount, GranPerBlock) == m.Hash || MetaHash(pkgs, ModeSet, GranPerBlock) == m.Hash {
		t.Errorf("the meta hash ignores the packages or the mode")
	}
}

// TestDecodeDamaged: truncated or corrupted files are errors, never panics.
func TestDecodeDamaged(t *testing.T) {
	fns := []Func{{Name: "f", File: "a.go", Units: []Unit{{1, 1, 2, 2, 1}}}}
	b := pkgBlob("example.com/x", fns)
	m := &Meta{Mode: ModeCount, Gran: GranPerBlock, Pkgs: []Pkg{{Blob: b}}}
	data := m.EncodeMetaFile()
	for n := 0; n < len(data); n++ {
		if _, err := DecodeMetaFile(data[:n]); err == nil {
			t.Fatalf("a file cut at %d of %d bytes reads without error", n, len(data))
		}
	}
	for i := range data {
		d := append([]byte(nil), data...)
		d[i] ^= 0xff
		DecodeMetaFile(d) // must not panic
	}
	for n := 0; n < len(b); n++ {
		if _, err := DecodePackage(b[:n]); err == nil {
			t.Fatalf("a package blob cut at %d of %d bytes reads without error", n, len(b))
		}
	}
}

// FuzzDecodeMetaFile: no input makes the decoder panic.
func FuzzDecodeMetaFile(f *testing.F) {
	b := pkgBlob("example.com/x", []Func{{Name: "f", File: "a.go", Units: []Unit{{1, 1, 2, 2, 1}}}})
	f.Add((&Meta{Mode: ModeCount, Gran: GranPerBlock, Pkgs: []Pkg{{Blob: b}}}).EncodeMetaFile())
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := DecodeMetaFile(data); err == nil {
			for _, p := range m.Pkgs {
				DecodePackage(p.Blob)
			}
		}
	})
}
