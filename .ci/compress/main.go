// Command compress measures time compression (BENCHMARKS.md, issue 29): it prepares a
// config once, runs seeds from..to in this process, and prints the virtual time, the
// wall time and the CPU time (getrusage: user+sys of the whole process, so GC and every
// goroutine count) of the runs alone, without start-up. Virtual seconds per CPU second is
// the compression per core, and holds on a loaded machine where wall time does not.
// -cpuprofile writes a Go CPU profile of the host process. Build it from the repository
// root: go build -o /tmp/compress ./.ci/compress (a dot directory: ./... skips it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/engine"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// usage is the process's system CPU time and minor page faults so far.
func usage() (sys time.Duration, minflt int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Stime.Nano()), ru.Minflt
}

func main() {
	cfgPath := flag.String("c", "", "config")
	from := flag.Int("from", 1, "")
	to := flag.Int("to", 1, "")
	out := flag.String("cpuprofile", "", "")
	flag.Parse()
	cfg, err := engine.LoadConfig(*cfgPath)
	if err != nil {
		panic(err)
	}
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		panic(err)
	}
	if *out != "" {
		f, _ := os.Create(*out)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	w0, c0 := time.Now(), cpu()
	s0, f0 := usage()
	var sw, virt, rw, hc, incs int64
	verdicts := map[string]int{}
	for seed := *from; seed <= *to; seed++ {
		r := s.Run(context.Background(), uint64(seed), engine.RunOptions{})
		sw += int64(r.Stats.Switches)
		hc += r.Stats.HostCalls
		incs += int64(r.Stats.Incarnations)
		virt += r.EndNS
		rw += r.Stats.WallNS
		verdicts[string(r.Verdict)]++
	}
	wall, c := time.Since(w0), cpu()-c0
	s1, f1 := usage()
	n := *to - *from + 1
	fmt.Printf("%s seeds %d-%d: wall %.2fs cpu %.2fs virt %.2fs runwall %.2fs | seeds/cpu-s %.3f virt/cpu %.2fx virt/wall %.2fx | switches %d cpu/switch %v | %v\n",
		*cfgPath, *from, *to, wall.Seconds(), c.Seconds(), float64(virt)/1e9, float64(rw)/1e9,
		float64(n)/c.Seconds(), float64(virt)/1e9/c.Seconds(), float64(virt)/float64(rw), sw, c/time.Duration(max(sw, 1)), verdicts)
	fmt.Printf("  sys %.2fs minflt %d | host calls %d (%.0f per virtual s, cpu/host call %v) | switches per virtual s %.0f | incarnations %d\n",
		(s1 - s0).Seconds(), f1-f0, hc, float64(hc)/(float64(virt)/1e9), c/time.Duration(max(hc, 1)), float64(sw)/(float64(virt)/1e9), incs)
}
