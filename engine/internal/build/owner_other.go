//go:build !unix

package build

import "io/fs"

// ownedByMe: recordedRoot does not link through a shared directory here.
func ownedByMe(fs.FileInfo) bool { return false }
