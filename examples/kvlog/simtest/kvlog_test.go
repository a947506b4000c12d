// Package kvlogsim is examples/kvlog as a simulation test: the store (kvstore) as a
// node function, the check of its client, the faults of seedfall.json.
package kvlogsim

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/examples/kvlog/kvstore"
	"github.com/seedfall/seedfall/simtest"
)

// store serves kvstore's log: fixed false keeps appending after a torn tail (the bug).
func store(fixed bool) func(*simtest.N) {
	return func(n *simtest.N) {
		s, err := kvstore.Open(filepath.Join(n.Dir("kv"), "kv.log"), fixed)
		if err != nil {
			n.Fatal(err)
		}
		n.Cleanup(func() { s.Close() })
		n.Handle("put", s.Put) // durable before it returns
		n.Handle("get", func(k string) (string, bool) { return s.Get(k) })
	}
}

// workload is the kvlog client's: 60 PUTs of documents of 100 to 1,100 bytes, so that
// records span sectors and a crash can tear one; a 10 s settle before the last check.
func workload(t *simtest.T) {
	last, value := -1, ""
	kvsim.CheckWith(t, "kv", kvcheck.Workload{
		Puts: 60, Keys: 16, CheckEvery: 10, Settle: 10 * time.Second,
		Value: func(i, _ int) string {
			if i != last {
				last, value = i, document(i, 100+rand.IntN(1001))
			}
			return value
		},
		Short: func(s string) string { id, _, _ := strings.Cut(s, "."); return id },
	})
}

func document(i, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for j := range b {
		b[j] = alphabet[(i*7+j)%len(alphabet)]
	}
	return fmt.Sprintf("v%d.%s", i, b)
}

var faults = simtest.Faults{CrashPerSec: 0.5, TornWrites: true, PartitionPerSec: 0.2}

// TestTornTail finds kvlog's bug: recovery keeps appending after a torn tail, and the
// next recovery stops at the tear, losing every acknowledged write after it.
func TestTornTail(t *testing.T) {
	simtest.Run(t, faults, simtest.Node("kv", store(false)), simtest.Workload(workload))
}

// TestTornTailFixed is the same test with the recovery that truncates the tail.
func TestTornTailFixed(t *testing.T) {
	simtest.Run(t, faults, simtest.Node("kv", store(true)), simtest.Workload(workload))
}
