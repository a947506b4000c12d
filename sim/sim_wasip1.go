//go:build wasip1

package sim

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// The seedfall host module (docs/ABI.md). Every parameter but stop_faults' is an i32 (unsafe.Pointer is
// passed as an i32 address into linear memory, and unlike a uintptr it keeps the Go
// compiler aware that the pointee is in use) and every function returns a WASI errno.

//go:wasmimport seedfall sock_listen
func sockListen(addr unsafe.Pointer, addrLen uint32, fdOut unsafe.Pointer) uint32

//go:wasmimport seedfall sock_dial
func sockDial(addr unsafe.Pointer, addrLen uint32, fdOut unsafe.Pointer) uint32

//go:wasmimport seedfall sock_status
func sockStatus(fd uint32) uint32

//go:wasmimport seedfall assert
func hostAssert(kind, cond uint32, msg unsafe.Pointer, msgLen uint32, details unsafe.Pointer, detailsLen uint32) uint32

//go:wasmimport seedfall op_call
func opCall(client uint32, input unsafe.Pointer, inputLen uint32, idOut unsafe.Pointer) uint32

//go:wasmimport seedfall setup_complete
func hostSetupComplete(details unsafe.Pointer, detailsLen uint32) uint32

//go:wasmimport seedfall stop_faults
func hostStopFaults(ns int64) uint32

//go:wasmimport seedfall op_return
func opReturnHost(id uint32, output unsafe.Pointer, outputLen uint32) uint32

//go:wasmimport seedfall fault
func hostFault(req unsafe.Pointer, reqLen uint32, why unsafe.Pointer, whyCap uint32, whyLen unsafe.Pointer) uint32

//go:wasmimport seedfall failure_context
func hostFailureContext(text unsafe.Pointer, textLen uint32) uint32

// InSimulation reports whether the program runs inside seedfall's simulated world. It
// is true exactly in GOOS=wasip1 builds: such a build imports the seedfall host module,
// so nothing but seedfall can run it.
func InSimulation() bool { return true }

// strPtr and bytesPtr give the guest address of a string's or slice's bytes (nil when
// empty, which the host reads as nothing).
func strPtr(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// addr is the net.Addr an error reports; WASI preview 1 cannot tell the real one.
type addr struct{ network, address string }

func (a addr) Network() string { return a.network }
func (a addr) String() string  { return a.address }

func opError(op, network, address string, err error) error {
	return &net.OpError{Op: op, Net: network, Addr: addr{network, address}, Err: err}
}

func checkNetwork(network string) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
		return nil
	}
	return net.UnknownNetworkError(network)
}

func listen(network, address string) (net.Listener, error) {
	if err := checkNetwork(network); err != nil {
		return nil, opError("listen", network, address, err)
	}
	var fd uint32
	if e := sockListen(strPtr(address), uint32(len(address)), unsafe.Pointer(&fd)); e != 0 {
		return nil, opError("listen", network, address, os.NewSyscallError("sock_listen", syscall.Errno(e)))
	}
	f := os.NewFile(uintptr(fd), "sim-listener:"+address)
	ln, err := net.FileListener(f)
	// FileListener duplicated the descriptor's poll state; keeping f open would leave
	// a stale poll subscription behind (DESIGN.md, "Sockets as host fds").
	f.Close()
	if err != nil {
		return nil, opError("listen", network, address, err)
	}
	return ln, nil
}

// Bounds of the connect wait. Sleeps run on the simulated clock, so they cost
// virtually nothing; the cap keeps a connect stalled by a partition from spinning.
const (
	connectPollMin = 50 * time.Microsecond
	connectPollMax = 5 * time.Millisecond
)

func dial(network, address string, timeout time.Duration) (net.Conn, error) {
	if err := checkNetwork(network); err != nil {
		return nil, opError("dial", network, address, err)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	var fd uint32
	if e := sockDial(strPtr(address), uint32(len(address)), unsafe.Pointer(&fd)); e != 0 {
		return nil, opError("dial", network, address, os.NewSyscallError("sock_dial", syscall.Errno(e)))
	}
	// The host hands back a connecting fd. Wait for the outcome here, so that a refused
	// connection is an error of Dial, as with real TCP, not of the first Read.
	wait := connectPollMin
	for {
		e := syscall.Errno(sockStatus(fd))
		if e == 0 {
			break
		}
		if e != syscall.EAGAIN {
			syscall.Close(int(fd))
			return nil, opError("dial", network, address, os.NewSyscallError("connect", e))
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				syscall.Close(int(fd))
				return nil, opError("dial", network, address, os.ErrDeadlineExceeded)
			}
			wait = min(wait, left)
		}
		time.Sleep(wait)
		wait = min(2*wait, connectPollMax)
	}
	f := os.NewFile(uintptr(fd), "sim-conn:"+address)
	c, err := net.FileConn(f)
	f.Close() // see listen
	if err != nil {
		return nil, opError("dial", network, address, err)
	}
	return c, nil
}

func assert(kind int, cond bool, message string, details map[string]any) {
	d := encodeDetails(details)
	c := uint32(0)
	if cond {
		c = 1
	}
	hostAssert(uint32(kind), c, strPtr(message), uint32(len(message)), bytesPtr(d), uint32(len(d)))
}

func call(client int, input any) *Op {
	in := encode(input)
	var id uint32
	if e := opCall(uint32(client), bytesPtr(in), uint32(len(in)), unsafe.Pointer(&id)); e != 0 {
		return &Op{}
	}
	return &Op{id: id, active: true}
}

func opReturn(id uint32, output any) {
	out := encode(output)
	opReturnHost(id, bytesPtr(out), uint32(len(out)))
}

func setupComplete(details []byte) { hostSetupComplete(bytesPtr(details), uint32(len(details))) }

func failureContext(text string) { hostFailureContext(strPtr(text), uint32(len(text))) }

func stopFaults(d time.Duration) { hostStopFaults(int64(d)) }

func fault(r faultReq) error {
	req, err := json.Marshal(r)
	if err != nil {
		return err
	}
	why := make([]byte, 512)
	var n uint32
	if e := hostFault(bytesPtr(req), uint32(len(req)), unsafe.Pointer(&why[0]), uint32(len(why)), unsafe.Pointer(&n)); e != 0 {
		if n == 0 {
			return fmt.Errorf("sim: %s %s: %w", r.Kind, r.Node, syscall.Errno(e))
		}
		return fmt.Errorf("sim: %s", why[:n])
	}
	return nil
}
