// Package kvcheck is the workload shared by the real-library examples (tidwall-wal,
// buntdb, rosedb): it writes keys through a server's line protocol, remembers every
// value the server acknowledged, and reads them all back across crashes and restarts.
// Main exits 1 with a line that starts "acknowledged write lost:" when the server no
// longer answers with an acknowledged value (or one of the unacknowledged attempts it
// may have applied), and with "read of acknowledged key" when it keeps answering a GET
// of one with an error.
package kvcheck

import (
	"flag"
	"fmt"
	"math/rand/v2"
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
	Run(workload(*puts, *keys, *checkEvery, pad, *readBack))
}

// DefaultWorkload is the workload of Main's default flags, with values padded by 0 to
// pad bytes.
func DefaultWorkload(pad int) Workload { return workload(150, 16, 10, &pad, true) }

// workload is Main's workload.
func workload(puts, keys, checkEvery int, pad *int, readBack bool) Workload {
	return Workload{
		Puts: puts, Keys: keys, CheckEvery: checkEvery, Settle: time.Second, ReadBack: readBack,
		// A large -pad makes values kilobytes long: the failure line keeps their head
		// and length (values of the default -pad are printed whole).
		Short: func(s string) string {
			if len(s) <= 64 {
				return s
			}
			return fmt.Sprintf("%s...(%d bytes)", s[:40], len(s))
		},
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
	}
}

type client struct {
	Conn
	// acked holds, per key, the value of the last acknowledged PUT; maybe the values of
	// attempts that got no reply, which the server may have applied.
	acked map[string]string
	maybe map[string][]string
	short func(string) string
	// readBack turns on the read-back after a reconnection; readBackDials is the
	// connection count when every acknowledged key was last read back.
	readBack      bool
	readBackDials int
	readBacks     int
}

// put sets key to the value valueOf gives for each attempt, retrying on a new
// connection until the server says OK.
func (c *client) put(key string, valueOf func(attempt int) string) {
	for attempt := 0; ; attempt++ {
		c.readBackAfterReconnect()
		value := valueOf(attempt)
		reply, sent, err := c.Request("PUT " + key + " " + value)
		if err == nil && reply == "OK" {
			c.acked[key] = value
			return
		}
		if sent && !slices.Contains(c.maybe[key], value) {
			c.maybe[key] = append(c.maybe[key], value)
		}
		c.Retry(err, reply)
	}
}

// maxReadErrors is how many "ERR" answers in a row, on one connection, to a GET of an
// acknowledged key make the check fail: the server is up and cannot read data it
// acknowledged. A transient error (one bad read, a restart) is retried; a server that
// restarts in between starts the count again.
const maxReadErrors = 3

// get returns the server's answer to GET key: "VAL value" or "NONE". An acknowledged
// key that the server keeps answering with an error on one connection exits 1 with
// "read of acknowledged key ... fails" (a persistent read error is unavailable data).
func (c *client) get(key string) string {
	errs, dials := 0, c.Dials
	for {
		reply, _, err := c.Request("GET " + key)
		if err == nil && (reply == "NONE" || strings.HasPrefix(reply, "VAL ")) {
			return reply
		}
		if err == nil && strings.HasPrefix(reply, "ERR") {
			if c.Dials != dials {
				errs, dials = 0, c.Dials
			}
			if errs++; errs >= maxReadErrors {
				if _, acked := c.acked[key]; acked {
					fail("read of acknowledged key %s fails: the server answers %q, %d times in a row on one connection\n", key, c.short(reply), errs)
				}
			}
		}
		c.Retry(err, reply)
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
	c.Connect()
	// Every connection but the first is a reconnection; one made during the read-back
	// makes it start over.
	for c.Dials > 1 && c.readBackDials != c.Dials {
		c.readBackDials = c.Dials
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
		if when != "" {
			// Which check saw the loss is context: the same loss seen by the periodic
			// check is the same bug, with the same signature.
			sim.FailureContext(when)
		}
		fail("acknowledged write lost: %s=%s, server now answers %q%s\n", k, c.short(c.acked[k]), c.short(reply), when)
	}
}

// Failed, when set, receives the check's failure line in place of printing it and
// exiting 1 (package kvsim, natively: t.Fatalf). It must not return.
var Failed func(line string)

// fail prints the failure line and exits 1, or hands it to Failed.
func fail(format string, args ...any) {
	if Failed != nil {
		Failed(strings.TrimSuffix(fmt.Sprintf(format, args...), "\n"))
	}
	fmt.Printf(format, args...)
	os.Exit(1)
}
