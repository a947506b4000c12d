package engine

import "syscall"

const mapNoReserve = syscall.MAP_NORESERVE

// zeroPages makes b, page-aligned, zero: MADV_DONTNEED on a private anonymous mapping
// drops its pages, and the next touch of each gets a fresh zero page. Far cheaper than
// clearing a large range, which would also make every page of it resident.
func zeroPages(b []byte) {
	if syscall.Madvise(b, syscall.MADV_DONTNEED) != nil {
		clear(b)
	}
}
