// Command client is the kvlog example's workload: kvcheck's (write keys, remember every
// value the server acknowledged, check that the server still answers with them across
// crashes, restarts and partitions) with kvlog's values. It exits 0 when every check
// passed and 1, with a line that starts "acknowledged write lost:", when the server lost
// an acknowledged write.
//
// Outside the simulator, point it at a server with SEEDFALL_ADDR_server=host:port.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/seedfall/seedfall/examples/kvcheck"
)

const (
	puts       = 60
	keys       = 16
	checkEvery = 10
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

// settle is the pause before the final read-back: a write glued onto a torn tail is lost
// only at the next restart, and a longer settle gives the world more time to cause it.
var settle = flag.Duration("settle", time.Second, "pause before the final read-back")

func main() {
	flag.Parse()
	// A PUT's value is drawn once and resent unchanged on every retry. (Not a map: a new
	// map draws its hash seed from the same random stream as math/rand, which would
	// shift every later draw.)
	last, value := -1, ""
	kvcheck.Run(kvcheck.Workload{
		Puts: puts, Keys: keys, CheckEvery: checkEvery, Blind: *weak, Settle: *settle,
		Value: func(i, attempt int) string {
			if i != last {
				last, value = i, document(i, minBody+rand.IntN(bodySpread+1))
			}
			return value
		},
		Short: id,
	})
}

// document is the value of the i-th PUT: its id "v<i>", a dot, and a body of n bytes
// that differs per PUT.
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
