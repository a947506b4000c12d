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

// Main runs the workload; each example's client command is just a call to it.
func Main() {
	puts := flag.Int("puts", 150, "number of PUTs")
	keys := flag.Int("keys", 16, "number of distinct keys")
	checkEvery := flag.Int("check-every", 10, "read every acknowledged key back after this many PUTs")
	pad := flag.Int("pad", 40, "values get a random padding of 0 to `n` bytes, so entries differ in length")
	readBack := flag.Bool("readback", true, "read every acknowledged key back after each reconnection, before the next write (false: the checker before issue 31, for comparison)")
	flag.Parse()
	Run(Workload{
		Puts: *puts, Keys: *keys, CheckEvery: *checkEvery, Settle: time.Second, ReadBack: *readBack,
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

type client struct {
	conn net.Conn
	r    *bufio.Reader
	// acked holds, per key, the value of the last acknowledged PUT; maybe the values of
	// attempts that got no reply, which the server may have applied.
	acked   map[string]string
	maybe   map[string][]string
	retries int
	short   func(string) string
	// readBack turns on the read-back after a reconnection; reconnected is set by each
	// connection but the first and cleared once every acknowledged key was read back.
	readBack    bool
	connected   bool
	reconnected bool
	readBacks   int
}

// put sets key to the value valueOf gives for each attempt, retrying on a new
// connection until the server says OK.
func (c *client) put(key string, valueOf func(attempt int) string) {
	for attempt := 0; ; attempt++ {
		c.readBackAfterReconnect()
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

// get returns the server's answer to GET key: "VAL value" or "NONE".
func (c *client) get(key string) string {
	for {
		reply, _, err := c.request("GET " + key)
		if err == nil && (reply == "NONE" || strings.HasPrefix(reply, "VAL ")) {
			return reply
		}
		c.retry(err, reply)
	}
}

// readBackAfterReconnect connects if the connection broke and, if this is a new
// connection, reads every acknowledged key back before the caller writes. A crash during
// the read-back makes it start over, so the write that follows is always preceded by a
// complete read-back on the connection it is sent on.
func (c *client) readBackAfterReconnect() {
	if !c.readBack {
		return
	}
	if c.conn == nil {
		c.connect()
	}
	for c.reconnected {
		c.reconnected = false
		c.readBacks++
		c.check(" (read back after reconnecting, before the next write)")
	}
}

// check reads back every acknowledged key, in sorted order (map order follows the
// seed; the check order should not), and exits 1 at the first one lost, unless it
// answers its acknowledged value or one of its unacknowledged attempts; when is appended
// to the failure line, to say which check saw it.
func (c *client) check(when string) {
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
		fmt.Printf("acknowledged write lost: %s=%s, server now answers %q%s\n", k, c.short(c.acked[k]), c.short(reply), when)
		os.Exit(1)
	}
}

// request sends one line and reads one reply line. sent reports whether the request
// may have reached the server.
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

// connect dials until it succeeds; the engine's time horizon bounds the wait.
func (c *client) connect() {
	for {
		conn, err := sim.DialTimeout("tcp", serverAddr, dialTimeout)
		if err == nil {
			c.conn, c.r = conn, bufio.NewReader(conn)
			c.reconnected = c.connected
			c.connected = true
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
