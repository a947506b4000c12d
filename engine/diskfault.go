package engine

import (
	"strings"

	"github.com/seedfall/seedfall/engine/internal/diskfault"
)

// DiskFault is a disk fault's probability, optionally limited to some paths and op
// kinds (fields P, Paths, Ops). In a config it is written as a plain number (0.05: every
// path, every op it applies to) or as an object:
//
//	{"p": 0.05, "paths": ["/data/wal/*"], "ops": ["fsync"]}
//
// Paths are globs (path.Match syntax, matched against the guest's absolute path; a
// pattern ending in "/**" matches everything below that directory); Ops are op kinds
// as the trace names them (docs/faults.md). Its JSON methods live in engine/internal/diskfault, so that they
// are not part of engine's API listing.
type DiskFault = diskfault.DiskFault

// diskOpKinds are the op kinds a mid-op crash can be aimed at, as the trace names them,
// except that an fsync or fdatasync of a directory is "dir_fsync".
var diskOpKinds = []string{"write", "truncate", "allocate", "create", "mkdir", "link", "rmdir", "unlink", "rename", "fsync", "fdatasync", "dir_fsync"}

// syncOpKinds are the op kinds fsync_eio can fail.
var syncOpKinds = []string{"fsync", "fdatasync", "dir_fsync"}

// orList renders "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
