//go:build darwin || freebsd

package engine

const mapNoReserve = 0

// zeroPages makes b zero (MADV_DONTNEED does not promise zero pages on these systems).
func zeroPages(b []byte) { clear(b) }
