package goloc

import (
	"testing"

	"github.com/tetratelabs/wazero/api"
)

// TestPCsFrames: PCs and Frames together give what Stack gives, frame for frame.
func TestPCsFrames(t *testing.T) {
	tab, err := Load(guest(t))
	if err != nil {
		t.Fatal(err)
	}
	var stack []Location
	var pcs []uint64
	inHostCall(t, tab, "main.deep", func(mod api.Module) {
		stack = tab.Stack(mod)
		pcs = tab.PCs(mod, nil)
	})
	var got []Location
	for _, pc := range pcs {
		got = append(got, tab.Frames(pc)...)
	}
	if len(got) != len(stack) || len(pcs) < 22 {
		t.Fatalf("PCs+Frames give %d frames from %d PCs, Stack %d", len(got), len(pcs), len(stack))
	}
	for i := range got {
		if got[i] != stack[i] {
			t.Fatalf("frame %d: %#v, Stack has %#v", i, got[i], stack[i])
		}
	}
	if tab.Frames(0) != nil {
		t.Fatal("Frames(0) is not empty")
	}
}
