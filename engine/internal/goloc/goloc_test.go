package goloc

import (
	"bufio"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

var (
	compCache = wazero.NewCompilationCache()
	buildOnce sync.Once
	guestWasm []byte
	buildErr  error
)

// guest builds testdata/guest for wasip1 the way the engine builds nodes (-trimpath).
func guest(t testing.TB) []byte {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "goloc")
		if err != nil {
			buildErr = err
			return
		}
		out := filepath.Join(dir, "guest.wasm")
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if p, err := exec.LookPath("go"); err == nil {
			gobin = p
		}
		cmd := exec.Command(gobin, "build", "-trimpath", "-buildvcs=false", "-o", out, "./testdata/guest")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = err
			guestWasm = b
			return
		}
		guestWasm, buildErr = os.ReadFile(out)
		os.RemoveAll(dir)
	})
	if buildErr != nil {
		t.Fatalf("building guest: %v\n%s", buildErr, guestWasm)
	}
	return guestWasm
}

// markers returns the line of each "LOC:name" marker in the guest source.
func markers(t *testing.T) map[string]int {
	f, err := os.Open("testdata/guest/main.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]int{}
	s := bufio.NewScanner(f)
	for line := 1; s.Scan(); line++ {
		if _, name, ok := strings.Cut(s.Text(), "// LOC:"); ok {
			m[strings.TrimSpace(name)] = line
		}
	}
	return m
}

type call struct {
	host string
	loc  string
	ok   bool
}

// recorder is a FunctionListener on the WASI host functions that locates each call.
type recorder struct {
	tab   *Table
	calls []call
}

func (r *recorder) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if def.GoFunction() == nil { // only host functions
		return nil
	}
	return r
}

func (r *recorder) Before(ctx context.Context, mod api.Module, def api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	loc, ok := r.tab.Locate(mod)
	r.calls = append(r.calls, call{def.Name(), loc.String(), ok})
}
func (r *recorder) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}
func (r *recorder) Abort(context.Context, api.Module, api.FunctionDefinition, error)    {}

// run runs the guest under wazero's own WASI with a recorder, plus stub host functions
// for the "seedfall" imports (sim) that also locate their caller.
func run(t testing.TB, wasm []byte, cfg wazero.RuntimeConfig) []call {
	tab, err := Load(wasm)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{tab: tab}
	ctx := context.Background()
	lctx := experimental.WithFunctionListenerFactory(ctx, rec)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg.WithCompilationCache(compCache))
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.NewBuilder(rt).Instantiate(lctx); err != nil {
		t.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	b := rt.NewHostModuleBuilder("seedfall")
	for _, def := range cm.ImportedFunctions() {
		if mod, name, _ := def.Import(); mod == "seedfall" {
			b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
				loc, ok := tab.Locate(mod)
				rec.calls = append(rec.calls, call{name, loc.String(), ok})
				for i := range stack {
					stack[i] = 0
				}
			}), def.ParamTypes(), def.ResultTypes()).Export(name)
		}
	}
	if _, err := b.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mc := wazero.NewModuleConfig().WithFSConfig(wazero.NewFSConfig().WithDirMount(dir, "/data")).
		WithStdout(os.Stderr).WithStderr(os.Stderr).WithEnv("SEEDFALL_NODE", "n1")
	_, err = rt.InstantiateModule(ctx, cm, mc)
	if ee, ok := err.(*sys.ExitError); err != nil && !(ok && ee.ExitCode() == 0) {
		t.Fatal(err)
	}
	return rec.calls
}

func TestLoad(t *testing.T) {
	tab, err := Load(guest(t))
	if err != nil {
		t.Fatal(err)
	}
	if tab.NumFuncs() < 1000 {
		t.Fatalf("only %d functions", tab.NumFuncs())
	}
	// Every function's pclntab name agrees with the wasm name section.
	for i := 0; i < tab.NumFuncs(); i++ {
		pc := tab.tab.entries[i]
		if pc&0xffff != 0 {
			t.Fatalf("func %d entry %#x is not a wasm function start", i, pc)
		}
		if g, w := tab.FuncName(pc), tab.WasmName(pc); norm(g) != norm(w) {
			t.Fatalf("func %d: pclntab name %q, name section %q", i, g, w)
		}
	}
	// The way back, as a trap's wasm stack trace names a function.
	pc := tab.tab.entries[tab.NumFuncs()/2]
	if g, back := tab.FuncName(pc), tab.FuncOfWasmName(tab.WasmName(pc)); g != back {
		t.Errorf("FuncOfWasmName(%q) = %q, want %q", tab.WasmName(pc), back, g)
	}
	if got := tab.FuncOfWasmName("main.main"); got != "main.main" {
		t.Errorf("FuncOfWasmName(main.main) = %q", got)
	}
	for _, n := range []string{"no.such_function", ""} {
		if got := tab.FuncOfWasmName(n); got != "" {
			t.Errorf("FuncOfWasmName(%q) = %q, want none", n, got)
		}
	}
}

// norm maps the characters the linker may rewrite in name-section names to '_'.
func norm(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

func TestLocate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  wazero.RuntimeConfig
	}{{"compiler", wazero.NewRuntimeConfigCompiler()}, {"interpreter", wazero.NewRuntimeConfigInterpreter()}} {
		t.Run(c.name, func(t *testing.T) {
			calls := run(t, guest(t), c.cfg)
			mk := markers(t)
			at := func(marker string) string {
				line, ok := mk[marker]
				if !ok {
					t.Fatalf("no marker %s", marker)
				}
				return "testdata/guest/main.go:" + strconv.Itoa(line) + " "
			}
			want := []struct{ host, marker, fn string }{
				{"path_open", "writefile", "main.main"},
				{"fd_write", "writefile", "main.main"},
				{"path_open", "create", "main.main"},
				{"fd_write", "write", "main.main"},
				{"fd_sync", "sync", "main.main"},
				{"fd_sync", "inline", "main.syncInline"},
				{"fd_sync", "deep", "main.deep"},
				{"fd_write", "gowrite", "main.main.func1"},
				{"path_rename", "rename", "main.main.func1"},
				{"path_rename", "rename2", "main.main.func1"},
				{"assert", "always", "main.main"},
				{"fd_write", "stdout", "main.main"},
			}
			seen := map[string]bool{}
			for _, c := range calls {
				seen[c.host+" "+c.loc] = true
			}
			for _, w := range want {
				key := w.host + " " + at(w.marker) + w.fn
				if !seen[key] {
					t.Errorf("no call %q", key)
				}
			}
			if t.Failed() {
				for _, c := range calls {
					t.Logf("%s -> %q %v", c.host, c.loc, c.ok)
				}
			}
			// Deterministic: a second run locates every call the same way.
			again := run(t, guest(t), c.cfg)
			if len(again) != len(calls) {
				t.Fatalf("second run: %d calls, first %d", len(again), len(calls))
			}
			for i := range calls {
				if calls[i] != again[i] {
					t.Fatalf("call %d: %v then %v", i, calls[i], again[i])
				}
			}
		})
	}
}

func TestShort(t *testing.T) {
	if g := ShortFile("github.com/seedfall/seedfall/examples/kvlog/kvstore/kvstore.go"); g != "kvlog/kvstore/kvstore.go" {
		t.Error(g)
	}
	if g := ShortFunc("github.com/seedfall/seedfall/examples/kvlog/kvstore.(*Store).Put"); g != "kvstore.(*Store).Put" {
		t.Error(g)
	}
	if g := ShortFunc("example.com/a.F[go.shape.*example.com/b.T]"); g != "a.F[go.shape.*example.com/b.T]" {
		t.Error(g)
	}
	for pkg, std := range map[string]bool{"os": true, "internal/poll": true, "vendor/golang.org/x/net/dns/dnsmessage": true,
		"main": false, "kvlog/store": false, "github.com/seedfall/seedfall/sim": false} {
		if isStd(pkg) != std {
			t.Errorf("isStd(%q) = %v", pkg, !std)
		}
	}
	for name, pkg := range map[string]string{
		"github.com/a/b.(*T).M":                      "github.com/a/b",
		"main.main.func1":                            "main",
		"os.WriteFile":                               "os",
		"example.com/a.F[go.shape.*example.com/b.T]": "example.com/a",
		"internal/poll.(*FD).Write":                  "internal/poll",
	} {
		if g := funcPackage(name); g != pkg {
			t.Errorf("funcPackage(%q) = %q", name, g)
		}
	}
}

// TestGofuncOf: moduledata.gofunc is found at go1.26's offset and at go1.27's, with the
// linker's padding after pclntable, and a layout with neither is an error naming it.
func TestGofuncOf(t *testing.T) {
	md := func(at int, gofunc uint64, other map[int]uint64) []byte {
		b := make([]byte, 400)
		binary.LittleEndian.PutUint64(b[mdPclntable:], 0x92de0)   // pclntable's data
		binary.LittleEndian.PutUint64(b[mdPclntable+8:], 0x2f618) // and length: end 0xc23f8
		for off, v := range other {
			binary.LittleEndian.PutUint64(b[off:], v)
		}
		binary.LittleEndian.PutUint64(b[at:], gofunc)
		return b
	}
	for _, tc := range []struct {
		name string
		md   []byte
		want uint64
	}{
		{"go1.26", md(320, 0xc23f8, map[int]uint64{344: 1}), 0xc23f8},
		{"go1.26, padded", md(320, 0xc2400, map[int]uint64{344: 1}), 0xc2400},
		{"go1.27", md(344, 0xc23f8, map[int]uint64{320: 0x30bd0}), 0xc23f8},
		{"go1.27, padded", md(344, 0xc2420, map[int]uint64{320: 0x30bd0}), 0xc2420},
		{"unknown", md(352, 0xc23f8, map[int]uint64{320: 0x30bd0, 344: 0x9c0}), 0},
	} {
		got, err := gofuncOf(tc.md)
		if tc.want == 0 {
			if err == nil || !strings.Contains(err.Error(), "unknown layout") {
				t.Errorf("%s: %#x, %v; want an unknown-layout error", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %#x, %v; want %#x", tc.name, got, err, tc.want)
		}
	}
}
