// Command panics is a guest of the engine's failure-reason tests: it panics in one of
// two places of its own code, picked by its first argument, with a message that carries
// values that change from seed to seed (a number and a pointer), below a frame of the
// standard library for the second. Its "oob" and "oobcopy" modes read past the end of
// its memory through unsafe, as code reading a corrupted file mapping might: a wasm trap
// in its own code, or in the runtime's memmove below it.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"
	"unsafe"
)

type item struct{ n int }

func main() {
	seed, _ := strconv.Atoi(os.Getenv("SEEDFALL_SEED"))
	time.Sleep(10 * time.Millisecond)
	fmt.Println("about to panic")
	switch os.Args[1] {
	case "index":
		indexPanic(seed)
	case "sorted":
		sortedPanic(seed)
	case "repanic":
		repanic(seed)
	case "oob":
		fmt.Println("read:", readPast(seed))
	case "oobcopy":
		fmt.Println("copied:", copyPast(seed))
	}
	fmt.Println("no panic")
}

// indexPanic panics with a value: the message differs per seed.
func indexPanic(seed int) {
	it := &item{n: seed}
	panic(fmt.Sprintf("index %d out of range for item %p", seed+3, it))
}

// sortedPanic panics inside a callback of sort.Slice: the first frame of the user's own
// code is the callback, under frames of package sort.
func sortedPanic(seed int) {
	xs := []int{seed, 2, 1, 3}
	sort.Slice(xs, func(i, j int) bool {
		if xs[i] == 1 || xs[j] == 1 {
			var m map[string]int
			m[fmt.Sprint("key", seed)] = seed // assignment to entry in nil map
		}
		return xs[i] < xs[j]
	})
}

// repanic recovers a panic and panics again with another value.
func repanic(seed int) {
	defer func() {
		r := recover()
		panic(fmt.Sprintf("again after %v", r))
	}()
	panic(fmt.Errorf("first failure on seed %d", seed))
}

// pastMemory is an address past the end of any wasm memory a run gives a guest (a
// little under 4 GiB), different on each seed.
func pastMemory(seed int) unsafe.Pointer {
	return unsafe.Pointer(uintptr(0xfff0_0000 + 8*seed)) //nolint:govet // the point
}

// readPast loads from past the guest's memory in its own code. A trap is named by its
// wasm function: an inlined function would be named by the function it was inlined into.
//
//go:noinline
func readPast(seed int) uint64 {
	return *(*uint64)(pastMemory(seed))
}

// copyPast copies from past the guest's memory: the trap is in runtime.memmove.
//
//go:noinline
func copyPast(seed int) []byte {
	dst := make([]byte, 64+seed)
	copy(dst, unsafe.Slice((*byte)(pastMemory(seed)), len(dst)))
	return dst
}
