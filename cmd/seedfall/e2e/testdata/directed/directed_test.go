// Package directed holds simulation tests with directed faults (TestSimtestDirected):
// a store that acknowledges a put before it is durable (it syncs every fourth put),
// crashed by the test at a moment it chooses and by random crashes (its twin).
package directed

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/simtest"
)

// store appends "k=v" lines to a log; it writes and fsyncs every fourth put (every put
// when durable), and acknowledges each at once: the bug.
func store(durable bool) func(n *simtest.N) {
	return func(n *simtest.N) {
		path := filepath.Join(n.Dir("s"), "log")
		kv := map[string]string{}
		if data, err := os.ReadFile(path); err == nil {
			for _, l := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					kv[k] = v
				}
			}
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			n.Fatal(err)
		}
		w := bufio.NewWriter(f)
		puts := 0
		n.Cleanup(func() { w.Flush(); f.Sync(); f.Close() })
		n.Handle("put", func(k, v string) error {
			kv[k] = v
			fmt.Fprintf(w, "%s=%s\n", k, v)
			if puts++; durable || puts%4 == 0 {
				if err := w.Flush(); err != nil {
					return err
				}
				return f.Sync()
			}
			return nil
		})
		n.Handle("get", func(k string) (string, bool) { v, ok := kv[k]; return v, ok })
	}
}

// crashThenRead puts three keys, crashes the store, restarts it and reads them back.
func crashThenRead(t *simtest.T) {
	for i := range 3 {
		if err := t.Call("s", "put", fmt.Sprintf("k%d", i), "v").Err(); err != nil {
			t.Fatalf("put k%d: %v", i, err)
		}
	}
	t.Crash("s")
	if err := t.Call("s", "get", "k0").Err(); err == nil {
		t.Fatalf("get k0 from a crashed node: no error")
	}
	t.Restart("s")
	checkAll(t, 3)
}

func checkAll(t *simtest.T, n int) {
	for i := range n {
		var v string
		var ok bool
		if err := t.Call("s", "get", fmt.Sprintf("k%d", i)).Scan(&v, &ok); err != nil {
			t.Fatalf("get k%d: %v", i, err)
		}
		if !ok {
			t.Fatalf("acknowledged write lost: k%d", i)
		}
	}
}

// TestCrash: the directed crash loses the unsynced puts, at every seed.
func TestCrash(t *testing.T) {
	simtest.Run(t, simtest.Node("s", store(false)), simtest.Workload(crashThenRead))
}

// TestCrashDurable: the same with a store that syncs every put passes.
func TestCrashDurable(t *testing.T) {
	simtest.Run(t, simtest.Node("s", store(true)), simtest.Workload(crashThenRead))
}

// TestCrashAmidPauses: the directed crash among random pauses, which the failure does
// not need: shrink drops them and keeps the test's own faults.
func TestCrashAmidPauses(t *testing.T) {
	simtest.Run(t, simtest.Faults{PausePerSec: 50, PauseDuration: time.Millisecond},
		simtest.Node("s", store(false)), simtest.Workload(func(t *simtest.T) {
			t.Sleep(100 * time.Millisecond)
			crashThenRead(t)
		}))
}

// TestRandomTwin finds the same bug with random crashes only: puts, and after every
// broken connection a read back of every acknowledged key.
func TestRandomTwin(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 2}, simtest.Node("s", store(false)),
		simtest.Workload(func(t *simtest.T) {
			acked := 0
			for i := 0; i < 200; i++ {
				err := t.Call("s", "put", fmt.Sprintf("k%d", acked), "v").Err()
				if err == nil {
					acked++
				}
				if err != nil || i%10 == 0 {
					for k := range acked {
						var ok bool
						for t.Call("s", "get", fmt.Sprintf("k%d", k)).Scan(new(string), &ok) != nil {
							t.Sleep(50 * time.Millisecond) // down or restarting: ask again
						}
						if !ok {
							t.Fatalf("acknowledged write lost: k%d", k)
						}
					}
				}
			}
		}))
}

// TestPartitionAndPause: a call across a directed partition fails, one after the heal
// succeeds; a pause delays an answer by its length.
func TestPartitionAndPause(t *testing.T) {
	simtest.Run(t, simtest.Node("s", store(true)), simtest.Workload(func(t *simtest.T) {
		if err := t.Call("s", "put", "k0", "v").Err(); err != nil {
			t.Fatalf("put: %v", err)
		}
		t.Partition("workload", "s")
		if err := t.Call("s", "get", "k0").Err(); err == nil {
			t.Fatalf("get across the partition: no error")
		}
		t.Heal("workload", "s")
		checkAll(t, 1)
		t.Pause("s", 300*time.Millisecond)
		start := time.Now()
		checkAll(t, 1)
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Fatalf("the paused node answered after %s", d)
		}
	}))
}
