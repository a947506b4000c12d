//go:build unix

package build

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether fi, a directory the build links through, belongs to this
// process's user (and is no one else's to write).
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o022 == 0
}
