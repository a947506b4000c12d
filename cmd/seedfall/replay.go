package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// loadPlan reads a fault plan file.
func cmdReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	cfgPath := fs.String("c", "seedfall.json", "config `file`")
	tf := addTestFlags(fs)
	seed := fs.Uint64("seed", 0, "the seed to replay (required)")
	faults := fs.String("faults", "", "replay this fault plan `file` instead of the seed's own")
	save := fs.String("save", "", "save the run's applied faults as a plan `file` (replays exactly with -faults)")
	jsonOut := fs.Bool("json", false, "print the result as JSON (with the trace)")
	check := fs.Bool("check", false, "run twice and compare traces")
	mutation := fs.String("mutation", "", "run under a durability mutation of the simulated OS")
	quiet := fs.Bool("q", false, "do not print the trace")
	profile := fs.String("profile", "", "write a CPU profile of the guests (pprof format, for go tool pprof) to `file`")
	upgradeFrom := upgradeFromFlag(fs)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if code := tf.resolve(ctx, "replay", cfgPath, stderr); code != 0 {
		return code
	}
	if err := engineapi.CheckMutation(*mutation); err != nil {
		fmt.Fprintf(stderr, "seedfall replay: -mutation: %v\n", err)
		return exitUsage
	}
	if !flagSet(fs, "seed") {
		fmt.Fprintln(stderr, "seedfall replay: -seed is required")
		return exitUsage
	}
	var plan *engine.FaultPlan
	if *faults != "" {
		var err error
		if plan, err = cli.LoadPlan(*faults); err != nil {
			fmt.Fprintf(stderr, "seedfall replay: %v\n", err)
			return exitUsage
		}
	}
	sim, code := loadAndPrepareFrom(ctx, *cfgPath, *upgradeFrom, stderr, true)
	if sim == nil {
		return code
	}
	defer sim.Close()
	now := sim.Provenance(*cfgPath)
	if plan != nil {
		for _, w := range engineapi.PlanWarnings(*faults, plan.Provenance, now) {
			fmt.Fprintf(stderr, "seedfall replay: %s\n", w)
		}
	}
	opt := engine.RunOptions{Plan: plan, Trace: true, Check: *check, Mutation: *mutation}
	if !*jsonOut && !*quiet {
		opt.TraceHook = func(l string) { fmt.Fprintln(stdout, l) }
	} else {
		// No trace streams by: say how far the run got while it is long.
		var done func()
		opt.Progress, done = runProgress(stderr, fmt.Sprintf("seed %d", *seed))
		defer done()
	}
	var profFile *os.File
	var profBuf *bufio.Writer
	if *profile != "" {
		// Created before the run: a bad path fails now, not after it.
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall replay: -profile: %v\n", err)
			return exitUsage
		}
		profFile, profBuf = f, bufio.NewWriter(f)
		opt.Profile = profBuf
	}
	r := sim.Run(ctx, *seed, opt)
	if profFile != nil {
		err := profBuf.Flush() // the first write error, if any (bufio's errors stick)
		if cerr := profFile.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(stderr, "seedfall replay: -profile %s: %v\n", *profile, err)
			return exitUsage
		}
	}
	if *save != "" {
		if err := cli.SavePlan(*save, &engine.FaultPlan{Seed: *seed, Faults: r.Faults, Swarm: r.Swarm, Provenance: now}); err != nil {
			fmt.Fprintf(stderr, "seedfall replay: -save: %v\n", err)
			return exitUsage
		}
	}
	if *jsonOut {
		// The result names the config and the plan it replayed, so that whatever reads
		// it (seedfall report refuses it) knows it is one replay, not a sweep's seed.
		prov := *now
		prov.Faults = *faults
		r.Provenance = &prov
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
	} else {
		fmt.Fprintln(stdout)
		if r.Failed() {
			extra := ""
			if *faults != "" {
				extra += " -faults " + *faults
			}
			if *mutation != "" {
				extra += " -mutation '" + *mutation + "'"
			}
			if *upgradeFrom != "" {
				extra += " -upgrade-from " + *upgradeFrom
			}
			printFailure(stdout, r, *cfgPath, extra)
		} else {
			fmt.Fprintf(stdout, "ok seed %d: %s at t=%s, %s applied\n", r.Seed, r.Verdict, time.Duration(r.EndNS).String(), plural(len(r.Faults), "fault", "faults"))
		}
		if r.LinUnknown {
			fmt.Fprintf(stdout, "linearizability: unknown (%s)\n", r.LinDetail)
		}
		fmt.Fprintf(stdout, "trace %s (%d lines)\n", r.TraceHash, r.TraceLines)
	}
	if r.Failed() {
		return exitFail
	}
	return exitPass
}

func flagSet(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}
