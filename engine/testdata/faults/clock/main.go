// Command clock is the guest of the clock fault tests. Every -every of its own time it
// prints "tick N wall=W mono=M": W is how far its wall clock (time.Now without the
// monotonic reading) moved since start, M how far its monotonic clock (time.Since)
// moved, both in milliseconds. If the monotonic clock ever goes back it exits 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	every := flag.Duration("every", 100*time.Millisecond, "tick interval (own clock)")
	n := flag.Int("n", 20, "ticks")
	flag.Parse()
	start := time.Now()
	wall0 := start.Round(0)
	var lastMono time.Duration
	for i := 1; i <= *n; i++ {
		before := time.Now()
		time.Sleep(*every)
		now := time.Now()
		mono := now.Sub(start)
		// A sleep lasts at least its duration on the monotonic clock, which never goes back.
		if mono < lastMono || now.Sub(before) < *every {
			fmt.Printf("MONOTONIC CLOCK WENT BACK: %s after %s, slept %s\n", mono, lastMono, now.Sub(before))
			os.Exit(1)
		}
		lastMono = mono
		fmt.Printf("tick %d wall=%d mono=%d\n", i, now.Round(0).Sub(wall0).Milliseconds(), mono.Milliseconds())
	}
	for {
		time.Sleep(time.Hour)
	}
}
