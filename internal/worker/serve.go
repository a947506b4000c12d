package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/seedfall/seedfall/engine"
)

// Serve is the worker side of the protocol: it reads Requests (one JSON object a line)
// from in, runs each on s and writes its Result (one JSON object a line) to out, until
// in closes. After a run the watchdog stopped it returns an error: the stuck guest's
// goroutine still spins (it cannot be reclaimed, and it would stall the next garbage
// collection), so the process is spent and must exit.
//
// The moment a run's watchdog fires, Serve also writes a notice line ("watchdog N", N the
// request's index) from the watchdog's monitor, without allocating. Should the run then
// be unable to report (a garbage collection was under way when the guest began to spin:
// it can never finish, and the run blocks on it), the pool has the notice and stops the
// worker one budget later, instead of waiting out its whole limit.
func Serve(ctx context.Context, s *engine.Sim, in io.Reader, out io.Writer) error {
	// A collection that cannot finish keeps one of its mark workers busy-waiting for the
	// spinning goroutine, holding a P, as the spinning goroutine holds another: with two
	// Ps nothing else would run, not even the watchdog's monitor. Leave room for it.
	if runtime.GOMAXPROCS(0) < minProcs {
		runtime.GOMAXPROCS(minProcs)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var mu sync.Mutex // one writer at a time: Serve, or a monitor's notice
	for idx := 0; sc.Scan(); idx++ {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("worker: bad request %q: %v", sc.Text(), err)
		}
		opt := req.Options
		notice := fmt.Appendf(nil, "%s%d\n", noticePrefix, idx)
		opt.OnWatchdog = func() {
			mu.Lock()
			out.Write(notice)
			mu.Unlock()
		}
		r := s.Run(ctx, req.Seed, opt)
		if stallAnswer && r.Verdict == engine.VerdictWatchdog {
			select {} // tests: a run that cannot report after its watchdog
		}
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		mu.Lock()
		_, err = out.Write(append(line, '\n'))
		mu.Unlock()
		if err != nil {
			return err
		}
		if r.Verdict == engine.VerdictWatchdog {
			return fmt.Errorf("worker: watchdog fired on seed %d; exiting", req.Seed)
		}
	}
	return sc.Err()
}

// noticePrefix starts the line a worker writes when a run's watchdog fires, followed by
// the request's index in this worker.
const noticePrefix = "watchdog "

// minProcs is the fewest Ps a worker runs with (see Serve).
const minProcs = 4

// stallAnswer makes Serve block after a watchdog result instead of answering, as a run
// blocked on an unfinishable garbage collection does: for the tests.
var stallAnswer bool
