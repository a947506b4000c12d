package goloc

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// hook is a listener that runs fn inside the host call whose location matches.
type hook struct {
	tab   *Table
	match string // substring of the Location
	fn    func(mod api.Module)
	done  bool
}

func (h *hook) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if def.GoFunction() == nil || def.Name() != "fd_sync" {
		return nil
	}
	return h
}

func (h *hook) Before(ctx context.Context, mod api.Module, def api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if h.done {
		return
	}
	if loc, _ := h.tab.Locate(mod); strings.Contains(loc.String(), h.match) {
		h.done = true
		h.fn(mod)
	}
}
func (h *hook) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}
func (h *hook) Abort(context.Context, api.Module, api.FunctionDefinition, error)    {}

// inHostCall runs fn inside the guest's fd_sync call whose location contains match.
func inHostCall(b testing.TB, tab *Table, match string, fn func(mod api.Module)) {
	ctx := context.Background()
	h := &hook{tab: tab, match: match, fn: fn}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(compCache))
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.NewBuilder(rt).Instantiate(experimental.WithFunctionListenerFactory(ctx, h)); err != nil {
		b.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, guest(b))
	if err != nil {
		b.Fatal(err)
	}
	sb := rt.NewHostModuleBuilder("seedfall")
	for _, def := range cm.ImportedFunctions() {
		if mod, name, _ := def.Import(); mod == "seedfall" {
			sb.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {}),
				def.ParamTypes(), def.ResultTypes()).Export(name)
		}
	}
	if _, err := sb.Instantiate(ctx); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	mc := wazero.NewModuleConfig().WithFSConfig(wazero.NewFSConfig().WithDirMount(dir, "/data")).WithStdout(os.Stderr)
	rt.InstantiateModule(ctx, cm, mc)
	if !h.done {
		b.Fatalf("no fd_sync at %s", match)
	}
}

func BenchmarkLoad(b *testing.B) {
	wasm := guest(b)
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := Load(wasm); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLocate(b *testing.B, match string, cold bool) {
	tab, err := Load(guest(b))
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	inHostCall(b, tab, match, func(mod api.Module) {
		b.StartTimer()
		for i := 0; i < b.N; i++ {
			if cold {
				tab.cache.Clear()
			}
			if _, ok := tab.Locate(mod); !ok {
				b.Fatal("not located")
			}
		}
		b.StopTimer()
	})
}

// Warm cache (the steady state: a node hits the same call sites over and over).
func BenchmarkLocateShallow(b *testing.B)     { benchLocate(b, "main.main", false) }
func BenchmarkLocateDeep(b *testing.B)        { benchLocate(b, "main.deep", false) }
func BenchmarkLocateShallowCold(b *testing.B) { benchLocate(b, "main.main", true) }
func BenchmarkLocateDeepCold(b *testing.B)    { benchLocate(b, "main.deep", true) }

func TestStack(t *testing.T) {
	tab, err := Load(guest(t))
	if err != nil {
		t.Fatal(err)
	}
	var stack []Location
	inHostCall(t, tab, "main.deep", func(mod api.Module) { stack = tab.Stack(mod) })
	var names []string
	deep := 0
	for _, l := range stack {
		names = append(names, ShortFunc(l.Func))
		if l.Func == "main.deep" {
			deep++
		}
	}
	t.Logf("stack: %s", strings.Join(names, " <- "))
	if deep != 21 || names[0] != "syscall.Fsync" && !strings.HasPrefix(names[0], "syscall.") || names[len(names)-1] != "runtime.goexit" {
		t.Fatalf("unexpected stack %v", names)
	}
}
