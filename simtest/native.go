package simtest

import (
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/seedfall/seedfall/internal/simdecl"
)

// nativeNet maps the nodes' ports to the localhost addresses they listen on when the
// test runs under go test.
type nativeNet struct {
	mu    sync.Mutex
	addrs map[string]string // "node:port" -> 127.0.0.1:N
}

func (nn *nativeNet) listen(node string, port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	nn.mu.Lock()
	defer nn.mu.Unlock()
	key := fmt.Sprintf("%s:%d", node, port)
	if _, dup := nn.addrs[key]; dup {
		ln.Close()
		return nil, fmt.Errorf("listen %s: address already in use", key)
	}
	nn.addrs[key] = ln.Addr().String()
	return ln, nil
}

func (nn *nativeNet) addr(node string, port int) (string, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	if a, ok := nn.addrs[fmt.Sprintf("%s:%d", node, port)]; ok {
		return a, nil
	}
	return "", fmt.Errorf("no node %q listens on port %d", node, port)
}

// runNative runs the test once with no faults: each function node in goroutines on
// localhost, the workload in the test's goroutine.
func runNative(t *testing.T, d *decl) {
	t.Helper()
	if len(d.errs) > 0 {
		for _, e := range d.errs {
			t.Errorf("simtest: %s", e)
		}
		t.FailNow()
	}
	for _, n := range d.nodes {
		if n.fn == nil {
			t.Skipf("simtest: node %q is a binary (%s): it runs under `seedfall test` only", n.name, n.bin.Pkg)
		}
	}
	nn := &nativeNet{addrs: map[string]string{}}
	root := t.TempDir()
	var nodes []*N
	var lns []net.Listener
	t.Cleanup(func() {
		for _, ln := range lns {
			ln.Close()
		}
		for i := len(nodes) - 1; i >= 0; i-- {
			n := nodes[i]
			for j := len(n.cleanups) - 1; j >= 0; j-- {
				n.cleanups[j]()
			}
		}
	})
	for _, nd := range d.nodes {
		c := newCaller()
		c.net = nn
		n := newN(nd.name, filepath.Join(root, nd.name), c)
		n.fatal = func(msg string) {
			t.Errorf("node %s: %s", nd.name, msg)
			runtime.Goexit()
		}
		ln, err := nn.listen(nd.name, simdecl.Port)
		if err != nil {
			t.Fatalf("simtest: node %s: %v", nd.name, err)
		}
		nodes, lns = append(nodes, n), append(lns, ln)
	}
	// Every node's function runs at once (a node may wait for its peers); the workload
	// starts once they all returned.
	var wg sync.WaitGroup
	ok := make([]bool, len(nodes))
	for i, nd := range d.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nd.fn(nodes[i])
			ok[i] = true
		}()
	}
	wg.Wait()
	for i, n := range nodes {
		if !ok[i] {
			t.FailNow()
		}
		n.started()
		go n.serve(lns[i])
	}
	c := newCaller()
	c.net = nn
	d.workload(&T{caller: c, native: t})
}
