// Package cli is what the seedfall command and its MCP server share: the sweep driver
// (worker processes, progress) and the shapes of their JSON results, so that
// `seedfall run -json`, `seedfall shrink -json` and the MCP tools agree field for field.
//
// It uses only the engine's public API; it does not parse flags or render reports (the
// command's and report's), so both front ends can share it.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/worker"
)

// SweepSpec is what a sweep needs; run, mutate, ci and mcp share it.
type SweepSpec struct {
	Sim      *engine.Sim
	Seeds    []uint64
	Check    bool
	Mutation string
	// Workers is the number of parallel runs (default: the number of CPUs).
	Workers int
	// InProc runs seeds in this process instead of worker processes (no protection
	// against guests that spin without host calls).
	InProc bool
	OutDir string
	// Progress receives human progress lines (nil: quiet).
	Progress io.Writer
	// OnProgress, when set, is called after each result with the counts so far; calls
	// are serialized.
	OnProgress func(done, failed, total int)
	// Pool is reused across sweeps (nil: start and stop a pool for this sweep).
	Pool *worker.Pool
	// Executable is the seedfall binary a pool started for this sweep runs as
	// `seedfall worker` (default: this process's executable).
	Executable string
	// Coverage, when set, receives each result's coverage (config "coverage") as it
	// arrives; the result then drops it unless KeepCoverage, so that a long sweep holds
	// one sum instead of a coverage per seed.
	Coverage     *coverage.Sum
	KeepCoverage bool
	// StopOnFail stops the sweep once a seed has failed (Result.Failed): no more seeds
	// are handed out, those in flight are stopped and left out, and the sweep returns no
	// error for it. With one worker the results are exactly the seeds up to the first
	// failing one.
	StopOnFail bool
}

// Sweep runs the seeds, in worker processes unless InProc. When ctx is done it stops
// handing out seeds, kills the workers that are running one and returns the results of
// the seeds that finished with ctx's error; a seed cut short by the cancellation is
// left out, not counted as an error.
func Sweep(ctx context.Context, sp SweepSpec) ([]*engine.Result, error) {
	if sp.StopOnFail {
		parent := ctx
		stop, cancel := context.WithCancel(ctx)
		defer cancel()
		sp.StopOnFail = false
		inner := sp.OnProgress
		failedSeen := false
		sp.OnProgress = func(done, failed, total int) {
			if failed > 0 && !failedSeen {
				failedSeen = true
				cancel()
			}
			if inner != nil {
				inner(done, failed, total)
			}
		}
		results, err := Sweep(stop, sp)
		if err != nil && failedSeen && parent.Err() == nil {
			err = nil // stopped at the failure, as asked
		}
		return results, err
	}
	total := len(sp.Seeds)
	done, failed := 0, 0
	start := time.Now()
	tty := IsTerminal(sp.Progress)
	lastPrint := time.Now()
	onResult := func(r *engine.Result) {
		if canceled(ctx, r) {
			return
		}
		done++
		if sp.Coverage != nil && r.Coverage != nil {
			sp.Coverage.Add(r.Coverage)
			if !sp.KeepCoverage {
				r.Coverage = nil
			}
		}
		if r.Failed() {
			failed++
		}
		if sp.OnProgress != nil {
			sp.OnProgress(done, failed, total)
		}
		if sp.Progress == nil {
			return
		}
		line := ProgressLine(done, failed, total, time.Since(start))
		if tty {
			fmt.Fprintf(sp.Progress, "\r\033[K%s", line)
			if done == total {
				fmt.Fprintln(sp.Progress)
			}
		} else if time.Since(lastPrint) > 10*time.Second || done == total {
			lastPrint = time.Now()
			fmt.Fprintln(sp.Progress, line)
		}
	}
	opt := engine.RunOptions{Check: sp.Check, Mutation: sp.Mutation, OutDir: sp.OutDir}
	workers := sp.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if sp.InProc {
		results := sp.Sim.Sweep(ctx, sp.Seeds, engine.SweepOptions{RunOptions: opt, Workers: workers, OnResult: onResult})
		if ctx.Err() != nil {
			kept := results[:0]
			for _, r := range results {
				if !canceled(ctx, r) {
					kept = append(kept, r)
				}
			}
			results = kept
		}
		return results, ctx.Err()
	}
	pool := sp.Pool
	if pool == nil {
		var err error
		if pool, err = NewPool(sp.Sim, workers, sp.Executable); err != nil {
			return nil, err
		}
		defer pool.Close()
	}
	return pool.Sweep(ctx, sp.Seeds, opt, onResult)
}

// ProgressLine is a sweep's progress after done of total seeds (failed of them failed)
// in el: "200/400 seeds, 3 failed, 12.5 seeds/s, ETA 16s".
func ProgressLine(done, failed, total int, el time.Duration) string {
	rate := float64(done) / max(el.Seconds(), 1e-9)
	eta := "?"
	if done > 0 {
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		eta = left.Round(time.Second).String()
	}
	return fmt.Sprintf("%d/%d seeds, %d failed, %.1f seeds/s, ETA %s", done, total, failed, rate, eta)
}

// NewPool makes a pool of `seedfall worker` processes of the binary exe (default: this
// process's executable) for the sim's config and modules, to run seeds out of this
// process: sweeps, and the runs of shrink, cause and explore. A guest spinning without
// host calls then costs a worker process, never this one. Workers start on first use.
func NewPool(sim *engine.Sim, workers int, exe string) (*worker.Pool, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("locate seedfall binary for workers: %w", err)
		}
	}
	cfg := sim.Config()
	args := []string{"worker", "-c", cfg.Path, "-wasm", strings.Join(engineapi.WasmPaths(sim), ",")}
	return worker.NewPool(cfg, worker.Options{
		Workers: workers,
		Command: func() *exec.Cmd {
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), "SEEDFALL_AS_CLI=1")
			return cmd
		},
	}), nil
}

// canceled reports whether r is a seed cut short by ctx's cancellation rather than an
// outcome of the seed (an in-process run reports it as an error of kind "canceled").
func canceled(ctx context.Context, r *engine.Result) bool {
	return ctx.Err() != nil && r.Verdict == engine.VerdictError && r.Failure != nil && r.Failure.Kind == engine.KindCanceled
}

// IsTerminal reports whether w is a terminal (progress lines are then redrawn in place).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
