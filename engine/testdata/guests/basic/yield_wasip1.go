//go:build wasip1

package main

//go:wasmimport wasi_snapshot_preview1 sched_yield
func schedYield() uint32
