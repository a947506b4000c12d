package sim

import "syscall"

// winsockErrno maps a Windows Sockets error number to the syscall constant that names
// the same condition on goos (on Windows, syscall.ECONNREFUSED and friends are values
// of Go's own, which socket calls never return). It reports false for other numbers, and
// on other systems, whose socket errors already are those constants.
func winsockErrno(code uintptr, goos string) (syscall.Errno, bool) {
	if goos != "windows" {
		return 0, false
	}
	switch code {
	case 10061: // WSAECONNREFUSED
		return syscall.ECONNREFUSED, true
	case 10048: // WSAEADDRINUSE
		return syscall.EADDRINUSE, true
	case 10054: // WSAECONNRESET
		return syscall.ECONNRESET, true
	case 10053: // WSAECONNABORTED
		return syscall.ECONNABORTED, true
	case 10065: // WSAEHOSTUNREACH
		return syscall.EHOSTUNREACH, true
	case 10051: // WSAENETUNREACH
		return syscall.ENETUNREACH, true
	case 10060: // WSAETIMEDOUT
		return syscall.ETIMEDOUT, true
	}
	return 0, false
}
