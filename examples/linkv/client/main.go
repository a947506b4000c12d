// Command client is linkv's workload. Several concurrent clients put and get a few keys,
// writes through the primary and reads from either node, and record every operation
// with sim.Call and Op.Return; seedfall checks the history for linearizability with the
// kv model. An operation without a reply in time is never returned: its outcome is
// unknown, and the checker lets it take effect at any point after its call, or never.
// The client exits 0: the verdict is the checker's.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/sim"
)

const (
	opTimeout   = 500 * time.Millisecond
	dialTimeout = 200 * time.Millisecond
)

func main() {
	clients := flag.Int("clients", 3, "concurrent clients")
	duration := flag.Duration("duration", 4*time.Second, "how long the clients run")
	keys := flag.Int("keys", 3, "number of keys")
	flag.Parse()

	deadline := time.Now().Add(*duration)
	var wg sync.WaitGroup
	results := make([]stats, *clients)
	for id := 0; id < *clients; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{id: id, conns: map[string]*conn{}}
			results[id] = c.run(deadline, *keys)
		}()
	}
	wg.Wait()
	var total stats
	for _, s := range results {
		total.ops += s.ops
		total.unknown += s.unknown
	}
	fmt.Printf("ok: %d operations, %d with unknown outcome\n", total.ops, total.unknown)
}

type stats struct{ ops, unknown int }

type client struct {
	id    int
	conns map[string]*conn
	seq   int
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

type input struct {
	Op    string `json:"op"`
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

type output struct {
	Found bool   `json:"found,omitempty"`
	Value string `json:"value,omitempty"`
}

func (c *client) run(deadline time.Time, keys int) stats {
	var st stats
	for time.Now().Before(deadline) {
		key := fmt.Sprintf("k%d", rand.IntN(keys))
		st.ops++
		if rand.IntN(2) == 0 {
			c.seq++
			value := fmt.Sprintf("c%d-%d", c.id, c.seq)
			op := sim.Call(c.id, input{Op: "put", Key: key, Value: value})
			if reply, ok := c.request("primary:7000", "PUT "+key+" "+value); ok && reply == "OK" {
				op.Return(output{})
			} else {
				st.unknown++
			}
		} else {
			node := "primary:7000"
			if rand.IntN(2) == 0 {
				node = "backup:7000"
			}
			op := sim.Call(c.id, input{Op: "get", Key: key})
			reply, ok := c.request(node, "GET "+key)
			switch {
			case ok && reply == "NONE":
				op.Return(output{})
			case ok && strings.HasPrefix(reply, "VAL "):
				op.Return(output{Found: true, Value: strings.TrimPrefix(reply, "VAL ")})
			default:
				st.unknown++ // no answer, or the node could not serve the read
			}
		}
		time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
	}
	return st
}

// request sends one request and waits for its reply. On an error or a timeout the
// connection is closed (a late reply must not answer a later request) and ok is false.
func (c *client) request(addr, req string) (string, bool) {
	cn := c.conns[addr]
	if cn == nil {
		nc, err := sim.DialTimeout("tcp", addr, dialTimeout)
		if err != nil {
			return "", false
		}
		cn = &conn{c: nc, r: bufio.NewReader(nc)}
		c.conns[addr] = cn
	}
	cn.c.SetDeadline(time.Now().Add(opTimeout))
	_, err := fmt.Fprintf(cn.c, "%s\n", req)
	var line string
	if err == nil {
		line, err = cn.r.ReadString('\n')
	}
	if err != nil {
		cn.c.Close()
		delete(c.conns, addr)
		return "", false
	}
	return strings.TrimSpace(line), true
}
