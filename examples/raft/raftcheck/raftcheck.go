// Package raftcheck is the workload of the raft example (the client command, and
// the simulation test of simtest/): Workers concurrent clients (default 4) each send
// Ops operations through the servers' line API to the server they believe leads, following REDIRECT answers and trying the next server after an
// error or a timeout. Half the keys (k0, k1, ...) take PUTs, the other half (a0, a1,
// ...) APPENDs of a token unique to the attempt; a third of the operations are
// READs, which go through the raft log. When every worker is done, the client reads
// every key once more through the leader and checks that no acknowledged write was
// lost: every acknowledged APPEND's token is in its key's final value, and the final
// value of a PUT key comes from a PUT that no acknowledged PUT of that key followed.
// Run returns when all hold.
//
// Every request sent to a server is recorded with sim.Call/Return for the kv
// linearizability model. A request that got no definite answer (a timeout, a reset, a
// lost leadership, a redirect) stays unreturned, which the checker treats as "may or
// may not have happened", and its worker continues under a new history client id.
package raftcheck

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedfall/seedfall/sim"
)

// Options shape the workload (the client command's flags).
type Options struct {
	Nodes   string        // comma-separated server node names
	Port    int           // line API port of the servers
	Workers int           // concurrent clients
	Ops     int           // operations per client
	Keys    int           // keys: half take PUTs (k0, k1, ...), half APPENDs (a0, a1, ...)
	Pause   time.Duration // each client pauses up to this long between operations
	Timeout time.Duration // how long a request may take
	GiveUp  time.Duration // fail if no server answers one operation definitely for this long
}

// Defaults are the client command's default flags.
var Defaults = Options{Nodes: "n1,n2,n3", Port: 8000, Workers: 4, Ops: 100, Keys: 8,
	Pause: 100 * time.Millisecond, Timeout: 3 * time.Second, GiveUp: 60 * time.Second}

// The options of the run, and where its failure goes: one workload per process.
var (
	nodes, port, workers, ops, keys = &opt.Nodes, &opt.Port, &opt.Workers, &opt.Ops, &opt.Keys
	pause, timeout, giveUpIn        = &opt.Pause, &opt.Timeout, &opt.GiveUp
	opt                             Options
	failLine                        func(string)
)

// write is one PUT or APPEND attempt, for the durability check.
type write struct {
	key, value   string
	call, ret    time.Duration // since start; ret is set only if acknowledged
	acknowledged bool
}

type client struct {
	servers []string
	start   time.Time
	nextID  atomic.Int64 // history client ids; each worker starts with its own

	mu      sync.Mutex
	leader  int // index into servers of the believed leader
	writes  []write
	leaders []string // servers that acknowledged writes, in order of first ack
}

// Run runs the workload with o; fail gets the failure line ("FAIL ...") and must not
// return (print it and exit 1, or a simulation test's t.Fatalf).
func Run(o Options, fail func(line string)) {
	opt, failLine = o, fail
	c := &client{servers: strings.Split(*nodes, ","), start: time.Now()}
	c.nextID.Store(int64(*workers))
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.work(w)
		}()
	}
	wg.Wait()
	fmt.Printf("all %d clients done after %s\n", *workers, time.Since(c.start).Round(time.Millisecond))
	c.finalCheck()
}

// conn is one worker's connection to one server.
type conn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
}

// ask sends one request line and returns the answer line, or an error after the
// timeout. After an error the connection is closed and the next ask redials.
func (s *conn) ask(req string) (string, error) {
	if s.c == nil {
		c, err := net.DialTimeout("tcp", s.addr, *timeout)
		if err != nil {
			return "", err
		}
		s.c, s.r = c, bufio.NewReader(c)
	}
	s.c.SetDeadline(time.Now().Add(*timeout))
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

func (s *conn) close() {
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
}

// worker is one concurrent client.
type worker struct {
	c     *client
	id    int
	hist  int // current history client id
	conns []*conn
	// confirmed is true while the leader hint has been confirmed by a definite answer
	// and nothing has failed since.
	confirmed bool
}

func (c *client) newWorker(id int, hist int) *worker {
	w := &worker{c: c, id: id, hist: hist}
	for _, s := range c.servers {
		w.conns = append(w.conns, &conn{addr: fmt.Sprintf("%s:%d", s, *port)})
	}
	return w
}

func (c *client) work(id int) {
	w := c.newWorker(id, id)
	half := max(1, *keys/2)
	for i := range *ops {
		k := rand.IntN(half)
		switch rand.IntN(6) {
		case 0:
			w.read(fmt.Sprintf("k%d", k))
		case 1:
			w.read(fmt.Sprintf("a%d", k))
		case 2, 3:
			w.write("PUT", fmt.Sprintf("k%d", k), fmt.Sprintf("c%d.%d", id, i))
		default:
			w.write("APPEND", fmt.Sprintf("a%d", k), fmt.Sprintf("c%d.%d,", id, i))
		}
		time.Sleep(time.Duration(rand.Int64N(int64(*pause) + 1)))
	}
	for _, s := range w.conns {
		s.close()
	}
}

// write sends one PUT or APPEND until a server acknowledges it or says it did not
// happen (a redirect); an attempt with an unknown outcome is not retried, since it may
// have been applied.
func (w *worker) write(op, key, value string) {
	in := map[string]any{"op": strings.ToLower(op), "key": key, "value": value}
	w.c.mu.Lock()
	idx := len(w.c.writes)
	w.c.writes = append(w.c.writes, write{key: key, value: value, call: time.Since(w.c.start)})
	w.c.mu.Unlock()
	ans, via := w.leaderOp(op+" "+key+" "+value, in, true)
	if strings.HasPrefix(ans, "OK ") {
		w.c.mu.Lock()
		w.c.writes[idx].acknowledged = true
		w.c.writes[idx].ret = time.Since(w.c.start)
		if !slices.Contains(w.c.leaders, via) {
			w.c.leaders = append(w.c.leaders, via)
		}
		w.c.mu.Unlock()
	}
}

// read reads key through the raft log on the leader and returns the answer.
func (w *worker) read(key string) string {
	ans, _ := w.leaderOp("READ "+key, map[string]any{"op": "get", "key": key}, false)
	return ans
}

// leaderOp sends req to the leader and records it in the history. A definite answer
// (OK, VAL, NONE) ends it. A REDIRECT or NOLEADER means the server did not apply it:
// the request is sent again, to the named leader or the next server. After an error
// or a timeout a write gives up (it returns ""), since it may have been applied; a
// read tries again. It fails the run if no definite answer comes within -give-up.
//
// Before recording a request after a failure, the worker finds a server that says it
// leads (LEADER, not recorded): a request that a follower refuses has no effect, but
// once recorded it would stay open in the history, and every open write multiplies
// the checker's work.
func (w *worker) leaderOp(req string, input map[string]any, isWrite bool) (answer, via string) {
	start := time.Now()
	for {
		li := w.findLeader(start, req)
		op := sim.Call(w.hist, input)
		ans, err := w.conns[li].ask(req)
		switch {
		case err == nil && strings.HasPrefix(ans, "OK "):
			op.Return(map[string]any{})
			return ans, w.c.servers[li]
		case err == nil && (ans == "NONE" || strings.HasPrefix(ans, "VAL ")):
			v, found := strings.CutPrefix(ans, "VAL ")
			if !found {
				v = ""
			}
			op.Return(map[string]any{"found": found, "value": v})
			return ans, w.c.servers[li]
		}
		// The outcome is unknown to the history: op stays open, and this client
		// continues under a new id.
		w.hist = int(w.c.nextID.Add(1) - 1)
		w.confirmed = false
		if err != nil {
			ans = err.Error()
		}
		fmt.Printf("client %d: %s via %s: %s\n", w.id, req, w.c.servers[li], ans)
		refused := err == nil && (ans == "NOLEADER" || strings.HasPrefix(ans, "REDIRECT "))
		if to := slices.Index(w.c.servers, strings.TrimPrefix(ans, "REDIRECT ")); err == nil && to >= 0 && to != li {
			w.setLeader(li, to)
		} else {
			w.setLeader(li, (li+1)%len(w.c.servers))
		}
		if isWrite && !refused {
			return "", ""
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// findLeader returns the index of a server that has just said it leads, asking the
// believed leader first and following redirects. After a definite answer it trusts the
// hint without asking.
func (w *worker) findLeader(start time.Time, req string) int {
	for {
		w.c.mu.Lock()
		li := w.c.leader
		w.c.mu.Unlock()
		if w.confirmed {
			return li
		}
		if time.Since(start) > *giveUpIn {
			fail("client %d: %s: no definite answer from any server for %s", w.id, req, *giveUpIn)
		}
		ans, err := w.conns[li].ask("LEADER")
		if err == nil && ans == "LEADER" {
			w.confirmed = true
			return li
		}
		if to := slices.Index(w.c.servers, strings.TrimPrefix(ans, "REDIRECT ")); err == nil && to >= 0 && to != li {
			w.setLeader(li, to)
			continue
		}
		w.setLeader(li, (li+1)%len(w.c.servers))
		time.Sleep(20 * time.Millisecond)
	}
}

// setLeader moves the shared leader hint from from to to, unless another worker
// already moved it.
func (w *worker) setLeader(from, to int) {
	w.c.mu.Lock()
	if w.c.leader == from {
		w.c.leader = to
	}
	w.c.mu.Unlock()
}

// finalCheck reads every key through the leader and checks the acknowledged writes.
func (c *client) finalCheck() {
	w := c.newWorker(*workers, int(c.nextID.Add(1)-1))
	half := max(1, *keys/2)
	lost := 0
	for k := range half {
		lost += c.checkPut(fmt.Sprintf("k%d", k), w.read(fmt.Sprintf("k%d", k)))
		lost += c.checkAppend(fmt.Sprintf("a%d", k), w.read(fmt.Sprintf("a%d", k)))
	}
	sim.Always(lost == 0, "every acknowledged write survives", nil)
	if lost > 0 {
		fail("%d acknowledged writes lost", lost)
	}
	acked := 0
	for _, wr := range c.writes {
		if wr.acknowledged {
			acked++
		}
	}
	sim.Sometimes(len(c.leaders) > 1, "writes acknowledged by more than one leader", nil)
	fmt.Printf("ok: %d of %d writes acknowledged, none lost; leaders %s\n", acked, len(c.writes), strings.Join(c.leaders, ","))
}

// checkPut checks a PUT key's final answer: it must come from a PUT attempt that no
// acknowledged PUT of the key followed (call after its return), and be NONE only if
// no PUT of the key was acknowledged. It returns the number of lost writes (0 or 1).
func (c *client) checkPut(key, ans string) int {
	v, found := strings.CutPrefix(ans, "VAL ")
	var lastAcked *write
	var from *write
	for i := range c.writes {
		wr := &c.writes[i]
		if wr.key != key {
			continue
		}
		if wr.acknowledged && (lastAcked == nil || wr.call > lastAcked.call) {
			lastAcked = wr
		}
		if found && wr.value == v {
			from = wr
		}
	}
	switch {
	case lastAcked == nil:
		return 0
	case !found:
		fmt.Printf("acknowledged write lost: PUT %s %s (acknowledged at %s), final read: NONE\n", key, lastAcked.value, lastAcked.ret.Round(time.Millisecond))
		return 1
	case from == nil:
		fmt.Printf("final read of %s: %q, which no client wrote\n", key, v)
		return 1
	case from.acknowledged && lastAcked.call > from.ret:
		fmt.Printf("acknowledged write lost: PUT %s %s (acknowledged at %s), final read: %s, written before it\n", key, lastAcked.value, lastAcked.ret.Round(time.Millisecond), v)
		return 1
	}
	return 0
}

// checkAppend checks an APPEND key's final value: every acknowledged token is in it,
// and every token in it was appended once by some attempt.
func (c *client) checkAppend(key, ans string) int {
	v, _ := strings.CutPrefix(ans, "VAL ")
	in := map[string]int{}
	for _, tok := range strings.SplitAfter(v, ",") {
		if tok != "" {
			in[tok]++
		}
	}
	lost := 0
	tried := map[string]bool{}
	for _, wr := range c.writes {
		if wr.key != key {
			continue
		}
		tried[wr.value] = true
		if wr.acknowledged && in[wr.value] == 0 {
			fmt.Printf("acknowledged write lost: APPEND %s %s (acknowledged at %s), final value %q\n", key, wr.value, wr.ret.Round(time.Millisecond), v)
			lost++
		}
	}
	toks := make([]string, 0, len(in))
	for tok := range in {
		toks = append(toks, tok)
	}
	slices.Sort(toks)
	for _, tok := range toks {
		if n := in[tok]; !tried[tok] || n > 1 {
			fmt.Printf("final value of %s has token %q %d times (attempted: %v)\n", key, tok, n, tried[tok])
			lost++
		}
	}
	return lost
}

func fail(format string, args ...any) {
	failLine(fmt.Sprintf("FAIL "+format, args...))
	panic("raftcheck: the fail function returned")
}
