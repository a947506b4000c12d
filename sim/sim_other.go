//go:build !wasip1

package sim

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
)

// InSimulation reports whether the program runs inside seedfall's simulated world. It
// is true exactly in GOOS=wasip1 builds: such a build imports the seedfall host module,
// so nothing but seedfall can run it.
func InSimulation() bool { return false }

func listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	return ln, portableErr(err)
}

func dial(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, resolve(address), timeout)
	return c, portableErr(err)
}

// portableErr makes errors.Is(err, syscall.ECONNREFUSED) (and EADDRINUSE, ECONNRESET,
// EHOSTUNREACH, ENETUNREACH, ECONNABORTED) hold on every OS, as the package promises:
// Windows reports its own WSA error numbers, which those constants do not match there.
// The error keeps its text and its chain (errors.As still finds the *net.OpError).
func portableErr(err error) error { return portableErrOn(err, runtime.GOOS) }

func portableErrOn(err error, goos string) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	if e, ok := winsockErrno(uintptr(errno), goos); ok && e != errno {
		return &errnoError{err: err, errno: e}
	}
	return err
}

// errnoError is err that also matches errno.
type errnoError struct {
	err   error
	errno syscall.Errno
}

func (e *errnoError) Error() string   { return e.err.Error() }
func (e *errnoError) Unwrap() []error { return []error{e.err, e.errno} }

// resolve maps "node:port" to the value of SEEDFALL_ADDR_node, which is either a full
// "host:port" or just a host (the port is then kept).
func resolve(address string) string {
	host, port, err := net.SplitHostPort(address)
	if err != nil || host == "" {
		return address
	}
	a := os.Getenv("SEEDFALL_ADDR_" + host)
	if a == "" {
		return address
	}
	if _, _, err := net.SplitHostPort(a); err == nil {
		return a
	}
	return net.JoinHostPort(a, port)
}

// stderr is where failed assertions are reported; tests replace it.
var stderr io.Writer = os.Stderr

func assert(kind int, cond bool, message string, details map[string]any) {
	if !failed(kind, cond) {
		return
	}
	if d := encodeDetails(details); d != nil {
		fmt.Fprintf(stderr, "sim: assertion failed: %s %s\n", message, d)
		return
	}
	fmt.Fprintf(stderr, "sim: assertion failed: %s\n", message)
}

func call(client int, input any) *Op { return &Op{} }

func opReturn(id uint32, output any) {}

func setupComplete(details []byte) {}

func failureContext(text string) {}

func stopFaults(d time.Duration) {}

func fault(faultReq) error { return ErrNotSimulated }
