// Command client is the etcdraft workload. Several concurrent clients send PUTs and
// GETs to random members (any member takes a PUT: a follower forwards the proposal to
// the leader; any member serves a linearizable GET through ReadIndex) and record every
// operation with sim.Call and Op.Return for seedfall's kv linearizability checker. An
// operation without a definite answer (timeout, error, a member that is down) is never
// returned: it may or may not have happened.
//
// Each client writes only its own keys, with increasing sequence numbers in the
// values, so that acknowledged writes can also be checked directly: at the end, after
// a settle, every key is read back through the cluster and must hold its last
// acknowledged value, or the value of a PUT that got no answer (one held up in the
// network or in raft may take effect after later PUTs). Otherwise the client prints
// "acknowledged write lost: ..." and exits 1.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/sim"
)

type input struct {
	Op    string `json:"op"`
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

type output struct {
	Found bool   `json:"found,omitempty"`
	Value string `json:"value,omitempty"`
}

var (
	nodes     []string
	port      int
	opTimeout time.Duration
	pad       int
)

func main() {
	nodeList := flag.String("nodes", "n1,n2,n3", "comma-separated member names")
	flag.IntVar(&port, "port", 8000, "members' line-protocol port")
	clients := flag.Int("clients", 3, "concurrent clients")
	keysPer := flag.Int("keys", 2, "keys written by each client")
	duration := flag.Duration("duration", 8*time.Second, "how long the clients run")
	flag.DurationVar(&opTimeout, "timeout", 1500*time.Millisecond, "how long a client waits for an answer")
	flag.IntVar(&pad, "pad", 300, "a PUT's value carries 0 to `n` bytes of padding, so WAL records differ in length and cross sector boundaries")
	settle := flag.Duration("settle", time.Second, "pause before the final read-back")
	flag.Parse()
	nodes = strings.Split(*nodeList, ",")

	var all []string
	for c := range *clients {
		for k := range *keysPer {
			all = append(all, keyName(c, k))
		}
	}
	start := time.Now()
	deadline := start.Add(*duration)
	cs := make([]*client, *clients)
	var wg sync.WaitGroup
	for c := range cs {
		cs[c] = &client{id: c, hist: c, stride: *clients, acked: map[string]int{}, unknown: map[string][]int{}, conns: map[string]*conn{}}
		for k := range *keysPer {
			cs[c].own = append(cs[c].own, keyName(c, k))
		}
		wg.Go(func() { cs[c].run(deadline, all) })
	}
	wg.Wait()
	time.Sleep(*settle)

	// Final read-back: every key of every client, each through the cluster until some
	// member answers, within 60s of virtual time.
	final := &client{id: 0, hist: 1000, stride: 1, conns: map[string]*conn{}}
	for _, c := range cs {
		for _, key := range c.own {
			v, found := final.readBack(key, 60*time.Second)
			seq := -1
			if found {
				seq = seqOf(v)
			}
			// The last acknowledged value, or any PUT whose outcome was unknown: one
			// held up in the network or in raft may take effect after later PUTs.
			want, acked := c.acked[key]
			switch {
			case slices.Contains(c.unknown[key], seq) || acked && seq == want || !acked && seq < 0:
			case acked:
				fmt.Printf("acknowledged write lost: %s=%s, cluster now answers %s\n", key, valueName(key, want), answer(v, found))
				os.Exit(1)
			default:
				fmt.Printf("value never written: %s=%s\n", key, answer(v, found))
				os.Exit(1)
			}
		}
	}
	var st stats
	for _, c := range cs {
		st.add(c.st)
	}
	fmt.Printf("ok: %d ops in %s (%d puts acknowledged, %d gets answered, %d unknown); %d keys read back\n",
		st.ops, time.Since(start).Round(time.Millisecond), st.putsOK, st.getsOK, st.unknown, len(all))
}

func keyName(c, k int) string              { return fmt.Sprintf("c%dk%d", c, k) }
func valueName(key string, seq int) string { return key + "-" + strconv.Itoa(seq) }

// seqOf returns the sequence number of a value written by put ("c0k1-17.xxx"), or -1.
func seqOf(v string) int {
	v, _, _ = strings.Cut(v, ".")
	i := strings.LastIndexByte(v, '-')
	n, err := strconv.Atoi(v[i+1:])
	if i < 0 || err != nil {
		return -1
	}
	return n
}

func answer(v string, found bool) string {
	if !found {
		return "NONE"
	}
	short, _, _ := strings.Cut(v, ".")
	return "VAL " + short + ".(padding)"
}

type stats struct{ ops, putsOK, getsOK, unknown int }

func (s *stats) add(o stats) {
	s.ops += o.ops
	s.putsOK += o.putsOK
	s.getsOK += o.getsOK
	s.unknown += o.unknown
}

type client struct {
	id      int
	hist    int // history client number; a new one after an operation left open
	stride  int
	own     []string
	seq     int
	acked   map[string]int   // key -> sequence number of the last acknowledged PUT
	unknown map[string][]int // key -> sequence numbers of PUTs without an answer
	conns   map[string]*conn
	st      stats
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

func (c *client) run(deadline time.Time, all []string) {
	for time.Now().Before(deadline) {
		node := nodes[rand.IntN(len(nodes))]
		if rand.IntN(2) == 0 {
			key := c.own[rand.IntN(len(c.own))]
			c.seq++
			c.put(node, key, c.seq)
		} else {
			c.get(node, all[rand.IntN(len(all))])
		}
		time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
	}
}

func (c *client) put(node, key string, seq int) {
	c.st.ops++
	value := valueName(key, seq) + "." + strings.Repeat("x", rand.IntN(pad+1))
	op := sim.Call(c.hist, input{Op: "put", Key: key, Value: value})
	if reply, ok := c.request(node, "PUT "+key+" "+value); ok && reply == "OK" {
		op.Return(output{})
		c.acked[key] = seq
		c.st.putsOK++
		return
	}
	c.unknown[key] = append(c.unknown[key], seq)
	c.unanswered()
}

// get reads key through node and reports the answer, if it got one.
func (c *client) get(node, key string) (string, bool, bool) {
	c.st.ops++
	op := sim.Call(c.hist, input{Op: "get", Key: key})
	reply, ok := c.request(node, "GET "+key)
	switch {
	case ok && reply == "NONE":
		op.Return(output{})
		c.st.getsOK++
		return "", false, true
	case ok && strings.HasPrefix(reply, "VAL "):
		v := strings.TrimPrefix(reply, "VAL ")
		op.Return(output{Found: true, Value: v})
		c.st.getsOK++
		return v, true, true
	}
	c.unanswered()
	return "", false, false
}

func (c *client) unanswered() {
	c.st.unknown++
	c.hist += c.stride
}

func (c *client) readBack(key string, limit time.Duration) (string, bool) {
	start := time.Now()
	for time.Since(start) < limit {
		if v, found, ok := c.get(nodes[rand.IntN(len(nodes))], key); ok {
			return v, found
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("no member answered GET %s in %s\n", key, limit)
	os.Exit(1)
	return "", false
}

// request sends one line and waits for the answer. On an error or a timeout the
// connection is closed, so that a late answer cannot answer a later request.
func (c *client) request(node, req string) (string, bool) {
	cn := c.conns[node]
	if cn == nil {
		nc, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", node, port), opTimeout)
		if err != nil {
			return "", false
		}
		cn = &conn{c: nc, r: bufio.NewReader(nc)}
		c.conns[node] = cn
	}
	cn.c.SetDeadline(time.Now().Add(opTimeout))
	_, err := fmt.Fprintf(cn.c, "%s\n", req)
	var line string
	if err == nil {
		line, err = cn.r.ReadString('\n')
	}
	if err != nil {
		cn.c.Close()
		delete(c.conns, node)
		return "", false
	}
	line = strings.TrimSuffix(line, "\n")
	if strings.HasPrefix(line, "ERR ") {
		return line, false
	}
	return line, true
}
