package engine

import (
	"strings"
	"testing"
)

// TestPanicFrameSkipsLayerFiles: a fatal error inside a function of a file the wasip1
// platform layer added (here x/sys/unix's Mmap) is reported at the caller's frame.
func TestPanicFrameSkipsLayerFiles(t *testing.T) {
	var p panicScan
	for _, l := range strings.Split(`fatal error: out of memory

goroutine 228 gp=0xa0f81c0 m=0 mp=0x1400a00 [running]:
runtime.throw({0x2d1beb, 0xd})
	runtime/panic.go:1229 +0x3 fp=0x1543688 sp=0x1543660 pc=0x16fa0003
syscall.Mmap(0x6, 0x0, 0x8000000, 0x1, 0x1)
	syscall/seedfall_platform_wasip1.go:167 +0xc fp=0x1543800 sp=0x15437a0 pc=0x1b8c000c
golang.org/x/sys/unix.Mmap(...)
	golang.org/x/sys@v0.44.0/unix/seedfall_wasip1.go:87
go.etcd.io/bbolt.mmap(0x15c8fc8, 0x8000000)
	go.etcd.io/bbolt@v1.3.6/bolt_unix.go:54 +0x7 fp=0x1543870 sp=0x1543800 pc=0x4ff10007
`, "\n") {
		p.line(l)
	}
	got := p.reason()
	if !strings.Contains(got, "(in go.etcd.io/bbolt.mmap at ") || !strings.Contains(got, "bolt_unix.go:54)") {
		t.Errorf("reason %q, want the frame of go.etcd.io/bbolt.mmap at bolt_unix.go:54", got)
	}
}
