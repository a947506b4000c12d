package disk

import "fmt"

// Errno is a filesystem error, numbered as in WASI preview 1 so that the host
// layer can return it to the guest unchanged.
type Errno uint16

// The errors this package returns, with their WASI numbers.
const (
	EBADF     Errno = 8  // the inode does not exist (never created, or discarded by a crash)
	EEXIST    Errno = 20 // the path already exists
	EFBIG     Errno = 22 // the file would grow beyond Options.MaxFileBytes
	EINVAL    Errno = 28 // a malformed path or argument, or renaming a directory into itself
	EIO       Errno = 29 // an injected fsync failure
	EISDIR    Errno = 31 // a file operation on a directory
	ENOENT    Errno = 44 // a path component does not exist
	ENOSPC    Errno = 51 // the disk would exceed Options.MaxBytes
	ENOTDIR   Errno = 54 // a directory operation on a file, or a file used as a path prefix
	ENOTEMPTY Errno = 55 // removing or replacing a directory that still has entries
	EPERM     Errno = 63 // a hard link to a directory
)

var errnoNames = map[Errno]string{
	EBADF:     "EBADF: bad file descriptor",
	EEXIST:    "EEXIST: file exists",
	EFBIG:     "EFBIG: file too large",
	EINVAL:    "EINVAL: invalid argument",
	EIO:       "EIO: input/output error",
	EISDIR:    "EISDIR: is a directory",
	ENOENT:    "ENOENT: no such file or directory",
	ENOSPC:    "ENOSPC: no space left on device",
	ENOTDIR:   "ENOTDIR: not a directory",
	ENOTEMPTY: "ENOTEMPTY: directory not empty",
	EPERM:     "EPERM: operation not permitted",
}

// Error returns the symbolic name and the usual libc message.
func (e Errno) Error() string {
	if s, ok := errnoNames[e]; ok {
		return s
	}
	return fmt.Sprintf("errno %d", uint16(e))
}
