//go:build darwin || freebsd

package engine

const mapNoReserve = 0
