// Package queuecheck is the line protocol of the queue examples (examples/diskqueue,
// examples/dque): Serve puts a queue behind it, and Main is the workload that checks it.
//
//	PUB payload\n  ->  OK\n             (the queue accepted it)
//	NEXT\n         ->  MSG "payload"\n  (the next message, Go-quoted; the queue forgets it)
//	                   EMPTY\n          (nothing to read)
//
// Main publishes messages, consumes some as it goes, drains the queue at the end, and
// exits 1 with a line that starts "acknowledged message lost:" when a message the
// server acknowledged was never delivered.
//
// Consuming is destructive (the queue hands a message over and forgets it), so
// a NEXT whose reply is lost, because the server crashed while answering, may have
// consumed a message nobody saw. The check allows for exactly that: the j-th
// unanswered NEXT since the last delivered message excuses the j-th acknowledged
// message after it, the one such a NEXT could at most have taken (the queue is FIFO
// and this is its only consumer). Messages delivered twice (a restart re-reads from
// the last read position the queue synced) are allowed: delivery is at least once.
package queuecheck

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/examples/kvcheck"
)

// Main runs the workload: call it from the workload's main.
func Main() {
	msgs := flag.Int("msgs", 150, "messages to publish")
	consumeEvery := flag.Int("consume-every", 3, "consume two messages after every `n` publishes")
	pad := flag.Int("pad", 40, "payloads get a random padding of 0 to `n` bytes")
	flag.Parse()
	c := &client{Conn: kvcheck.Conn{Addr: "server:7000"}, acked: map[string]int{}, sent: map[string]int{}, delivered: map[string]bool{}, last: -1}
	for i := range *msgs {
		for attempt := 0; ; attempt++ {
			p := fmt.Sprintf("m%d.%d-%s", i, attempt, strings.Repeat(string(rune('a'+i%26)), rand.IntN(*pad+1)))
			reply, sent, err := c.Request("PUB " + p)
			if sent {
				c.sent[p] = i
			}
			if err == nil && reply == "OK" {
				c.acked[p] = i
				c.order = append(c.order, p)
				break
			}
			c.Retry(err, reply)
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
	kvcheck.Conn
	// sent maps every payload that may have reached the server to its message number,
	// acked the acknowledged ones; order lists those in publish order.
	sent  map[string]int
	acked map[string]int
	order []string
	// delivered holds the payloads NEXT returned; last is the message number of the
	// latest one (-1: none yet), unanswered the NEXTs without a reply since then (and
	// lostNexts in all), and excused the acknowledged payloads those NEXTs may have
	// consumed unseen.
	delivered  map[string]bool
	last       int
	unanswered int
	lostNexts  int
	excused    []string
}

// next asks for the next message and reports whether there was one.
func (c *client) next() bool {
	for {
		reply, sent, err := c.Request("NEXT")
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
			c.lostNexts++
			c.excuse()
		}
		c.Retry(err, reply)
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
	fmt.Printf("ok: %d acknowledged messages delivered (%d unanswered NEXTs excused %d of them, %d retries)\n", len(c.order), c.lostNexts, len(c.excused), c.Retries)
}

func short(p string) string {
	if len(p) > 16 {
		return p[:16] + "…"
	}
	return p
}
