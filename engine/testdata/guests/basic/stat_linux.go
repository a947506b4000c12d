package main

import (
	"os"
	"syscall"
	"time"
)

// nlink, atime and ctime read what os.FileInfo does not carry.
func nlink(fi os.FileInfo) uint64 { return uint64(fi.Sys().(*syscall.Stat_t).Nlink) }

func atime(fi os.FileInfo) time.Time {
	return time.Unix(fi.Sys().(*syscall.Stat_t).Atim.Unix())
}

func ctime(fi os.FileInfo) time.Time {
	return time.Unix(fi.Sys().(*syscall.Stat_t).Ctim.Unix())
}
