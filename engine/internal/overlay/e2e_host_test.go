package overlay

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// This file runs overlay-built guests under wazero with a small stand-in
// for seedfall's host: the seedfall socket calls, and the WASI calls Go
// makes on socket fds (fd_read, fd_write, fd_close, fd_fdstat_get,
// fd_fdstat_set_flags, sock_accept, sock_shutdown, poll_oneoff), over an
// in-memory network in real time. It follows docs/ABI.md; it is not the
// engine's host, only a check that the guest side does what it should.

const (
	eSuccess      = 0
	eAgain        = 6
	eBadf         = 8
	eConnRefused  = 14
	eHostUnreach  = 23
	eInval        = 28
	eNotSock      = 57
	ePipe         = 64
	eAddrInUse    = 3
	firstSocketFd = 100
)

type tsock struct {
	node   string
	port   int
	listen bool

	backlog []*tsock // listener: established, not yet accepted

	// connection
	peer       *tsock
	connecting bool
	refused    bool
	buf        []byte // bytes readable here
	eof        bool   // peer will write no more
	closed     bool
}

type tnet struct {
	mu       sync.Mutex
	cond     *sync.Cond
	nodes    map[string]bool
	ips      map[netip.Addr]string
	fds      map[string]map[int32]*tsock // node → fd → socket
	nextFd   map[string]int32
	listen   map[string]map[int]*tsock // node → port → listener
	nextPort int
	stopping bool
	stdout   map[string]*strings.Builder
	dials    []string // node->target text, as sock_dial got it
}

func newTnet(nodes ...string) *tnet {
	n := &tnet{
		nodes:    map[string]bool{},
		fds:      map[string]map[int32]*tsock{},
		nextFd:   map[string]int32{},
		listen:   map[string]map[int]*tsock{},
		nextPort: 40000,
		stdout:   map[string]*strings.Builder{},
	}
	n.cond = sync.NewCond(&n.mu)
	for _, name := range nodes {
		n.nodes[name] = true
		n.fds[name] = map[int32]*tsock{}
		n.nextFd[name] = firstSocketFd
		n.listen[name] = map[int]*tsock{}
		n.stdout[name] = &strings.Builder{}
	}
	var err error
	if n.ips, err = NodeIPs(nodes); err != nil {
		panic(err)
	}
	return n
}

func (n *tnet) addFd(node string, s *tsock) int32 {
	fd := n.nextFd[node]
	n.nextFd[node]++
	n.fds[node][fd] = s
	return fd
}

func (n *tnet) readable(s *tsock) bool {
	if s.listen {
		return len(s.backlog) > 0 || s.closed
	}
	return len(s.buf) > 0 || s.eof || s.refused || s.closed
}

func (n *tnet) writable(s *tsock) bool { return !s.listen && !s.connecting }

func (n *tnet) stop() {
	n.mu.Lock()
	n.stopping = true
	n.cond.Broadcast()
	n.mu.Unlock()
}

func u32(stack []uint64, i int) uint32 { return uint32(stack[i]) }

func str(m api.Module, ptr, l uint32) string {
	b, ok := m.Memory().Read(ptr, l)
	if !ok {
		panic("out of range")
	}
	return string(b)
}

func (n *tnet) hostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	b := r.NewHostModuleBuilder(HostModule)
	fn := func(name string, params int, f func(ctx context.Context, m api.Module, stack []uint64) uint32) {
		ps := make([]api.ValueType, params)
		for i := range ps {
			ps[i] = api.ValueTypeI32
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			stack[0] = uint64(f(ctx, m, stack))
		}), ps, []api.ValueType{api.ValueTypeI32}).Export(name)
	}
	fn("sock_listen", 3, func(_ context.Context, m api.Module, st []uint64) uint32 {
		addr := str(m, u32(st, 0), u32(st, 1))
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			return eInval
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			return eInval
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		node := m.Name()
		if port == 0 {
			port = n.nextPort
			n.nextPort++
		}
		if n.listen[node][port] != nil {
			return eAddrInUse
		}
		s := &tsock{node: node, port: port, listen: true}
		n.listen[node][port] = s
		m.Memory().WriteUint32Le(u32(st, 2), uint32(n.addFd(node, s)))
		return eSuccess
	})
	fn("sock_dial", 3, func(_ context.Context, m api.Module, st []uint64) uint32 {
		addr := str(m, u32(st, 0), u32(st, 1))
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			return eInval
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			return eInval
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		node := m.Name()
		target := host
		if host == "localhost" || host == "127.0.0.1" {
			target = node
		} else if ip, err := netip.ParseAddr(host); err == nil {
			target = n.ips[ip]
		}
		n.dials = append(n.dials, node+"->"+addr)
		if !n.nodes[target] {
			return eHostUnreach
		}
		c := &tsock{node: node, port: n.nextPort, connecting: true}
		n.nextPort++
		fd := n.addFd(node, c)
		m.Memory().WriteUint32Le(u32(st, 2), uint32(fd))
		// The connection request arrives a little later.
		time.AfterFunc(2*time.Millisecond, func() {
			n.mu.Lock()
			defer n.mu.Unlock()
			c.connecting = false
			ln := n.listen[target][port]
			if ln == nil || ln.closed {
				c.refused = true
			} else {
				srv := &tsock{node: target, port: port, peer: c}
				c.peer = srv
				ln.backlog = append(ln.backlog, srv)
			}
			n.cond.Broadcast()
		})
		return eSuccess
	})
	fn("sock_status", 1, func(_ context.Context, m api.Module, st []uint64) uint32 {
		n.mu.Lock()
		defer n.mu.Unlock()
		s := n.fds[m.Name()][int32(u32(st, 0))]
		switch {
		case s == nil:
			return eBadf
		case s.listen:
			return eNotSock
		case s.connecting:
			return eAgain
		case s.refused:
			return eConnRefused
		}
		return eSuccess
	})
	fn("sock_linger", 3, func(_ context.Context, m api.Module, st []uint64) uint32 {
		// The stand-in keeps no linger state: this test's guest never aborts.
		return eSuccess
	})
	fn("sock_addr", 5, func(_ context.Context, m api.Module, st []uint64) uint32 {
		n.mu.Lock()
		defer n.mu.Unlock()
		s := n.fds[m.Name()][int32(u32(st, 0))]
		if s == nil {
			return eBadf
		}
		var text string
		switch which := u32(st, 1); {
		case which == 0:
			text = net.JoinHostPort(s.node, strconv.Itoa(s.port))
		case s.peer != nil:
			text = net.JoinHostPort(s.peer.node, strconv.Itoa(s.peer.port))
		default:
			return eInval
		}
		if int(u32(st, 3)) < len(text) {
			return eInval
		}
		m.Memory().Write(u32(st, 2), []byte(text))
		m.Memory().WriteUint32Le(u32(st, 4), uint32(len(text)))
		return eSuccess
	})
	return b
}

func (n *tnet) wasiModule(r wazero.Runtime) wazero.HostModuleBuilder {
	b := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	fn := func(name string, params int, f func(ctx context.Context, m api.Module, stack []uint64) uint32) {
		ps := make([]api.ValueType, params)
		for i := range ps {
			ps[i] = api.ValueTypeI32
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			stack[0] = uint64(f(ctx, m, stack))
		}), ps, []api.ValueType{api.ValueTypeI32}).Export(name)
	}
	iovecs := func(m api.Module, ptr, cnt uint32) [][2]uint32 {
		var out [][2]uint32
		for i := uint32(0); i < cnt; i++ {
			p, _ := m.Memory().ReadUint32Le(ptr + 8*i)
			l, _ := m.Memory().ReadUint32Le(ptr + 8*i + 4)
			out = append(out, [2]uint32{p, l})
		}
		return out
	}
	fn("fd_write", 4, func(_ context.Context, m api.Module, st []uint64) uint32 {
		fd := int32(u32(st, 0))
		var data []byte
		for _, v := range iovecs(m, u32(st, 1), u32(st, 2)) {
			data = append(data, str(m, v[0], v[1])...)
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if fd == 1 || fd == 2 {
			n.stdout[m.Name()].Write(data)
			m.Memory().WriteUint32Le(u32(st, 3), uint32(len(data)))
			return eSuccess
		}
		s := n.fds[m.Name()][fd]
		switch {
		case s == nil:
			return eBadf
		case s.listen:
			return eInval
		case s.connecting:
			return eAgain
		case s.refused:
			return eConnRefused
		case s.peer == nil || s.peer.closed:
			return ePipe
		}
		s.peer.buf = append(s.peer.buf, data...)
		n.cond.Broadcast()
		m.Memory().WriteUint32Le(u32(st, 3), uint32(len(data)))
		return eSuccess
	})
	fn("fd_read", 4, func(_ context.Context, m api.Module, st []uint64) uint32 {
		fd := int32(u32(st, 0))
		n.mu.Lock()
		defer n.mu.Unlock()
		if fd == 0 {
			m.Memory().WriteUint32Le(u32(st, 3), 0)
			return eSuccess
		}
		s := n.fds[m.Name()][fd]
		switch {
		case s == nil:
			return eBadf
		case s.listen:
			return eInval
		case s.refused:
			return eConnRefused
		case len(s.buf) == 0 && s.eof:
			m.Memory().WriteUint32Le(u32(st, 3), 0)
			return eSuccess
		case len(s.buf) == 0:
			return eAgain
		}
		total := 0
		for _, v := range iovecs(m, u32(st, 1), u32(st, 2)) {
			k := min(int(v[1]), len(s.buf))
			m.Memory().Write(v[0], s.buf[:k])
			s.buf = s.buf[k:]
			total += k
		}
		m.Memory().WriteUint32Le(u32(st, 3), uint32(total))
		return eSuccess
	})
	fn("fd_close", 1, func(_ context.Context, m api.Module, st []uint64) uint32 {
		fd := int32(u32(st, 0))
		n.mu.Lock()
		defer n.mu.Unlock()
		s := n.fds[m.Name()][fd]
		if s == nil {
			return eSuccess
		}
		delete(n.fds[m.Name()], fd)
		s.closed = true
		if s.listen {
			delete(n.listen[s.node], s.port)
		} else if s.peer != nil {
			s.peer.eof = true
		}
		n.cond.Broadcast()
		return eSuccess
	})
	fn("fd_fdstat_get", 2, func(_ context.Context, m api.Module, st []uint64) uint32 {
		fd := int32(u32(st, 0))
		n.mu.Lock()
		defer n.mu.Unlock()
		var stat [24]byte
		switch {
		case fd <= 2:
			stat[0] = 2 // CHARACTER_DEVICE
		case n.fds[m.Name()][fd] != nil:
			stat[0] = 6 // SOCKET_STREAM
			stat[2] = 4 // NONBLOCK
		default:
			return eBadf
		}
		binary.LittleEndian.PutUint64(stat[8:], ^uint64(0))
		binary.LittleEndian.PutUint64(stat[16:], ^uint64(0))
		m.Memory().Write(u32(st, 1), stat[:])
		return eSuccess
	})
	fn("fd_fdstat_set_flags", 2, func(_ context.Context, m api.Module, st []uint64) uint32 { return eSuccess })
	fn("sock_accept", 3, func(_ context.Context, m api.Module, st []uint64) uint32 {
		n.mu.Lock()
		defer n.mu.Unlock()
		ln := n.fds[m.Name()][int32(u32(st, 0))]
		switch {
		case ln == nil:
			return eBadf
		case !ln.listen:
			return eNotSock
		case len(ln.backlog) == 0:
			return eAgain
		}
		c := ln.backlog[0]
		ln.backlog = ln.backlog[1:]
		m.Memory().WriteUint32Le(u32(st, 2), uint32(n.addFd(m.Name(), c)))
		return eSuccess
	})
	fn("sock_shutdown", 2, func(_ context.Context, m api.Module, st []uint64) uint32 {
		n.mu.Lock()
		defer n.mu.Unlock()
		s := n.fds[m.Name()][int32(u32(st, 0))]
		if s == nil {
			return eBadf
		}
		if u32(st, 1)&2 != 0 && s.peer != nil {
			s.peer.eof = true
			n.cond.Broadcast()
		}
		return eSuccess
	})
	fn("poll_oneoff", 4, func(ctx context.Context, m api.Module, st []uint64) uint32 {
		in, out, nsub := u32(st, 0), u32(st, 1), u32(st, 2)
		mem := m.Memory()
		type sub struct {
			userdata uint64
			tag      byte
			fd       int32
			timeout  time.Duration
		}
		var subs []sub
		var deadline time.Time
		for i := uint32(0); i < nsub; i++ {
			raw, _ := mem.Read(in+48*i, 48)
			s := sub{userdata: binary.LittleEndian.Uint64(raw), tag: raw[8]}
			if s.tag == 0 {
				s.timeout = time.Duration(binary.LittleEndian.Uint64(raw[24:]))
				if d := time.Now().Add(s.timeout); deadline.IsZero() || d.Before(deadline) {
					deadline = d
				}
			} else {
				s.fd = int32(binary.LittleEndian.Uint32(raw[16:]))
			}
			subs = append(subs, s)
		}
		var timer *time.Timer
		if !deadline.IsZero() {
			timer = time.AfterFunc(time.Until(deadline), func() {
				n.mu.Lock()
				n.cond.Broadcast()
				n.mu.Unlock()
			})
			defer timer.Stop()
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		for {
			nev := uint32(0)
			for _, s := range subs {
				ready := false
				switch s.tag {
				case 0:
					ready = !time.Now().Before(deadline)
				case 1, 2:
					if s.fd <= 2 {
						ready = true
					} else if so := n.fds[m.Name()][s.fd]; so == nil {
						ready = true
					} else if s.tag == 1 {
						ready = n.readable(so)
					} else {
						ready = n.writable(so)
					}
				}
				if ready {
					var ev [32]byte
					binary.LittleEndian.PutUint64(ev[0:], s.userdata)
					ev[10] = s.tag
					mem.Write(out+32*nev, ev[:])
					nev++
				}
			}
			if nev > 0 {
				mem.WriteUint32Le(u32(st, 3), nev)
				return eSuccess
			}
			if n.stopping {
				panic(sys.NewExitError(0))
			}
			n.cond.Wait()
		}
	})
	return b
}
