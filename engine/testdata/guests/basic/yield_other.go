//go:build !wasip1

package main

import "runtime"

func schedYield() uint32 {
	runtime.Gosched()
	return 0
}
