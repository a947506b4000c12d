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
	// The limit is wall-clock time alone: it is the backstop for a worker that hangs
	// (a guest spinning where the worker's own watchdog cannot see it, a worker that
	// blocks), which may burn no CPU at all. The watchdog inside the worker, which also
	// counts CPU time, is what spares a starved run; this limit is 10 budgets and more.
	t := time.NewTimer(limit)
	defer t.Stop()
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
		return nil, fmt.Errorf("timeout")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
