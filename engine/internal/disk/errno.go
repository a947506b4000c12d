package disk

import "github.com/seedfall/seedfall/engine/internal/errno"

// Errno is a filesystem error, numbered as in WASI preview 1 (the one table,
// internal/errno) so that the host layer can return it to the guest unchanged.
type Errno = errno.Errno

// The errors this package returns.
const (
	EBADF     = errno.EBADF     // the inode does not exist (never created, or discarded by a crash)
	EEXIST    = errno.EEXIST    // the path already exists
	EFBIG     = errno.EFBIG     // the file would grow beyond Options.MaxFileBytes
	EINVAL    = errno.EINVAL    // a malformed path or argument, or renaming a directory into itself
	EIO       = errno.EIO       // an injected fsync failure
	EISDIR    = errno.EISDIR    // a file operation on a directory
	ENOENT    = errno.ENOENT    // a path component does not exist
	ENOSPC    = errno.ENOSPC    // the disk would exceed Options.MaxBytes
	ENOTDIR   = errno.ENOTDIR   // a directory operation on a file, or a file used as a path prefix
	ENOTEMPTY = errno.ENOTEMPTY // removing or replacing a directory that still has entries
	EPERM     = errno.EPERM     // a hard link to a directory
)
