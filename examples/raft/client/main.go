// Command client is the workload of the raft example. It submits -n entries (PUT key
// value) through the servers' line API, to the leader it believes in, following
// REDIRECT answers and retrying elsewhere after an error or a timeout. After each
// acknowledged entry it polls every server until a majority has applied it, then reads
// it back through the leader (READ goes through the raft log). At the end it checks
// every entry again. It exits 0 when all hold.
//
// Every PUT and READ sent to a server is recorded with sim.Call/Return for the kv
// linearizability model; one that got no definite answer (timeout, lost leadership,
// redirect) stays unreturned, which the checker treats as "may or may not have
// happened".
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seedfall/seedfall/sim"
)

type server struct {
	name string
	addr string
	c    net.Conn
	r    *bufio.Reader
}

// ask sends one request line and returns the answer line, or an error after timeout.
func (s *server) ask(req string, timeout time.Duration) (string, error) {
	if s.c == nil {
		c, err := net.DialTimeout("tcp", s.addr, timeout)
		if err != nil {
			return "", err
		}
		s.c, s.r = c, bufio.NewReader(c)
	}
	s.c.SetDeadline(time.Now().Add(timeout))
	if _, err := fmt.Fprintf(s.c, "%s\n", req); err != nil {
		s.close()
		return "", err
	}
	line, err := s.r.ReadString('\n')
	if err != nil {
		s.close()
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (s *server) close() {
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
}

type cluster struct {
	servers []*server
	byName  map[string]*server
	leader  *server
	leaders []string // the servers that acknowledged entries, in order
	client  int      // history client id; a new one after an operation left open
}

func main() {
	nodes := flag.String("nodes", "n1,n2,n3", "comma-separated server node names")
	port := flag.Int("port", 8000, "line API port of the servers")
	n := flag.Int("n", 30, "entries to submit")
	every := flag.Duration("every", 30*time.Millisecond, "pause between entries")
	flag.Parse()
	c := &cluster{byName: map[string]*server{}}
	for _, name := range strings.Split(*nodes, ",") {
		s := &server{name: name, addr: fmt.Sprintf("%s:%d", name, *port)}
		c.servers = append(c.servers, s)
		c.byName[name] = s
	}
	c.leader = c.servers[0]
	for i := 0; i < *n; i++ {
		key, val := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		start := time.Now()
		ans := c.leaderOp("PUT "+key+" "+val, map[string]any{"op": "put", "key": key, "value": val})
		fmt.Printf("PUT %s via %s: %s in %s\n", key, c.leader.name, ans, time.Since(start).Round(time.Millisecond))
		if len(c.leaders) == 0 || c.leaders[len(c.leaders)-1] != c.leader.name {
			c.leaders = append(c.leaders, c.leader.name)
		}
		// The entry is committed: a majority must come to have applied it, and a
		// linearizable read must see it.
		c.onMajority(key, val, "acknowledged entry")
		c.read(key, val)
		time.Sleep(*every)
	}
	// Every entry is still there at the end (no acknowledged entry was lost to a
	// leader change).
	for i := 0; i < *n; i++ {
		key, val := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		c.onMajority(key, val, "final check: entry")
		c.read(key, val)
	}
	sim.Sometimes(len(c.leaders) > 1, "entries acknowledged by more than one leader", nil)
	fmt.Printf("ok: %d entries committed on a majority; leaders %s\n", *n, strings.Join(c.leaders, ","))
}

// leaderOp sends req to the leader until a leader answers it, following redirects and
// trying the next server after an error, and records each attempt in the history.
func (c *cluster) leaderOp(req string, input map[string]any) string {
	start := time.Now()
	for {
		if time.Since(start) > 30*time.Second {
			fail("%s: no answer from a leader after 30s", req)
		}
		op := sim.Call(c.client, input)
		ans, err := c.leader.ask(req, 3*time.Second)
		switch {
		case err == nil && strings.HasPrefix(ans, "OK "):
			op.Return(map[string]any{})
			return ans
		case err == nil && (ans == "NONE" || strings.HasPrefix(ans, "VAL ")):
			v, found := strings.CutPrefix(ans, "VAL ")
			op.Return(map[string]any{"found": found, "value": v})
			return ans
		}
		c.client++ // op stays open: its outcome is unknown
		if err == nil && strings.HasPrefix(ans, "REDIRECT ") {
			if s := c.byName[strings.TrimPrefix(ans, "REDIRECT ")]; s != nil && s != c.leader {
				c.leader = s
				continue
			}
		}
		if err != nil {
			ans = err.Error()
		}
		fmt.Printf("%s via %s: %s (retrying)\n", req, c.leader.name, ans)
		c.leader = c.servers[(slices.Index(c.servers, c.leader)+1)%len(c.servers)]
		time.Sleep(100 * time.Millisecond)
	}
}

// read reads key through the leader and fails unless it has val.
func (c *cluster) read(key, val string) {
	if ans := c.leaderOp("READ "+key, map[string]any{"op": "get", "key": key}); ans != "VAL "+val {
		fail("READ %s via %s: %s, want VAL %s", key, c.leader.name, ans, val)
	}
}

// onMajority polls the servers until a majority has applied key=val. Servers cut off
// by a partition do not answer, so it keeps asking for up to 30s of virtual time.
func (c *cluster) onMajority(key, val, what string) {
	majority := len(c.servers)/2 + 1
	start := time.Now()
	for {
		have := 0
		for _, s := range c.servers {
			// A server that does not answer within 300ms does not count.
			if ans, err := s.ask("GET "+key, 300*time.Millisecond); err == nil && ans == "VAL "+val {
				have++
			}
		}
		if have >= majority {
			sim.Always(true, "acknowledged entry applied on a majority", nil)
			return
		}
		if time.Since(start) > 30*time.Second {
			sim.Always(false, "acknowledged entry applied on a majority", map[string]any{"key": key})
			fail("%s %s=%s applied on %d of %d servers after 30s", what, key, val, have, len(c.servers))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fail(format string, args ...any) {
	fmt.Printf("FAIL "+format+"\n", args...)
	os.Exit(1)
}
