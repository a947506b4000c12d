// Package errno is the one table of error numbers of the simulated operating system:
// WASI preview 1's numbering, which the disk (internal/disk), the network
// (internal/netsim) and the host (internal/wasi) all use, so that an error reaches the
// guest unchanged from the layer that decided it.
package errno

import "fmt"

// Errno is a WASI preview 1 errno. 0 is success.
type Errno uint16

// The errnos seedfall returns, with their WASI numbers.
const (
	Success      Errno = 0
	EACCES       Errno = 2
	EADDRINUSE   Errno = 3
	EAGAIN       Errno = 6
	EBADF        Errno = 8
	ECONNREFUSED Errno = 14
	ECONNRESET   Errno = 15
	EEXIST       Errno = 20
	EFBIG        Errno = 22
	EHOSTUNREACH Errno = 23
	EINTR        Errno = 27
	EINVAL       Errno = 28
	EIO          Errno = 29
	EISDIR       Errno = 31
	ENODEV       Errno = 43
	ENOENT       Errno = 44
	ENOMEM       Errno = 48
	ENOSPC       Errno = 51
	ENOSYS       Errno = 52
	ENOTCONN     Errno = 53
	ENOTDIR      Errno = 54
	ENOTEMPTY    Errno = 55
	ENOTSOCK     Errno = 57
	ENOTSUP      Errno = 58
	EPERM        Errno = 63
	EPIPE        Errno = 64
	ESPIPE       Errno = 70
)

var names = map[Errno]string{
	EACCES:       "EACCES: permission denied",
	EADDRINUSE:   "EADDRINUSE: address already in use",
	EAGAIN:       "EAGAIN: resource temporarily unavailable",
	EBADF:        "EBADF: bad file descriptor",
	ECONNREFUSED: "ECONNREFUSED: connection refused",
	ECONNRESET:   "ECONNRESET: connection reset by peer",
	EEXIST:       "EEXIST: file exists",
	EFBIG:        "EFBIG: file too large",
	EHOSTUNREACH: "EHOSTUNREACH: no route to host",
	EINTR:        "EINTR: interrupted system call",
	EINVAL:       "EINVAL: invalid argument",
	EIO:          "EIO: input/output error",
	EISDIR:       "EISDIR: is a directory",
	ENODEV:       "ENODEV: no such device",
	ENOENT:       "ENOENT: no such file or directory",
	ENOMEM:       "ENOMEM: cannot allocate memory",
	ENOSPC:       "ENOSPC: no space left on device",
	ENOSYS:       "ENOSYS: function not implemented",
	ENOTCONN:     "ENOTCONN: transport endpoint is not connected",
	ENOTDIR:      "ENOTDIR: not a directory",
	ENOTEMPTY:    "ENOTEMPTY: directory not empty",
	ENOTSOCK:     "ENOTSOCK: socket operation on non-socket",
	ENOTSUP:      "ENOTSUP: operation not supported",
	EPERM:        "EPERM: operation not permitted",
	EPIPE:        "EPIPE: broken pipe",
	ESPIPE:       "ESPIPE: illegal seek",
}

// Error returns the symbolic name and the usual libc message.
func (e Errno) Error() string {
	if s, ok := names[e]; ok {
		return s
	}
	return fmt.Sprintf("errno %d", uint16(e))
}
