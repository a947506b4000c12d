// Command client is the kvlog example's workload. It writes keys, remembers every value
// the server acknowledged, and checks that the server still answers with them across
// crashes, restarts and partitions. It exits 0 when every check passed and 1, with a
// line that starts "acknowledged write lost:", when the server lost an acknowledged
// write.
//
// Outside the simulator, point it at a server with SEEDFALL_ADDR_server=host:port.
package main

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
	serverAddr  = "server:7000"
	puts        = 60
	keys        = 16
	checkEvery  = 10
	dialTimeout = time.Second
	redialDelay = 50 * time.Millisecond
	// requestTimeout bounds one request; a partition or a dead server turns into an
	// error, and the request is retried on a new connection.
	requestTimeout = 2 * time.Second
	// Values are small documents: an id ("v38") and a body of minBody to
	// minBody+bodySpread bytes. Records then span disk sectors, so a crash during an
	// append can tear one at a sector boundary, as real disks do (seedfall tears at
	// 512-byte boundaries by default).
	minBody    = 100
	bodySpread = 1000
)

// weak makes a deliberately weak workload for mutation testing: it writes but never
// reads anything back, so it cannot notice a lost write (seedfall.weak.json).
var weak = flag.Bool("weak", false, "write only, never read back (a blind workload)")

// settle is the pause before the final read-back. Virtual time costs nothing, and a
// longer settle gives the world more time to crash the server again (a write glued onto
// a torn tail is lost only at the next restart).
var settle = flag.Duration("settle", time.Second, "pause before the final read-back")

func main() {
	flag.Parse()
	c := &client{
		acked: map[string]string{},
		maybe: map[string][]string{},
	}
	for i := range puts {
		key, value := fmt.Sprintf("k%d", i%keys), document(i, minBody+rand.IntN(bodySpread+1))
		c.put(key, value)
		// Inside the simulator math/rand's top-level functions are seeded by the host
		// (random_get), so these pauses follow the seed.
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		if (i+1)%checkEvery == 0 && !*weak {
			c.check()
			fmt.Printf("%d puts acknowledged, %d keys checked\n", i+1, len(c.acked))
		}
	}
	// Let the system settle (and the world crash it some more) before the final
	// read-back: a write glued onto a torn tail is lost only at the next restart.
	time.Sleep(*settle)
	if *weak {
		fmt.Printf("ok: %d puts acknowledged (weak workload: nothing read back)\n", puts)
		return
	}
	c.check()
	fmt.Printf("ok: %d keys checked after %d puts (%d retries)\n", len(c.acked), puts, c.retries)
}

type client struct {
	conn net.Conn
	r    *bufio.Reader
	// acked holds, per key, the value of the last acknowledged PUT.
	acked map[string]string
	// maybe holds, per key, the values of PUT attempts that got no reply. The server may
	// have applied such an attempt, and may still apply it later: a partition stalls a
	// dropped connection's bytes rather than losing them, so they can arrive after a
	// newer PUT of the same key was acknowledged. Each is an acceptable answer from then
	// on, so the check never cries wolf; values are unique per PUT, which keeps it sharp.
	maybe   map[string][]string
	retries int
}

// put sets key to value, retrying on a new connection until the server says OK.
func (c *client) put(key, value string) {
	for {
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

// check reads back every acknowledged key and exits 1 at the first one lost.
func (c *client) check() {
	ks := make([]string, 0, len(c.acked))
	for k := range c.acked {
		ks = append(ks, k)
	}
	slices.Sort(ks) // map order follows the seed; the check order should not
	for _, k := range ks {
		reply := c.get(k)
		got, found := strings.CutPrefix(reply, "VAL ")
		if found && (got == c.acked[k] || slices.Contains(c.maybe[k], got)) {
			continue
		}
		fmt.Printf("acknowledged write lost: %s=%s, server now answers %q\n", k, id(c.acked[k]), id(reply))
		os.Exit(1)
	}
}

// document is the value of the i-th PUT: its id "v<i>", a dot, and a body of n bytes
// that differs per PUT (values are unique, which keeps the check sharp).
func document(i, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for j := range b {
		b[j] = alphabet[(i*7+j)%len(alphabet)]
	}
	return fmt.Sprintf("v%d.%s", i, b)
}

// id shortens a value, or a reply carrying one, to the value's id for messages.
func id(s string) string {
	head, _, _ := strings.Cut(s, ".")
	return head
}

// request sends one line and reads one reply line. sent reports whether the request may
// have reached the server.
func (c *client) request(line string) (reply string, sent bool, err error) {
	if c.conn == nil {
		c.connect()
	}
	deadline := time.Now().Add(requestTimeout)
	if err := c.conn.SetDeadline(deadline); err != nil {
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

// retry notes a failed request before it is tried again. An ERR reply (the server could
// not store the write) is retried too, after a pause.
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
		return // the timeout itself was the pause
	}
	time.Sleep(redialDelay)
}
