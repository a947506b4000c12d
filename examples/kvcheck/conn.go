package kvcheck

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/seedfall/seedfall/sim"
)

// Conn is a client's connection to a line protocol (one request line, one reply line),
// dialed again after any failure: the client of every example whose server restarts.
type Conn struct {
	Addr string // the server's address, such as "server:7000"
	// Dial, when set, makes each connection in place of dialing Addr (kvsim connects
	// kvcheck to its bridge in the same process so).
	Dial func() (net.Conn, error)
	conn net.Conn
	r    *bufio.Reader
	// Dials counts the connections made; Retries the failed requests.
	Dials, Retries int
}

// Request sends one line and reads one reply line. sent reports whether the request
// may have reached the server.
func (c *Conn) Request(line string) (reply string, sent bool, err error) {
	if c.conn == nil {
		c.Connect()
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

// Connect dials until it succeeds, unless connected; the engine's time horizon bounds
// the wait.
func (c *Conn) Connect() {
	for c.conn == nil {
		var conn net.Conn
		var err error
		if c.Dial != nil {
			conn, err = c.Dial()
		} else {
			conn, err = sim.DialTimeout("tcp", c.Addr, dialTimeout)
		}
		if err == nil {
			c.conn, c.r = conn, bufio.NewReader(conn)
			c.Dials++
			return
		}
		time.Sleep(redialDelay)
	}
}

func (c *Conn) drop() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.r = nil, nil
	}
}

// Retry counts a failed request (err, or a reply that was not the one wanted) and
// waits before the next: the redial delay, except after a timeout, which waited
// already. The first three unwanted replies are printed.
func (c *Conn) Retry(err error, reply string) {
	c.Retries++
	if err == nil {
		if c.Retries <= 3 {
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
