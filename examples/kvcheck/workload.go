package kvcheck

import (
	"fmt"
	"math/rand/v2"
	"net"
	"time"
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
	// ReadBack reads every acknowledged key back after each reconnection (the server
	// restarted, or the connection broke), before the next write, so a crash that tore or
	// emptied an acknowledged value is seen before a retry overwrites it (issue 31).
	ReadBack bool
	// Short shortens a value, or a reply carrying one, for the "acknowledged write lost"
	// line; nil prints them whole.
	Short func(string) string
	// Addr is the server's address; "" is "server:7000", the examples' server node.
	Addr string
	// Dial, when set, makes the connections in place of dialing Addr.
	Dial func() (net.Conn, error)
}

// Run runs w against the server and exits 1 at the first acknowledged write lost.
func Run(w Workload) {
	addr := w.Addr
	if addr == "" {
		addr = serverAddr
	}
	c := &client{Conn: Conn{Addr: addr, Dial: w.Dial}, acked: map[string]string{}, maybe: map[string][]string{}, short: w.Short, readBack: w.ReadBack}
	if c.short == nil {
		c.short = func(s string) string { return s }
	}
	for i := range w.Puts {
		c.put(fmt.Sprintf("k%d", i%w.Keys), func(attempt int) string { return w.Value(i, attempt) })
		// Inside the simulator math/rand's top-level functions are seeded by the host
		// (random_get), so these pauses follow the seed.
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		if (i+1)%w.CheckEvery == 0 && !w.Blind {
			c.check("")
			fmt.Printf("%d puts acknowledged, %d keys checked\n", i+1, len(c.acked))
		}
	}
	time.Sleep(w.Settle)
	if w.Blind {
		fmt.Printf("ok: %d puts acknowledged (weak workload: nothing read back)\n", w.Puts)
		return
	}
	c.check("")
	if w.ReadBack {
		fmt.Printf("ok: %d keys checked after %d puts (%d retries, %d read-backs after a reconnection)\n", len(c.acked), w.Puts, c.Retries, c.readBacks)
		return
	}
	fmt.Printf("ok: %d keys checked after %d puts (%d retries)\n", len(c.acked), w.Puts, c.Retries)
}
