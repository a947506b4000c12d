// Command server is the node of the coverage tests. Its first life writes a marker
// file; only a later life, which finds the marker (the previous one crashed), runs
// recoverFromMarker. neverCalled runs in no life.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/seedfall/seedfall/engine/testdata/cover/lib"
)

const marker = "/marker"

func main() {
	if _, err := os.Stat(marker); err == nil {
		recoverFromMarker()
	} else {
		firstLife()
	}
	if len(os.Args) > 5 {
		neverCalled()
	}
	for {
		time.Sleep(10 * time.Millisecond)
	}
}

func firstLife() {
	f, err := os.Create(marker)
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(1)
	}
	f.Write([]byte("x"))
	f.Sync()
	f.Close()
	d, _ := os.Open("/")
	d.Sync()
	d.Close()
	fmt.Println(lib.Greeting("first life"))
}

func recoverFromMarker() {
	fmt.Println("recovering from a previous life")
}

func neverCalled() {
	fmt.Println("never")
}
