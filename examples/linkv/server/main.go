// Command server is one node of linkv, a primary-backup replicated key-value store
// kept in memory.
//
// Writes go to the primary, which forwards each one synchronously to the backup before
// it applies the write and acknowledges it. If the backup does not answer in time, the
// primary drops it and goes on alone; every resyncEvery it tries to bring the backup
// back with a full copy of its state.
//
// Reads are served by whichever node the client asks. The primary answers from its own
// state. The backup, by default, confirms with the primary: it asks the primary and
// answers with what the primary says, so every read reflects every acknowledged write.
// With -stale-reads the backup answers from its own state instead, which is fast but
// wrong: once the primary has dropped it, the backup misses writes the primary has
// acknowledged, and a client that reads from it sees stale values.
//
// The protocol is one line per request and one per reply, on port 7000:
//
//	GET k          -> VAL v | NONE | ERR why
//	PUT k v        -> OK | ERR why            (primary only)
//	REPL k v       -> OK                      (primary to backup)
//	SYNC n         -> OK, after n lines "k v" (primary to backup: replace the state)
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/sim"
)

const (
	port        = ":7000"
	peerTimeout = 200 * time.Millisecond // one request to the other node
	resyncEvery = 500 * time.Millisecond
)

func main() {
	role := flag.String("role", "primary", "primary or backup")
	peer := flag.String("peer", "", "address of the other node (default: the other role's name, port 7000)")
	stale := flag.Bool("stale-reads", false, "backup: serve reads from local state without confirming with the primary (the bug)")
	flag.Parse()
	if *role != "primary" && *role != "backup" {
		fmt.Fprintf(os.Stderr, "server: -role must be primary or backup, not %q\n", *role)
		os.Exit(2)
	}
	if *peer == "" {
		other := "backup"
		if *role == "backup" {
			other = "primary"
		}
		*peer = other + port
	}
	s := &server{primary: *role == "primary", staleReads: *stale, data: map[string]string{}}
	s.peer = &peerConn{addr: *peer}
	ln, err := sim.Listen("tcp", port)
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s serving (stale reads: %v)\n", *role, *stale)
	if s.primary {
		s.backupUp = true
		go s.resyncLoop()
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintf(os.Stderr, "server: %v\n", err)
			os.Exit(1)
		}
		go s.serve(c)
	}
}

type server struct {
	primary    bool
	staleReads bool

	// mu orders every write and read of data. The primary holds it for writing across
	// the forward to the backup, so a write is applied on both nodes, or dropped from
	// the backup, before any later request sees it.
	mu   sync.RWMutex
	data map[string]string

	peer     *peerConn // primary: to the backup; backup: to the primary
	backupUp bool      // primary: the backup receives every write (guarded by mu)
}

func (s *server) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		var reply string
		switch {
		case len(f) == 2 && f[0] == "GET":
			reply = s.get(f[1])
		case len(f) == 3 && f[0] == "PUT":
			reply = s.put(f[1], f[2])
		case len(f) == 3 && f[0] == "REPL" && !s.primary:
			s.mu.Lock()
			s.data[f[1]] = f[2]
			s.mu.Unlock()
			reply = "OK"
		case len(f) == 2 && f[0] == "SYNC" && !s.primary:
			reply = s.sync(r, f[1])
		default:
			reply = "ERR bad request"
		}
		if _, err := fmt.Fprintf(c, "%s\n", reply); err != nil {
			return
		}
	}
}

func (s *server) get(k string) string {
	if !s.primary && !s.staleReads {
		// Confirm with the primary: its answer is the read.
		reply, err := s.peer.request("GET " + k)
		if err != nil {
			return "ERR primary unreachable"
		}
		return reply
	}
	s.mu.RLock()
	v, ok := s.data[k]
	s.mu.RUnlock()
	if !ok {
		return "NONE"
	}
	return "VAL " + v
}

func (s *server) put(k, v string) string {
	if !s.primary {
		return "ERR not the primary"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backupUp {
		if reply, err := s.peer.request("REPL " + k + " " + v); err != nil || reply != "OK" {
			s.backupUp = false
			fmt.Printf("backup dropped: %v\n", errOr(err, reply))
		}
	}
	s.data[k] = v
	return "OK"
}

// sync replaces the backup's state with the n lines that follow.
func (s *server) sync(r *bufio.Reader, count string) string {
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		return "ERR bad count"
	}
	fresh := make(map[string]string, n)
	for i := 0; i < n; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			return "ERR short sync"
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return "ERR bad sync line"
		}
		fresh[f[0]] = f[1]
	}
	s.mu.Lock()
	s.data = fresh
	s.mu.Unlock()
	return "OK"
}

// resyncLoop brings a dropped backup back with a full copy of the primary's state.
func (s *server) resyncLoop() {
	for {
		time.Sleep(resyncEvery)
		s.mu.Lock()
		if !s.backupUp {
			keys := make([]string, 0, len(s.data))
			for k := range s.data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			fmt.Fprintf(&b, "SYNC %d", len(keys))
			for _, k := range keys {
				fmt.Fprintf(&b, "\n%s %s", k, s.data[k])
			}
			if reply, err := s.peer.request(b.String()); err == nil && reply == "OK" {
				s.backupUp = true
				fmt.Printf("backup resynced (%d keys)\n", len(keys))
			}
		}
		s.mu.Unlock()
	}
}

func errOr(err error, reply string) string {
	if err != nil {
		return err.Error()
	}
	return "reply " + strconv.Quote(reply)
}

// peerConn is a connection to the other node, used one request at a time. Any error
// or timeout closes it, so a late reply is never taken for the answer to a later
// request.
type peerConn struct {
	addr string
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

func (p *peerConn) request(req string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		c, err := sim.DialTimeout("tcp", p.addr, peerTimeout)
		if err != nil {
			return "", err
		}
		p.conn, p.r = c, bufio.NewReader(c)
	}
	p.conn.SetDeadline(time.Now().Add(peerTimeout))
	_, err := fmt.Fprintf(p.conn, "%s\n", req)
	var line string
	if err == nil {
		line, err = p.r.ReadString('\n')
	}
	if err != nil {
		p.conn.Close()
		p.conn, p.r = nil, nil
		if err == nil {
			err = errors.New("no reply")
		}
		return "", err
	}
	return strings.TrimSpace(line), nil
}
