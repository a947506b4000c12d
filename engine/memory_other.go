//go:build !(linux || darwin || freebsd)

package engine

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is wazero's default (a growable Go slice) where mmap is not available.
func memoryAllocator() experimental.MemoryAllocator { return nil }
