package main

import (
	"os"
	"syscall"
	"time"
)

// nlink, atime and ctime read what os.FileInfo does not carry.
func nlink(fi os.FileInfo) uint64 { return fi.Sys().(*syscall.Stat_t).Nlink }

func atime(fi os.FileInfo) time.Time { return time.Unix(0, int64(fi.Sys().(*syscall.Stat_t).Atime)) }

func ctime(fi os.FileInfo) time.Time { return time.Unix(0, int64(fi.Sys().(*syscall.Stat_t).Ctime)) }
