// Command workload drives the server and uses the Antithesis Go SDK unchanged. With
// -violate it breaks an assert.Always on purpose; with -setup-after N it calls
// lifecycle.SetupComplete after N answered requests.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/antithesishq/antithesis-sdk-go/assert"
	"github.com/antithesishq/antithesis-sdk-go/lifecycle"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	violate := flag.Bool("violate", false, "break an Always on purpose")
	unreachable := flag.Bool("unreachable", false, "reach an Unreachable on purpose")
	requests := flag.Int("requests", 20, "requests to send")
	pause := flag.Duration("pause", 50*time.Millisecond, "pause between requests")
	setupAfter := flag.Int("setup-after", 0, "call lifecycle.SetupComplete after this many answered requests")
	flag.Parse()

	answered := 0
	for i := 0; i < *requests; i++ {
		time.Sleep(*pause)
		n := rand.IntN(50)
		got, err := request(n)
		if err != nil {
			fmt.Printf("request %d: %v\n", n, err)
			continue
		}
		answered++
		if answered == *setupAfter {
			lifecycle.SetupComplete(map[string]any{"answered": answered})
		}
		assert.Always(got == 2*n, "server doubles", map[string]any{"n": n, "got": got})
		assert.Sometimes(n < 10, "workload sent a small number", map[string]any{"n": n})
	}
	if *violate {
		assert.Always(answered < 0, "answered count is negative", map[string]any{"answered": answered})
	}
	if *unreachable {
		assert.Unreachable("workload took the unreachable branch", map[string]any{"answered": answered})
	}
	if answered > 1_000_000 {
		// Never true: the catalog (antithesis_catalog.go) declares it, so the sweep
		// reports it as never reached.
		assert.Reachable("workload answered a million requests", nil)
	}
	assert.Reachable("workload finished", map[string]any{"answered": answered})
	fmt.Printf("ok: %d of %d requests answered\n", answered, *requests)
}

var conn net.Conn
var rd *bufio.Reader

func request(n int) (int, error) {
	if conn == nil {
		c, err := sim.DialTimeout("tcp", "server:7000", time.Second)
		if err != nil {
			return 0, err
		}
		conn, rd = c, bufio.NewReader(c)
	}
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(conn, "%d\n", n); err != nil {
		conn.Close()
		conn = nil
		return 0, err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		conn.Close()
		conn = nil
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(line))
}
