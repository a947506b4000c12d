// Package kvcheck is the workload shared by the real-library examples (tidwall-wal,
// buntdb, rosedb): it writes keys through a server's line protocol, remembers every
// value the server acknowledged, and reads them all back across crashes and restarts.
// Main exits 1 with a line that starts "acknowledged write lost:" when the server no
// longer answers with an acknowledged value (or one of the unacknowledged attempts it
// may have applied).
package kvcheck

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
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

// Workload is the shape of one run: how many PUTs, over how many keys, how often to read
// everything back, and what the values are.
type Workload struct {
	Puts, Keys, CheckEvery int
	// Value returns the value the attempt-th try of PUT i sends. Values must be unique
	// per PUT, which keeps the check sharp.
	Value func(i, attempt int) string
	// Blind writes but never reads anything back, so it cannot notice a lost write: a
	// deliberately weak workload for mutation testing.
	Blind bool
	// Settle is the pause before the final read-back. Virtual time costs nothing, and a
	// longer settle gives the world more time to crash the server again (a write glued
	// onto a torn tail is lost only at the next restart).
	Settle time.Duration
	// Short shortens a value, or a reply carrying one, for the "acknowledged write lost"
	// line; nil prints them whole.
	Short func(string) string
}

// Main runs the workload; each example's client command is just a call to it.
func Main() {
	puts := flag.Int("puts", 150, "number of PUTs")
	keys := flag.Int("keys", 16, "number of distinct keys")
	checkEvery := flag.Int("check-every", 10, "read every acknowledged key back after this many PUTs")
	pad := flag.Int("pad", 40, "values get a random padding of 0 to `n` bytes, so entries differ in length")
	flag.Parse()
	Run(Workload{
		Puts: *puts, Keys: *keys, CheckEvery: *checkEvery, Settle: time.Second,
		// Each attempt writes a fresh value, so a retry after a crash is a new write of
		// its own length rather than a byte-for-byte repeat of the last.
		Value: func(i, attempt int) string {
			value := fmt.Sprintf("v%d", i)
			if attempt > 0 {
				value += fmt.Sprintf(".%d", attempt)
			}
			if *pad > 0 {
				value += "-" + strings.Repeat(string(rune('0'+i%10)), rand.IntN(*pad+1))
			}
			return value
		},
	})
}

// Run runs w against the server and exits 1 at the first acknowledged write lost.
func Run(w Workload) {
	c := &client{acked: map[string]string{}, maybe: map[string][]string{}, short: w.Short}
	if c.short == nil {
		c.short = func(s string) string { return s }
	}
	for i := range w.Puts {
		c.put(fmt.Sprintf("k%d", i%w.Keys), func(attempt int) string { return w.Value(i, attempt) })
		// Inside the simulator math/rand's top-level functions are seeded by the host
		// (random_get), so these pauses follow the seed.
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		if (i+1)%w.CheckEvery == 0 && !w.Blind {
			c.check()
			fmt.Printf("%d puts acknowledged, %d keys checked\n", i+1, len(c.acked))
		}
	}
	time.Sleep(w.Settle)
	if w.Blind {
		fmt.Printf("ok: %d puts acknowledged (weak workload: nothing read back)\n", w.Puts)
		return
	}
	c.check()
	fmt.Printf("ok: %d keys checked after %d puts (%d retries)\n", len(c.acked), w.Puts, c.retries)
}

type client struct {
	conn net.Conn
	r    *bufio.Reader
	// acked holds, per key, the value of the last acknowledged PUT; maybe the values of
	// attempts that got no reply, which the server may have applied.
	acked   map[string]string
	maybe   map[string][]string
	retries int
	short   func(string) string
}

func (c *client) put(key string, valueOf func(attempt int) string) {
	for attempt := 0; ; attempt++ {
		value := valueOf(attempt)
		reply, sent, err := c.request("PUT " + key + " " + value)
		if err == nil && reply == "OK" {
			c.acked[key] = value
			return
		}
		if sent && !slices.Contains(c.maybe[key], value) {
			c.maybe[key] = append(c.maybe[key], value)
		}
		c.retry(err, reply)
	}
}

func (c *client) get(key string) string {
	for {
		reply, _, err := c.request("GET " + key)
		if err == nil && (reply == "NONE" || strings.HasPrefix(reply, "VAL ")) {
			return reply
		}
		c.retry(err, reply)
	}
}

func (c *client) check() {
	ks := make([]string, 0, len(c.acked))
	for k := range c.acked {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		reply := c.get(k)
		got, found := strings.CutPrefix(reply, "VAL ")
		if found && (got == c.acked[k] || slices.Contains(c.maybe[k], got)) {
			continue
		}
		fmt.Printf("acknowledged write lost: %s=%s, server now answers %q\n", k, c.short(c.acked[k]), c.short(reply))
		os.Exit(1)
	}
}

func (c *client) request(line string) (reply string, sent bool, err error) {
	if c.conn == nil {
		c.connect()
	}
	if err := c.conn.SetDeadline(time.Now().Add(requestTimeout)); err != nil {
		c.drop()
		return "", false, err
	}
	if _, err := io.WriteString(c.conn, line+"\n"); err != nil {
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
	if err == nil {
		if c.retries <= 3 {
			fmt.Printf("server answered %q; retrying\n", reply)
		}
		time.Sleep(redialDelay)
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return
	}
	time.Sleep(redialDelay)
}
