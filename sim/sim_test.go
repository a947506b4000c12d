//go:build !wasip1

package sim

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	t.Setenv("SEEDFALL_ADDR_server", "127.0.0.1:7001")
	t.Setenv("SEEDFALL_ADDR_db", "10.0.0.5")
	for _, tc := range []struct{ in, want string }{
		{"server:7000", "127.0.0.1:7001"},
		{"db:5432", "10.0.0.5:5432"},
		{"other:7000", "other:7000"},
		{":7000", ":7000"},
		{"no-port", "no-port"},
	} {
		if got := resolve(tc.in); got != tc.want {
			t.Errorf("resolve(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestListenAndDialByNodeName(t *testing.T) {
	ln, err := Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("hello\n"))
		c.Close()
	}()
	t.Setenv("SEEDFALL_ADDR_server", ln.Addr().String())
	c, err := DialTimeout("tcp", "server:7000", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Errorf("read %q, %v; want hello", line, err)
	}
}

func TestDialRefused(t *testing.T) {
	ln, err := Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dial("tcp", addr)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Dial of a closed port: %v, want an error wrapping ECONNREFUSED", err)
	}
}

func TestAssertionsOutsideSimulation(t *testing.T) {
	var buf strings.Builder
	old := stderr
	stderr = &buf
	t.Cleanup(func() { stderr = old })
	Always(true, "fine", nil)
	Sometimes(false, "rare", nil)
	Reachable("here", map[string]any{"x": 1})
	Always(false, "broken", map[string]any{"b": 2, "a": "x"})
	Unreachable("never", nil)
	want := "sim: assertion failed: broken {\"a\":\"x\",\"b\":2}\n" +
		"sim: assertion failed: never\n"
	if got := buf.String(); got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
}

func TestHistoryOutsideSimulation(t *testing.T) {
	op := Call(1, map[string]string{"op": "put"})
	op.Return("ok")
	op.Return("twice")
	var nilOp *Op
	nilOp.Return(nil)
}

func TestNodeAndIncarnation(t *testing.T) {
	t.Setenv("SEEDFALL_NODE", "n2")
	t.Setenv("SEEDFALL_INCARNATION", "2")
	if Node() != "n2" || Incarnation() != 2 {
		t.Errorf("Node(), Incarnation() = %q, %d; want n2, 2", Node(), Incarnation())
	}
	t.Setenv("SEEDFALL_INCARNATION", "")
	if Incarnation() != 0 {
		t.Errorf("Incarnation() without SEEDFALL_INCARNATION = %d, want 0", Incarnation())
	}
	if InSimulation() {
		t.Error("InSimulation() = true in a native test")
	}
}

func TestEncode(t *testing.T) {
	if got := string(encode(map[string]any{"z": 1, "a": []int{2}})); got != `{"a":[2],"z":1}` {
		t.Errorf("encode = %s, want sorted keys", got)
	}
	if got := string(encode(func() {})); !strings.Contains(got, "cannot encode") {
		t.Errorf("encode(func) = %s, want a note that it cannot be encoded", got)
	}
	if encodeDetails(nil) != nil || encodeDetails(map[string]any{}) != nil {
		t.Error("empty details should encode to nothing")
	}
}

// TestPortableErrors: a refused dial on Windows (WSAECONNREFUSED, 10061) matches
// syscall.ECONNREFUSED as the package documents, keeps its text and its *net.OpError.
// The same number means something else on Linux and is left alone there.
func TestPortableErrors(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connectex", syscall.Errno(10061))}
	err := portableErrOn(refused, "windows")
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &op) || err.Error() != refused.Error() {
		t.Errorf("windows: %v: Is(ECONNREFUSED)=%v As(*net.OpError)=%v", err, errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &op))
	}
	if err := portableErrOn(refused, "linux"); err != error(refused) {
		t.Errorf("linux: %v was rewrapped", err)
	}
	inUse := &net.OpError{Op: "listen", Err: os.NewSyscallError("bind", syscall.Errno(10048))}
	if !errors.Is(portableErrOn(inUse, "windows"), syscall.EADDRINUSE) {
		t.Error("WSAEADDRINUSE does not match EADDRINUSE")
	}
	if portableErrOn(nil, "windows") != nil {
		t.Error("nil error became non-nil")
	}
}
