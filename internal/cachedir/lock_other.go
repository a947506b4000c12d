//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cachedir

import "os"

func tryLock(*os.File) tryResult { return unsupported }

func waitLock(*os.File) bool { return false }
