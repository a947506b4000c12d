package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	served int // requests answered
}

type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func startWorker(cmd *exec.Cmd) (*worker, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	tb := &tailBuffer{}
	cmd.Stderr = tb
	// A killed worker whose own children still hold its pipes must not stall the sweep.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return &worker{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: tb}, nil
}

func (wk *worker) stderrTail() string {
	wk.stderr.mu.Lock()
	defer wk.stderr.mu.Unlock()
	if len(wk.stderr.buf) == 0 {
		return ""
	}
	return ": " + strings.TrimSpace(string(wk.stderr.buf))
}

// run sends one request (a SeedRequest or a RunRequest) to the worker and waits for its
// answer, at most limit (plus startAllowance on a fresh worker).
func (wk *worker) run(ctx context.Context, req any, limit time.Duration) (*Result, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := wk.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	type answer struct {
		line []byte
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := wk.out.ReadBytes('\n')
		ch <- answer{line, err}
	}()
	if wk.served == 0 {
		limit += startAllowance
	}
	cpu0, cpuKnown := wk.cpu()
	t := time.NewTimer(limit)
	defer t.Stop()
	waited := limit
	for {
		select {
		case a := <-ch:
			if a.err != nil {
				return nil, a.err
			}
			var r Result
			if err := json.Unmarshal(a.line, &r); err != nil {
				return nil, fmt.Errorf("bad answer from worker: %w", err)
			}
			wk.served++
			return &r, nil
		case <-t.C:
			// The limit is wall-clock time and the worker's CPU time, as for the
			// watchdog inside it: a worker that a loaded machine starves has not
			// overrun, up to starvedFactor limits of wall-clock time.
			if cpu, ok := wk.cpu(); cpuKnown && ok && cpu-cpu0 < limit && waited < starvedFactor*limit {
				step := max(limit/4, time.Second)
				waited += step
				t.Reset(step)
				continue
			}
			return nil, fmt.Errorf("timeout")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// starvedFactor bounds how long a worker that uses less CPU than its limit is waited for:
// starvedFactor limits of wall-clock time (a worker that is blocked, not starved).
const starvedFactor = 10

// cpu is the CPU time the worker process has used so far, where the OS tells it.
func (wk *worker) cpu() (time.Duration, bool) {
	if wk.cmd.Process == nil {
		return 0, false
	}
	return childCPU(wk.cmd.Process.Pid)
}

func (wk *worker) stop() {
	wk.in.Close()
	if wk.cmd.Process != nil {
		wk.cmd.Process.Kill()
	}
	wk.cmd.Wait()
}

// ServeWorker is the worker side of SweepIsolated: it reads seeds from in and writes
// results to out until in closes.
func ServeWorker(ctx context.Context, s *Sim, opt RunOptions, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	for sc.Scan() {
		var req SeedRequest
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &req); err != nil {
				return fmt.Errorf("worker: bad request %q: %v", line, err)
			}
		} else {
			seed, err := strconv.ParseUint(line, 10, 64)
			if err != nil {
				return fmt.Errorf("worker: bad seed line %q", line)
			}
			req.Seed = seed
		}
		o := opt
		if req.Mutation != "" {
			o.Mutation = req.Mutation
		}
		if req.Check {
			o.Check = true
		}
		seed := req.Seed
		r := s.Run(ctx, seed, o)
		if err := enc.Encode(r); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if r.Verdict == VerdictWatchdog {
			// The stuck guest's goroutine still spins: this process is spent.
			return fmt.Errorf("worker: watchdog fired on seed %d; exiting", seed)
		}
	}
	return sc.Err()
}
