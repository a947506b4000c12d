package simtest

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/internal/simdecl"
)

// nativeNet is the test's world under go test: the localhost addresses the nodes listen
// on, the nodes' lives (a directed Crash or Kill stops one, Restart starts it again),
// the links the workload cut, and the pauses.
type nativeNet struct {
	t    *testing.T
	root string
	mu   sync.Mutex
	// addrs maps "node:port" to the 127.0.0.1:N a node listens on.
	addrs map[string]string
	nodes map[string]*nativeNode
	// callers are every process's callers by the process's name, for cutting links.
	callers map[string][]*calls
	cuts    map[[2]string]bool
	paused  map[string]time.Time
	// noted: the line saying what a directed crash does natively was logged.
	noted bool
}

// nativeNode is one function node's current life under go test.
type nativeNode struct {
	decl  nodeDecl
	n     *N
	lns   []net.Listener // the rpc listener and the node's own (N.Listen)
	conns map[net.Conn]bool
	down  bool
	lives int
}

func newNativeNet(t *testing.T) *nativeNet {
	return &nativeNet{t: t, root: t.TempDir(), addrs: map[string]string{}, nodes: map[string]*nativeNode{},
		callers: map[string][]*calls{}, cuts: map[[2]string]bool{}, paused: map[string]time.Time{}}
}

func (nn *nativeNet) caller(from string) caller {
	c := newCaller()
	c.net, c.from = nn, from
	nn.mu.Lock()
	nn.callers[from] = append(nn.callers[from], c.calls)
	nn.mu.Unlock()
	return c
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
	if nd := nn.nodes[node]; nd != nil && port != simdecl.Port {
		nd.lns = append(nd.lns, ln) // closed when the node stops
	}
	return ln, nil
}

func (nn *nativeNet) addr(node string, port int) (string, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	if a, ok := nn.addrs[fmt.Sprintf("%s:%d", node, port)]; ok {
		return a, nil
	}
	if nd := nn.nodes[node]; nd != nil && nd.down {
		return "", fmt.Errorf("node %s is down", node)
	}
	return "", fmt.Errorf("no node %q listens on port %d", node, port)
}

// errCut is a call across a link the workload cut (natively it fails at once, where the
// simulator's would time out).
var errCut = errors.New("the link is cut (simtest.T.Partition)")

// reachable reports whether from may reach to.
func (nn *nativeNet) reachable(from, to string) error {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	if nn.cuts[cutKey(from, to)] {
		return errCut
	}
	return nil
}

// pauseWait holds a request to node while it is paused.
func (nn *nativeNet) pauseWait(node string) {
	nn.mu.Lock()
	until := nn.paused[node]
	nn.mu.Unlock()
	if d := time.Until(until); d > 0 {
		time.Sleep(d)
	}
}

func cutKey(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// start runs a function node's life: listen, its function, then serve. It reports
// false when the function failed (the test is marked failed).
func (nn *nativeNet) start(nd nodeDecl) bool {
	ok := nn.open(nd)
	if !ok {
		return false
	}
	return nn.run(nd.name)
}

// open makes the node's N and listener; run runs its function and starts serving.
func (nn *nativeNet) open(nd nodeDecl) bool {
	t := nn.t
	n := newN(nd.name, filepath.Join(nn.root, nd.name), nn.caller(nd.name))
	n.fatal = func(msg string) {
		t.Errorf("node %s: %s", nd.name, msg)
		runtime.Goexit()
	}
	n.pause = func() { nn.pauseWait(nd.name) }
	nn.mu.Lock()
	node := nn.nodes[nd.name]
	if node == nil {
		node = &nativeNode{decl: nd}
		nn.nodes[nd.name] = node
	}
	node.n, node.lns, node.conns, node.down = n, nil, map[net.Conn]bool{}, false
	node.lives++
	nn.mu.Unlock()
	n.track = func(c net.Conn, on bool) {
		nn.mu.Lock()
		defer nn.mu.Unlock()
		if on {
			node.conns[c] = true
		} else {
			delete(node.conns, c)
		}
	}
	ln, err := nn.listen(nd.name, simdecl.Port)
	if err != nil {
		t.Errorf("simtest: node %s: %v", nd.name, err)
		return false
	}
	nn.mu.Lock()
	node.lns = append(node.lns, ln)
	nn.mu.Unlock()
	return true
}

func (nn *nativeNet) run(name string) bool {
	nn.mu.Lock()
	node := nn.nodes[name]
	nn.mu.Unlock()
	done := make(chan bool)
	go func() {
		ok := false
		defer func() { done <- ok }()
		node.decl.fn(node.n)
		ok = true
	}()
	if !<-done {
		return false
	}
	node.n.started()
	go node.n.serve(node.lns[0])
	return true
}

// stop ends a node's life: its listeners and connections close and its Cleanup
// functions run (natively a crash is no more than that: nothing unsynced is lost).
func (nn *nativeNet) stop(name string) {
	nn.mu.Lock()
	node := nn.nodes[name]
	if node == nil || node.down {
		nn.mu.Unlock()
		return
	}
	node.down = true
	lns := node.lns
	var conns []net.Conn
	for c := range node.conns {
		conns = append(conns, c)
	}
	for k := range nn.addrs {
		if len(k) > len(name) && k[:len(name)+1] == name+":" {
			delete(nn.addrs, k)
		}
	}
	nn.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	node.n.runCleanups()
	nn.dropConns(name, "")
}

// dropConns closes the connections the processes named from hold to to ("": to any),
// and those they hold from to when from is "".
func (nn *nativeNet) dropConns(a, b string) {
	nn.mu.Lock()
	var cs []*calls
	var names []string
	for from := range nn.callers {
		names = append(names, from)
	}
	sort.Strings(names)
	for _, from := range names {
		cs = append(cs, nn.callers[from]...)
	}
	nn.mu.Unlock()
	for _, c := range cs {
		c.closeTo(func(from, to string) bool {
			if b == "" {
				return from == a || to == a
			}
			return cutKey(from, to) == cutKey(a, b)
		})
	}
}

// stopAll ends the test: every listener closes and every node's Cleanup runs, the last
// declared first.
func (nn *nativeNet) stopAll(order []string) {
	for i := len(order) - 1; i >= 0; i-- {
		nn.stop(order[i])
	}
}

// directed is a directed fault under go test.
func (nn *nativeNet) directed(t *testing.T, kind, node, peer string, d time.Duration) error {
	t.Helper()
	nn.mu.Lock()
	nd := nn.nodes[node]
	nn.mu.Unlock()
	if kind == "crash-mid-op" {
		kind = "crash"
	}
	switch kind {
	case "crash", "kill", "restart", "pause":
		if nd == nil {
			return fmt.Errorf("no function node %q", node)
		}
	}
	switch kind {
	case "crash", "kill":
		if kind == "crash" && !nn.noted {
			nn.noted = true
			t.Logf("simtest: natively, Crash(%q) stops the node's process as Kill does: no power is lost, so nothing unsynced is lost; its Cleanup functions run, its listeners and connections close, and goroutines it started run on", node)
		}
		nn.stop(node)
	case "restart":
		nn.mu.Lock()
		down := nd.down
		nn.mu.Unlock()
		if !down {
			return nil
		}
		if !nn.open(nd.decl) || !nn.run(node) {
			return fmt.Errorf("the node did not start again")
		}
	case "partition", "heal":
		for _, x := range []string{node, peer} {
			if x != "workload" && nn.nodes[x] == nil {
				return fmt.Errorf("no node %q", x)
			}
		}
		k := cutKey(node, peer)
		nn.mu.Lock()
		cut := nn.cuts[k]
		if kind == "partition" {
			if cut {
				nn.mu.Unlock()
				return fmt.Errorf("the link is cut already")
			}
			nn.cuts[k] = true
		} else {
			if !cut {
				nn.mu.Unlock()
				return fmt.Errorf("the workload made no partition between them")
			}
			delete(nn.cuts, k)
		}
		nn.mu.Unlock()
		if kind == "partition" {
			nn.dropConns(node, peer)
		}
	case "pause":
		nn.mu.Lock()
		nn.paused[node] = time.Now().Add(d)
		nn.mu.Unlock()
	}
	return nil
}

// runNative runs the test once, without random faults: each function node in
// goroutines on localhost, the workload in the test's goroutine. Directed faults do
// what they can (nativeNet.directed).
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
			t.Skipf("simtest: node %q is a binary (%s): natively its process would need a host name of its own, which this machine does not resolve, and the ports it listens on, which its peers listen on too on one localhost; it runs under `seedfall test` only", n.name, n.bin.Pkg)
		}
	}
	nn := newNativeNet(t)
	var order []string
	t.Cleanup(func() { nn.stopAll(order) })
	for _, nd := range d.nodes {
		order = append(order, nd.name)
		if !nn.open(nd) {
			t.FailNow()
		}
	}
	// Every node's function runs at once (a node may wait for its peers); the workload
	// starts once they all returned.
	var wg sync.WaitGroup
	ok := make([]bool, len(d.nodes))
	for i, nd := range d.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok[i] = nn.run(nd.name)
		}()
	}
	wg.Wait()
	for i := range d.nodes {
		if !ok[i] {
			t.FailNow()
		}
	}
	wt := &T{caller: nn.caller("workload"), native: t}
	if len(d.nativeSteps) > 0 {
		done, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			runNativeSchedule(wt, d.nativeSteps, done)
		}()
		defer func() { close(done); <-stopped }() // no step after the test ends
	}
	d.workload(wt)
}
