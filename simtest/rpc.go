package simtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/internal/simdecl"
	"github.com/seedfall/seedfall/sim"
)

// Timeouts of a Call: the dial, and the whole request once connected.
const (
	dialTimeout = time.Second
	callTimeout = 2 * time.Second
)

// N is a node's view of the test: its disk, its handlers, calls to the other nodes.
type N struct {
	caller
	name, root string
	mu         sync.Mutex
	handlers   map[string]reflect.Value
	serving    bool
	fatal      func(msg string) // native: t.Errorf and unwind; sim: print and exit 1
	cleanups   []func()
	// Native only (nil under the simulator): pause holds a request while the node is
	// paused; track records the node's connections, closed when it stops.
	pause func()
	track func(c net.Conn, on bool)
	dirs  map[string]bool
}

func newN(name, root string, c caller) *N {
	n := &N{caller: c, name: name, root: root, handlers: map[string]reflect.Value{}, dirs: map[string]bool{}}
	n.fatal = func(msg string) {
		fmt.Fprintf(os.Stderr, "%s\n", msg)
		os.Exit(1)
	}
	return n
}

// Name is the node's name.
func (n *N) Name() string { return n.name }

// Dir returns the path of directory name on the node's disk, created (with every parent
// fsynced, so it survives a crash also under strict_dirs) if it does not exist. Under the
// simulator it is /data/<name>; natively a directory of the test's, kept while the test
// runs.
func (n *N) Dir(name string) string {
	dir := filepath.Join(n.root, name)
	if err := mkdirDurable(dir); err != nil {
		n.Fatalf("simtest: create %s: %v", dir, err)
	}
	return dir
}

// mkdirDurable creates dir and fsyncs the parent of every directory it creates.
func mkdirDurable(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirDurable(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	d, err := os.Open(filepath.Dir(dir))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Fatal reports a node that cannot start (its store does not open): under the
// simulator the node's process exits 1, which fails the run as any node's own exit does.
func (n *N) Fatal(args ...any) { n.fatal(fmt.Sprint(args...)) }

// Fatalf is Fatal with a format.
func (n *N) Fatalf(format string, args ...any) { n.fatal(fmt.Sprintf(format, args...)) }

// Logf prints a line to the node's output (the trace, under the simulator).
func (n *N) Logf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// Cleanup registers f to run when a native test ends (close the store). Under the
// simulator a node never ends on its own: the run's end or a crash stops it.
func (n *N) Cleanup(f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cleanups = append(n.cleanups, f)
}

// Handle registers fn as the handler of method. fn is any function whose parameters
// and results encode as JSON; a last result of type error is the call's error
// (Reply.Err). Register handlers before the node's function returns.
func (n *N) Handle(method string, fn any) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		n.Fatalf("simtest: Handle(%q): %T is not a function", method, fn)
	}
	if v.Type().IsVariadic() {
		n.Fatalf("simtest: Handle(%q): a variadic handler is not supported", method)
	}
	n.mu.Lock()
	serving := n.serving
	_, dup := n.handlers[method]
	if !serving && !dup {
		n.handlers[method] = v
	}
	n.mu.Unlock()
	switch {
	case serving:
		n.Fatalf("simtest: Handle(%q) after the node's function returned", method)
	case dup:
		n.Fatalf("simtest: Handle(%q) twice", method)
	}
}

// runCleanups runs the Cleanup functions, the last registered first, once.
func (n *N) runCleanups() {
	n.mu.Lock()
	fs := n.cleanups
	n.cleanups = nil
	n.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func (n *N) started() {
	n.mu.Lock()
	n.serving = true
	n.mu.Unlock()
}

// Listen listens on port of this node, for a protocol of the node's own (Addr names it
// to the others).
func (n *N) Listen(port int) (net.Listener, error) { return n.caller.listenPort(n.name, port) }

type request struct {
	Method string            `json:"m"`
	Args   []json.RawMessage `json:"a"`
}

type response struct {
	Results []json.RawMessage `json:"r,omitempty"`
	Err     *string           `json:"e,omitempty"`
}

// serve answers calls on ln until it fails.
func (n *N) serve(ln net.Listener) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go n.serveConn(conn)
	}
}

func (n *N) serveConn(conn net.Conn) {
	defer conn.Close()
	if n.track != nil {
		n.track(conn, true)
		defer n.track(conn, false)
	}
	r := bufio.NewReader(conn)
	var out []byte
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var resp response
		req, ok := parseRequest(line)
		if !ok {
			if err := json.Unmarshal(line, &req); err != nil {
				resp.Err = ptr(fmt.Sprintf("simtest: bad request: %v", err))
			}
		}
		if resp.Err == nil {
			if n.pause != nil {
				n.pause()
			}
			resp = n.dispatch(req)
		}
		out = appendResponse(out[:0], resp)
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}

func ptr[T any](v T) *T { return &v }

var errorType = reflect.TypeFor[error]()

func (n *N) dispatch(req request) (resp response) {
	n.mu.Lock()
	fn, ok := n.handlers[req.Method]
	n.mu.Unlock()
	if !ok {
		names := make([]string, 0, len(n.handlers))
		n.mu.Lock()
		for k := range n.handlers {
			names = append(names, k)
		}
		n.mu.Unlock()
		sort.Strings(names)
		return response{Err: ptr(fmt.Sprintf("simtest: node %s has no handler %q (it has %s)", n.name, req.Method, strings.Join(names, ", ")))}
	}
	if resp, ok := n.dispatchTyped(fn, req); ok {
		return resp
	}
	return n.dispatchReflect(fn, req)
}

// dispatchReflect calls any handler through reflection.
func (n *N) dispatchReflect(fn reflect.Value, req request) (resp response) {
	ft := fn.Type()
	if len(req.Args) != ft.NumIn() {
		return response{Err: ptr(fmt.Sprintf("simtest: %s.%s takes %d arguments, the call gave %d", n.name, req.Method, ft.NumIn(), len(req.Args)))}
	}
	in := make([]reflect.Value, ft.NumIn())
	for i := range in {
		p := reflect.New(ft.In(i))
		if err := decodeInto(req.Args[i], p); err != nil {
			return response{Err: ptr(fmt.Sprintf("simtest: %s.%s argument %d: %v", n.name, req.Method, i+1, err))}
		}
		in[i] = p.Elem()
	}
	out := fn.Call(in)
	if k := ft.NumOut(); k > 0 && ft.Out(k-1) == errorType {
		if e := out[k-1]; !e.IsNil() {
			return response{Err: ptr(e.Interface().(error).Error())}
		}
		out = out[:k-1]
	}
	for i, v := range out {
		data, err := appendValue(nil, v.Interface())
		if err != nil {
			return response{Err: ptr(fmt.Sprintf("simtest: %s.%s result %d: %v", n.name, req.Method, i+1, err))}
		}
		resp.Results = append(resp.Results, data)
	}
	return resp
}

// A Reply is the outcome of a Call: the handler's results, or an error.
type Reply struct {
	results []json.RawMessage
	err     error
}

// Err is nil, a *RemoteError (the handler returned an error: the node answered), or a
// *CallError (no answer: the node is down, partitioned away or too slow).
func (r *Reply) Err() error { return r.err }

// Scan decodes the handler's results into ptrs, in order, and returns Err if there is
// one.
func (r *Reply) Scan(ptrs ...any) error {
	if r.err != nil {
		return r.err
	}
	if len(ptrs) > len(r.results) {
		return fmt.Errorf("simtest: Scan of %d values from a reply of %d", len(ptrs), len(r.results))
	}
	for i, p := range ptrs {
		if err := decodeValue(r.results[i], p); err != nil {
			return fmt.Errorf("simtest: Scan result %d: %v", i+1, err)
		}
	}
	return nil
}

// RemoteError is a handler's error, as the node answered it.
type RemoteError struct {
	Node, Method, Msg string
}

func (e *RemoteError) Error() string { return e.Msg }

// CallError is a call that got no answer. Sent reports whether the request may have
// reached the node (then it may have been applied).
type CallError struct {
	Node, Method string
	Sent         bool
	Err          error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("call %s.%s: %v", e.Node, e.Method, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// caller makes calls to the nodes; one per process (the workload's, or a node's).
type caller struct{ *calls }

type calls struct {
	from  string // the process's name: a node's, or "workload"
	mu    sync.Mutex
	conns map[string]*rpcConn
	dials map[string]int
	net   *nativeNet // nil under the simulator
}

type rpcConn struct {
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

func newCaller() caller {
	return caller{&calls{conns: map[string]*rpcConn{}, dials: map[string]int{}}}
}

// Call calls method on node with args and waits for its reply, over one connection per
// node, dialed again after any failure.
func (c caller) Call(node, method string, args ...any) *Reply {
	line, err := appendRequest(nil, method, args)
	if err != nil {
		var ae *argError
		if errors.As(err, &ae) {
			return &Reply{err: fmt.Errorf("simtest: Call(%q, %q) argument %d: %v", node, method, ae.i+1, ae.err)}
		}
		return &Reply{err: fmt.Errorf("simtest: Call(%q, %q): %v", node, method, err)}
	}
	line = append(line, '\n')
	rc := c.conn(node)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fail := func(sent bool, err error) *Reply {
		if rc.conn != nil {
			rc.conn.Close()
			rc.conn, rc.r = nil, nil
		}
		return &Reply{err: &CallError{Node: node, Method: method, Sent: sent, Err: err}}
	}
	if c.net != nil {
		if err := c.net.reachable(c.from, node); err != nil {
			return fail(false, err)
		}
	}
	if rc.conn == nil {
		if err := c.dial(node, rc); err != nil {
			return fail(false, err)
		}
	}
	if err := rc.conn.SetDeadline(time.Now().Add(callTimeout)); err != nil {
		return fail(false, err)
	}
	if _, err := rc.conn.Write(line); err != nil {
		return fail(true, err)
	}
	data, err := rc.r.ReadBytes('\n')
	if err != nil {
		return fail(true, err)
	}
	resp, ok := parseResponse(data)
	if !ok {
		if err := json.Unmarshal(data, &resp); err != nil {
			return fail(true, fmt.Errorf("bad reply: %v", err))
		}
	}
	if resp.Err != nil {
		return &Reply{err: &RemoteError{Node: node, Method: method, Msg: *resp.Err}}
	}
	return &Reply{results: resp.Results}
}

// Connect dials node if this process has no connection to it.
func (c caller) Connect(node string) error {
	rc := c.conn(node)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.conn != nil {
		return nil
	}
	return c.dial(node, rc)
}

// drop closes this process's connection to node, if it has one.
func (c caller) drop(node string) {
	rc := c.conn(node)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.conn != nil {
		rc.conn.Close()
		rc.conn, rc.r = nil, nil
	}
}

// closeTo closes this process's connections to the nodes match picks (natively, when a
// node stops or a link is cut).
func (c *calls) closeTo(match func(from, to string) bool) {
	c.mu.Lock()
	var nodes []string
	for node := range c.conns {
		if match(c.from, node) {
			nodes = append(nodes, node)
		}
	}
	c.mu.Unlock()
	sort.Strings(nodes)
	for _, node := range nodes {
		caller{c}.drop(node)
	}
}

// Conns is how many connections this process made to node: a new one means the last
// broke (the node restarted, or the network reset it).
func (c caller) Conns(node string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dials[node]
}

func (c caller) conn(node string) *rpcConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc := c.conns[node]
	if rc == nil {
		rc = &rpcConn{}
		c.conns[node] = rc
	}
	return rc
}

func (c caller) dial(node string, rc *rpcConn) error {
	addr, err := c.Addr(node, simdecl.Port)
	if err != nil {
		return err
	}
	conn, err := sim.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return err
	}
	rc.conn, rc.r = conn, bufio.NewReader(conn)
	c.mu.Lock()
	c.dials[node]++
	c.mu.Unlock()
	return nil
}

// Addr is the address of port on node: "node:port" under the simulator, where each node
// is a host of its own; natively the localhost address its Listen got.
func (c caller) Addr(node string, port int) (string, error) {
	if c.net == nil {
		return fmt.Sprintf("%s:%d", node, port), nil
	}
	return c.net.addr(node, port)
}

func (c caller) listenPort(node string, port int) (net.Listener, error) {
	if c.net == nil {
		return listen(port)
	}
	return c.net.listen(node, port)
}

func listen(port int) (net.Listener, error) {
	return sim.Listen("tcp", fmt.Sprintf(":%d", port))
}
