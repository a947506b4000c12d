package goloc

import (
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// PCs appends the return PCs of the host call mod is making now, one per physical Go
// frame, innermost first (what runtime.Callers would return from the wasmimport
// wrapper), and returns the extended slice. It reads memory and global 0 only. A stack
// that ends early or looks wrong gives the frames walked so far.
func (t *Table) PCs(mod api.Module, buf []uint64) []uint64 {
	im, ok := mod.(experimental.InternalModule)
	if !ok || im.NumGlobal() == 0 {
		return buf
	}
	t.walk(mod.Memory(), uint32(im.Global(0).Get()), func(pc uint64, _ *pcInfo) bool {
		buf = append(buf, pc)
		return true
	})
	return buf
}

// Frames returns the logical frames at return PC pc (inlined calls expanded, innermost
// first), std included. Locations carry PC = pc.
func (t *Table) Frames(pc uint64) []Location {
	f, ok := t.tab.findFunc(pc)
	if !ok {
		return nil
	}
	var out []Location
	for _, fr := range f.frames(pc-1, nil) {
		out = append(out, Location{File: fr.file, Line: fr.line, Func: fr.fn, PC: pc})
	}
	return out
}
