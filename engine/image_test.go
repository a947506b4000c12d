package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// imageCapable: the platforms where modules take the image path.
var imageCapable = runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")

func prepareBoth(t *testing.T, path string) (image, plain *Sim) {
	t.Helper()
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	image, err = Prepare(context.Background(), cfg, PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { image.Close() })
	plain, err = Prepare(context.Background(), cfg, PrepareOptions{PlainInstantiate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	if imageCapable {
		for i, e := range image.imagePath() {
			if e != nil {
				t.Fatalf("%s: module %d is not on the image path: %v", path, i, e)
			}
		}
	}
	return image, plain
}

// TestImageTracesMatchPlain runs real guests through both instantiate paths and compares
// their full traces: crashes, restarts, torn writes and a failing seed included
// (SEEDFALL_LONG=1: more kvlog seeds).
func TestImageTracesMatchPlain(t *testing.T) {
	cases := []struct {
		path  string
		seeds []uint64
	}{
		{"../examples/kvlog/seedfall.json", []uint64{1, 2}},
		{"../examples/kvlog/seedfall.fixed.json", []uint64{1}},
		{"testdata/hello/seedfall.json", []uint64{1}},
		{"testdata/checking/simprops/seedfall.json", []uint64{1, 2}},
	}
	if os.Getenv("SEEDFALL_LONG") != "" {
		cases[0].seeds = []uint64{1, 2, 3, 4, 5}
		cases[1].seeds = []uint64{1, 2, 3}
	}
	for _, c := range cases {
		image, plain := prepareBoth(t, c.path)
		verdicts := map[Verdict]int{}
		for _, seed := range c.seeds {
			a := image.Run(context.Background(), seed, RunOptions{Trace: true})
			b := plain.Run(context.Background(), seed, RunOptions{Trace: true})
			if d := diverge(a.Trace, b.Trace); d != nil {
				t.Fatalf("%s seed %d: image and plain traces differ at line %d:\n image: %s\n plain: %s", c.path, seed, d.Line, d.First, d.Second)
			}
			if a.TraceHash != b.TraceHash || a.Verdict != b.Verdict || len(a.Trace) < 3 {
				t.Fatalf("%s seed %d: hash %s/%s verdict %s/%s, %d lines", c.path, seed, a.TraceHash, b.TraceHash, a.Verdict, b.Verdict, len(a.Trace))
			}
			if a.Verdict == VerdictError {
				t.Fatalf("%s seed %d: %s", c.path, seed, a.Error)
			}
			verdicts[a.Verdict]++
		}
		t.Logf("%s: %v", c.path, verdicts)
	}
}

// instantiatedMemory instantiates m without running it and returns a copy of its memory.
func instantiatedMemory(t *testing.T, rt wazero.Runtime, m wazero.CompiledModule, alloc experimental.MemoryAllocator) []byte {
	t.Helper()
	ctx := context.Background()
	if alloc != nil {
		ctx = experimental.WithMemoryAllocator(ctx, alloc)
	}
	mod, err := rt.InstantiateModule(ctx, m, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	buf, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		t.Fatal("memory read")
	}
	return bytes.Clone(buf)
}

// TestImageMemoryEqualsPlain compares the memory an instance starts with, byte for byte,
// on both paths, several times over (pooled regions are reused and must come back clean),
// and checks that the comparison catches a wrong image.
func TestImageMemoryEqualsPlain(t *testing.T) {
	if !imageCapable {
		t.Skip("no memory images on " + runtime.GOOS + "/" + runtime.GOARCH)
	}
	image, plain := prepareBoth(t, "../examples/kvlog/seedfall.fixed.json")
	want := instantiatedMemory(t, plain.rt, plain.modules[0], plain.allocs[0])
	for i := 0; i < 3; i++ {
		got := instantiatedMemory(t, image.rt, image.modules[0], image.allocs[0])
		if !bytes.Equal(got, want) {
			t.Fatalf("instance %d: image memory (%d bytes) differs from plain (%d bytes)", i, len(got), len(want))
		}
		// A guest that ran scribbles over image and heap alike; the next instance must
		// not see it.
		if i == 0 {
			r := image.Run(context.Background(), 1, RunOptions{})
			if r.Verdict != VerdictPass {
				t.Fatalf("seed 1: %s", r)
			}
		}
	}

	// Negative control: an image with one byte changed is caught.
	data, err := os.ReadFile(image.wasmPaths[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := buildImage(data)
	if err != nil {
		t.Fatal(err)
	}
	img.init[len(img.init)/2] ^= 0xff
	a, closer, err := imageMemoryAllocator(img)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	got := instantiatedMemory(t, image.rt, image.modules[0], a)
	if bytes.Equal(got, want) {
		t.Fatal("a corrupted image produced the plain memory: the comparison cannot fail")
	}
}

// wasmModule assembles a module from sections (id, body).
func wasmModule(secs ...[]byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range secs {
		out = append(out, s[0], byte(len(s)-1))
		out = append(out, s[1:]...)
	}
	return out
}

func TestBuildImage(t *testing.T) {
	mem := []byte{secMemory, 1, 0, 1}                                                                // one memory, min 1 page
	active := []byte{secData, 2, 0, 0x41, 0x10, 0x0b, 3, 'a', 'b', 'c', 0, 0x41, 0x11, 0x0b, 1, 'X'} // "abc"@16, "X"@17
	img, err := buildImage(wasmModule(mem, []byte{secDataCount, 2}, active))
	if err != nil {
		t.Fatal(err)
	}
	if want := append(make([]byte, 16), 'a', 'X', 'c'); !bytes.Equal(img.init, want) {
		t.Fatalf("image %q, want %q", img.init, want)
	}
	if img.minBytes != pageSize {
		t.Fatalf("minBytes %d", img.minBytes)
	}
	if want := wasmModule(mem, []byte{secDataCount, 0}, []byte{secData, 0}); !bytes.Equal(img.wasm, want) {
		t.Fatalf("rewritten module %x, want %x", img.wasm, want)
	}
	// The rewritten module is valid wasm.
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	if _, err := rt.CompileModule(context.Background(), img.wasm); err != nil {
		t.Fatalf("rewritten module: %v", err)
	}

	for name, wasm := range map[string][]byte{
		"passive":   wasmModule(mem, []byte{secData, 1, 1, 1, 'a'}),
		"global":    wasmModule(mem, []byte{secData, 1, 0, 0x23, 0, 0x0b, 1, 'a'}),
		"no memory": wasmModule([]byte{secData, 1, 0, 0x41, 0, 0x0b, 1, 'a'}),
		"last byte": wasmModule(mem, []byte{secData, 1, 0, 0x41, 0xff, 0xff, 0x03, 0x0b, 1, 'a'}), // offset 65535, 1 byte fits
		"beyond":    wasmModule(mem, []byte{secData, 1, 0, 0x41, 0x80, 0x80, 0x04, 0x0b, 1, 'a'}), // offset 65536
	} {
		_, err := buildImage(wasm)
		if name == "last byte" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, errNoImage) {
			t.Errorf("%s: got %v, want errNoImage", name, err)
		}
	}
}
