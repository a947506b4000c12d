// Command client is this example's workload: it publishes messages through the server,
// consumes some as it goes, drains the queue at the end, and exits 1 with a line that
// starts "acknowledged message lost:" when a message the server acknowledged was never
// delivered.
//
// Consuming is destructive (ReadChan hands a message over and the queue forgets it), so
// a NEXT whose reply is lost, because the server crashed while answering, may have
// consumed a message nobody saw. The check allows for exactly that: the j-th
// unanswered NEXT since the last delivered message excuses the j-th acknowledged
// message after it, the one such a NEXT could at most have taken (the queue is FIFO
// and this is its only consumer). Messages delivered twice (a restart re-reads from
// the last read position the queue synced) are allowed: delivery is at least once.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/sim"
)

const (
	serverAddr     = "server:7000"
	dialTimeout    = time.Second
	redialDelay    = 50 * time.Millisecond
	requestTimeout = 2 * time.Second
)

func main() {
	msgs := flag.Int("msgs", 150, "messages to publish")
	consumeEvery := flag.Int("consume-every", 3, "consume two messages after every `n` publishes")
	pad := flag.Int("pad", 40, "payloads get a random padding of 0 to `n` bytes")
	flag.Parse()
	c := &client{acked: map[string]int{}, sent: map[string]int{}, delivered: map[string]bool{}, last: -1}
	for i := range *msgs {
		for attempt := 0; ; attempt++ {
			p := fmt.Sprintf("m%d.%d-%s", i, attempt, strings.Repeat(string(rune('a'+i%26)), rand.IntN(*pad+1)))
			reply, sent, err := c.request("PUB " + p)
			if sent {
				c.sent[p] = i
			}
			if err == nil && reply == "OK" {
				c.acked[p] = i
				c.order = append(c.order, p)
				break
			}
			c.retry(err, reply)
		}
		if (i+1)%*consumeEvery == 0 {
			c.next()
			c.next()
		}
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	}
	time.Sleep(time.Second)
	for n := 0; c.next(); n++ {
		if n > 10**msgs {
			fmt.Printf("the queue keeps delivering: %d messages drained and still not empty\n", n)
			os.Exit(1)
		}
	}
	c.check()
}

type client struct {
	conn net.Conn
	r    *bufio.Reader
	// sent maps every payload that may have reached the server to its message number,
	// acked the acknowledged ones; order lists those in publish order.
	sent  map[string]int
	acked map[string]int
	order []string
	// delivered holds the payloads NEXT returned; last is the message number of the
	// latest one (-1: none yet), unanswered the NEXTs without a reply since then, and
	// excused the acknowledged payloads those NEXTs may have consumed unseen.
	delivered  map[string]bool
	last       int
	unanswered int
	excused    []string
	retries    int
}

// next asks for the next message and reports whether there was one.
func (c *client) next() bool {
	for {
		reply, sent, err := c.request("NEXT")
		if err == nil && reply == "EMPTY" {
			return false
		}
		if q, ok := strings.CutPrefix(reply, "MSG "); err == nil && ok {
			p, uerr := strconv.Unquote(q)
			if uerr != nil {
				fmt.Printf("the server answered a malformed message: %s\n", reply)
				os.Exit(1)
			}
			i, ok := c.sent[p]
			if !ok {
				fmt.Printf("delivered a message never published: %q\n", p)
				os.Exit(1)
			}
			c.delivered[p] = true
			c.last, c.unanswered = i, 0
			return true
		}
		if sent && err != nil {
			c.unanswered++
			c.excuse()
		}
		c.retry(err, reply)
	}
}

// excuse records the acknowledged message the latest unanswered NEXT may have consumed:
// the unanswered-th acknowledged one after the last delivered.
func (c *client) excuse() {
	n := 0
	for _, p := range c.order {
		if c.acked[p] > c.last {
			if n++; n == c.unanswered {
				c.excused = append(c.excused, p)
				return
			}
		}
	}
	// Not published yet: the queue held nothing acknowledged for it to take.
}

func (c *client) check() {
	for _, p := range c.order {
		if !c.delivered[p] && !slices.Contains(c.excused, p) {
			fmt.Printf("acknowledged message lost: %s (message %d of %d acknowledged, never delivered)\n", short(p), c.acked[p]+1, len(c.order))
			os.Exit(1)
		}
	}
	fmt.Printf("ok: %d acknowledged messages delivered (%d unanswered NEXTs excused %d, %d retries)\n", len(c.order), len(c.excused), len(c.excused), c.retries)
}

func short(p string) string {
	if len(p) > 16 {
		return p[:16] + "…"
	}
	return p
}

// request sends one line and reads one reply line; sent reports whether the request
// may have reached the server.
func (c *client) request(line string) (reply string, sent bool, err error) {
	if c.conn == nil {
		c.connect()
	}
	if err := c.conn.SetDeadline(time.Now().Add(requestTimeout)); err != nil {
		c.drop()
		return "", false, err
	}
	if _, err := c.conn.Write([]byte(line + "\n")); err != nil {
		c.drop()
		return "", true, err
	}
	reply, err = c.r.ReadString('\n')
	if err != nil {
		c.drop()
		return "", true, err
	}
	return strings.TrimSuffix(reply, "\n"), true, nil
}

// connect dials until it succeeds; the engine's horizon bounds the wait.
func (c *client) connect() {
	for {
		conn, err := sim.DialTimeout("tcp", serverAddr, dialTimeout)
		if err == nil {
			c.conn, c.r = conn, bufio.NewReader(conn)
			return
		}
		time.Sleep(redialDelay)
	}
}

func (c *client) drop() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.r = nil, nil
	}
}

func (c *client) retry(err error, reply string) {
	c.retries++
	var ne net.Error
	if err == nil {
		if c.retries <= 3 {
			fmt.Printf("server answered %q; retrying\n", reply)
		}
	} else if errors.As(err, &ne) && ne.Timeout() {
		return
	}
	time.Sleep(redialDelay)
}
