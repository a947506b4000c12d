package engine

import (
	"fmt"
	"strings"
)

// Mutation operators of the simulated operating system, for durability mutation testing.
const (
	MutFsyncNoop     = "fsync-noop"       // fsync and fdatasync return success and persist nothing
	MutFdatasyncNoop = "fdatasync-noop"   // fdatasync returns success and persists nothing
	MutDirFsyncNoop  = "dir-fsync-noop"   // fsync of a directory persists nothing (with strict_dirs)
	MutOSyncIgnored  = "osync-ignored"    // O_SYNC/O_DSYNC writes are not made durable
	MutRenameNonAtom = "rename-nonatomic" // a rename over a file may lose the target at a crash
	MutReorderSync   = "reorder-sync"     // fsync persists only a random prefix of pending writes
)

// MutSitePrefix starts a call-site mutation: "fsync-site:<location>" makes only the
// fsyncs made from that source location no-ops.
const MutSitePrefix = "fsync-site:"

// mutationNames lists the OS-level mutation operators.
func mutationNames() []string {
	return []string{MutFsyncNoop, MutFdatasyncNoop, MutDirFsyncNoop, MutOSyncIgnored, MutRenameNonAtom, MutReorderSync}
}

// checkMutation returns an error naming the known operators when m is not one of them
// (or a call-site mutation, MutSitePrefix followed by a location). "" is no mutation.
func checkMutation(m string) error {
	if m == "" || knownMutation(m) && m != MutSitePrefix {
		return nil
	}
	return fmt.Errorf("%q is not a mutation operator (want one of %s, or %s<file:line>)", m, strings.Join(mutationNames(), ", "), MutSitePrefix)
}

func knownMutation(m string) bool {
	if strings.HasPrefix(m, MutSitePrefix) {
		return true
	}
	for _, n := range mutationNames() {
		if n == m {
			return true
		}
	}
	return false
}
