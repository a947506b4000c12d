// Command guest is deliberately nondeterministic when the host lets it read the wall
// clock through seedfall.test_host_clock: it sleeps for a duration derived from it.
package main

import (
	"fmt"
	"time"
	"unsafe"
)

//go:wasmimport seedfall test_host_clock
func hostClock(out unsafe.Pointer) uint32

func main() {
	for i := 0; i < 5; i++ {
		var t uint64
		hostClock(unsafe.Pointer(&t))
		fmt.Printf("step %d\n", i)
		time.Sleep(time.Duration(t%1000) * time.Microsecond)
	}
	fmt.Println("done")
}
