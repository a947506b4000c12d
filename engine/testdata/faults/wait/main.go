// Command wait is the workload of the fault tests whose nodes observe the faults
// themselves: it sleeps for -for (virtual time) and exits 0, which ends the run. With
// -setup-at it says its setup is complete (sim.SetupComplete) at that time; with
// -stop-at it asks for a quiet period of -stop-for (sim.StopFaults; 0: the rest of the
// run) at that time.
package main

import (
	"flag"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	d := flag.Duration("for", 2*time.Second, "how long to wait before ending the run")
	setupAt := flag.Duration("setup-at", -1, "call sim.SetupComplete at this time")
	stopAt := flag.Duration("stop-at", -1, "call sim.StopFaults at this time")
	stopFor := flag.Duration("stop-for", 0, "the quiet period sim.StopFaults asks for (0: the rest of the run)")
	flag.Parse()
	if *setupAt < 0 && *stopAt < 0 {
		time.Sleep(*d) // exactly as before the lifecycle flags, so traces stay the same
		return
	}
	start := time.Now()
	at := func(t time.Duration) {
		if left := t - time.Since(start); left > 0 {
			time.Sleep(left)
		}
	}
	type step struct {
		at time.Duration
		do func()
	}
	var steps []step
	if *setupAt >= 0 {
		steps = append(steps, step{*setupAt, func() { sim.SetupComplete(map[string]any{"ready": true}) }})
	}
	if *stopAt >= 0 {
		steps = append(steps, step{*stopAt, func() { sim.StopFaults(*stopFor) }})
	}
	if len(steps) == 2 && steps[1].at < steps[0].at {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, s := range steps {
		at(s.at)
		s.do()
	}
	at(*d)
}
