// Command client is the workload of ../server: it gives -series series the samples
// 1..-samples, round robin (sample i of every series before sample i+1 of any), so
// that every series stays within a head chunk of the others and no append falls behind
// a compacted block. After an error or a server restart it asks every series' LAST and
// goes on from there: a crash may take the newest samples (the TSDB does not fsync a
// commit), and the server checks that what it reads back is always 1..n.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", "server:7000", "server `address`")
	series := flag.Int("series", 4, "number of series")
	samples := flag.Int64("samples", 600, "samples per series")
	giveUp := flag.Duration("give-up", 30*time.Second, "fail if the server answers nothing for this long")
	flag.Parse()
	c := &client{addr: *addr, giveUp: *giveUp}
	last := make([]int64, *series)
	for i := int64(1); i <= *samples; {
		if err := c.sync(last); err != nil {
			fail(err)
		}
		i = min(minOf(last)+1, *samples+1)
		for ; i <= *samples; i++ {
			ok := true
			for k := range last {
				if last[k] >= i {
					continue
				}
				if ans, err := c.ask(fmt.Sprintf("ADD s%d %d", k, i)); err != nil || ans != "OK" {
					ok = false
					break
				}
				last[k] = i
			}
			if !ok {
				break
			}
		}
	}
	if err := c.sync(last); err != nil {
		fail(err)
	}
	fmt.Printf("done: series at %v\n", last)
}

func minOf(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func fail(err error) {
	fmt.Println(err)
	os.Exit(1)
}

type client struct {
	addr   string
	giveUp time.Duration
	conn   net.Conn
	in     *bufio.Scanner
}

// sync reads every series' LAST, retrying until the server answers.
func (c *client) sync(last []int64) error {
	deadline := time.Now().Add(c.giveUp)
	for k := range last {
		for {
			ans, err := c.ask(fmt.Sprintf("LAST s%d", k))
			var n int64
			if err == nil {
				if _, perr := fmt.Sscanf(ans, "N %d", &n); perr == nil {
					last[k] = n
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("LAST s%d: no answer for %s (last: %q, %v)", k, c.giveUp, ans, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// ask sends one request and returns its answer; a broken connection is dropped, to be
// dialled again by the next request.
func (c *client) ask(req string) (string, error) {
	if c.conn == nil {
		conn, err := sim.DialTimeout("tcp", c.addr, time.Second)
		if err != nil {
			return "", err
		}
		c.conn, c.in = conn, bufio.NewScanner(conn)
	}
	c.conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintln(c.conn, req); err == nil && c.in.Scan() {
		return c.in.Text(), nil
	}
	c.conn.Close()
	c.conn = nil
	return "", fmt.Errorf("%s: connection lost", req)
}
