package overlay

import (
	"strings"
	"testing"
)

func uleb(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}

func wname(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func section(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(body)))...), body...)
}

// tinyModule builds a module by hand: a custom section, a type section,
// an import section with one import of each kind, and a code-less tail.
func tinyModule(imports ...[]byte) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, section(0, append(wname("producers"), 1, 2, 3))...)
	// type section: one func type (i32, i32) -> i32
	m = append(m, section(1, []byte{1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f})...)
	body := uleb(uint64(len(imports)))
	for _, im := range imports {
		body = append(body, im...)
	}
	m = append(m, section(2, body)...)
	// function section (declares nothing) to show parsing stops.
	m = append(m, section(3, []byte{0})...)
	return m
}

func imp(mod, name string, desc ...byte) []byte {
	return append(append(wname(mod), wname(name)...), desc...)
}

func TestImportsHandMade(t *testing.T) {
	m := tinyModule(
		imp("wasi_snapshot_preview1", "fd_write", KindFunc, 0),
		imp("seedfall", "sock_dial", KindFunc, 0x80, 0x00), // type index 0, padded LEB128
		imp("env", "table", KindTable, 0x70, 0x01, 1, 0x90, 0x03),
		imp("env", "memory", KindMemory, 0x00, 0x02),
		imp("env", "mem64", KindMemory, 0x05, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
		imp("env", "g", KindGlobal, 0x7f, 0x01),
		imp("env", "tag", KindTag, 0x00, 0),
	)
	got, err := Imports(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []Import{
		{"wasi_snapshot_preview1", "fd_write", KindFunc},
		{"seedfall", "sock_dial", KindFunc},
		{"env", "table", KindTable},
		{"env", "memory", KindMemory},
		{"env", "mem64", KindMemory},
		{"env", "g", KindGlobal},
		{"env", "tag", KindTag},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("import %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if err := VerifyImports(m); err != nil {
		t.Errorf("VerifyImports: %v", err)
	}

	noSeedfall := tinyModule(imp("wasi_snapshot_preview1", "fd_write", KindFunc, 0))
	err = VerifyImports(noSeedfall)
	if err == nil || !strings.Contains(err.Error(), "wasi_snapshot_preview1") {
		t.Errorf("VerifyImports without seedfall imports: %v", err)
	}

	// Other seedfall imports (interleave's runtime, coverage) do not prove the net
	// overlay applied.
	onlyRuntime := tinyModule(imp("wasi_snapshot_preview1", "fd_write", KindFunc, 0), imp("seedfall", "sched_pick", KindFunc, 0))
	if err := VerifyImports(onlyRuntime); err == nil || !strings.Contains(err.Error(), "sock_") {
		t.Errorf("VerifyImports with only seedfall.sched_pick: %v", err)
	}

	// A module without an import section has no imports.
	bare := []byte("\x00asm\x01\x00\x00\x00")
	bare = append(bare, section(1, []byte{0})...)
	if got, err := Imports(bare); err != nil || len(got) != 0 {
		t.Errorf("bare module: %v, %v", got, err)
	}
	if err := VerifyImports(bare); err == nil {
		t.Error("VerifyImports passed a module without imports")
	}
}

func TestImportsMalformed(t *testing.T) {
	good := tinyModule(imp("seedfall", "sock_listen", KindFunc, 0))
	cases := map[string][]byte{
		"empty":        nil,
		"bad magic":    []byte("\x00asn\x01\x00\x00\x00"),
		"bad version":  []byte("\x00asm\x02\x00\x00\x00"),
		"short header": []byte("\x00asm\x01"),
		"truncated":    good[:len(good)-8],
		"unknown kind": tinyModule(imp("seedfall", "x", 9, 0)),
		"leb overflow": tinyModule(imp("seedfall", "x", KindFunc, 0xff, 0xff, 0xff, 0xff, 0x7f)),
		"section overrun": append([]byte("\x00asm\x01\x00\x00\x00"),
			2, 0x10, 1),
	}
	for name, m := range cases {
		if _, err := Imports(m); err == nil {
			t.Errorf("%s: no error", name)
		}
		if err := VerifyImports(m); err == nil {
			t.Errorf("%s: VerifyImports passed", name)
		}
	}
	// Trailing bytes inside the import section.
	m := []byte("\x00asm\x01\x00\x00\x00")
	body := append(uleb(1), imp("seedfall", "sock_addr", KindFunc, 0)...)
	body = append(body, 0xaa)
	m = append(m, section(2, body)...)
	if _, err := Imports(m); err == nil {
		t.Error("trailing bytes: no error")
	}
}

func TestNodeIP(t *testing.T) {
	// FNV-1a("server") = 0x40ac3dd2 -> low 24 bits 0xac3dd2.
	if got := NodeIP("server").String(); got != "10.172.61.210" {
		t.Errorf("NodeIP(server) = %s", got)
	}
	if NodeIP("n1") == NodeIP("n2") {
		t.Error("n1 and n2 collide")
	}
	if !NodeIP("x").Is4() || NodeIP("x").As4()[0] != 10 {
		t.Errorf("NodeIP(x) = %s, want 10/8", NodeIP("x"))
	}
	m, err := NodeIPs([]string{"n3", "n1", "n2", "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m[NodeIP("n2")] != "n2" {
		t.Errorf("NodeIPs = %v", m)
	}
}
