package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// Host work per virtual second of a guest that waits: what the scheduler does for a
// guest that polls or yields instead of blocking. Counted, never timed.

// TestSignalNotifyDoesNotSpin: a guest that calls signal.Notify (lotusdb opens its
// database so; servers do at start) then serves a socket. wasip1's runtime waits for a
// signal by spinning (lock_wasip1.go's notetsleepg: sched_yield and Gosched in a loop),
// which starves Go's network poller and turns every turn into a host call; the platform
// layer's os/signal edit makes that goroutine sleep. The echo must work and the host
// work must stay that of an idle guest: a bound on host calls per virtual second. The
// control is the same guest with a goroutine that waits as the unedited runtime does:
// it gets no reply and makes orders of magnitude more host calls.
func TestSignalNotifyDoesNotSpin(t *testing.T) {
	s := prepared(t, "signal-echo.json", basicConfig(`"horizon": "10s"`, basicNode("client", "signal-echo", "20")))
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("verdict %s (%v), want pass:\n%s", r.Verdict, r.Failure, tail(traceText(r), 20))
	}
	if l, _ := traceLine(r, "client#1 | 20 round trips"); l == "" {
		t.Fatalf("no echo:\n%s", tail(traceText(r), 20))
	}
	perSec := hostCallsPerVirtualSecond(r)
	t.Logf("%d host calls, %d switches in %.2fs virtual: %.0f host calls per virtual second", r.Stats.HostCalls, r.Stats.Switches, float64(r.EndNS)/1e9, perSec)
	// 20 round trips, each a sleep, a write, a read and the echo's: tens of calls
	// each. A spinner makes about a million per virtual second (below).
	const bound = 1000
	if perSec > bound {
		t.Errorf("%.0f host calls per virtual second, want at most %d: a goroutine polls instead of sleeping", perSec, bound)
	}

	// The control: the runtime's wait, written out in the guest.
	s = prepared(t, "signal-echo-yield.json", basicConfig(`"horizon": "10s"`, basicNode("client", "signal-echo", "1", "yield")))
	r = s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictFail || r.Failure == nil || !strings.Contains(r.Failure.Reason, "round trip 0: got") {
		t.Errorf("control: verdict %s (%v), want the guest's exit after its first reply never came", r.Verdict, r.Failure)
	}
	c := hostCallsPerVirtualSecond(r)
	t.Logf("control: %d host calls in %.2fs virtual: %.0f per virtual second", r.Stats.HostCalls, float64(r.EndNS)/1e9, c)
	if c < 100*bound {
		t.Errorf("control: %.0f host calls per virtual second, want a spinner's (over %d)", c, 100*bound)
	}
}

// TestHorizonEndsBusyGuest: a guest that never blocks (it reads the clock in a loop)
// keeps a node runnable forever, and the run must end at the horizon all the same. It
// did not: the scheduler looked at the horizon only when nothing was runnable, so the
// run went on until the watchdog's wall-clock cap.
func TestHorizonEndsBusyGuest(t *testing.T) {
	s := prepared(t, "busy-horizon.json", basicConfig(`"horizon": "20ms", "watchdog": "3s", "liveness": {"horizon": "count"}`,
		basicNode("client", "busy", "1000000000000")))
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictHorizon {
		t.Fatalf("verdict %s (%v), want horizon", r.Verdict, r.Failure)
	}
	if r.EndNS < 20e6 || r.EndNS > 21e6 {
		t.Errorf("ended at %dns, want at the horizon (20ms)", r.EndNS)
	}
	if l, _ := traceLine(r, "world horizon reached"); l == "" {
		t.Errorf("no horizon line:\n%s", tail(traceText(r), 10))
	}
}

func hostCallsPerVirtualSecond(r *engine.Result) float64 {
	if r.EndNS <= 0 {
		return 0
	}
	return float64(r.Stats.HostCalls) / (float64(r.EndNS) / 1e9)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestRunProgress: RunOptions.Progress reports how far a run got while it goes on, and
// only reads: the trace is the same with it as without.
func TestRunProgress(t *testing.T) {
	defer engine.SetProgressTick(time.Millisecond)()
	s := prepared(t, "busy-progress.json", basicConfig(`"horizon": "300ms", "liveness": {"horizon": "count"}`,
		basicNode("client", "busy", "1000000000000")))
	var mu sync.Mutex
	var seen []engine.RunProgress
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true, Progress: func(p engine.RunProgress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	}})
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("Progress was never called")
	}
	for i, p := range seen {
		if p.VirtualNS < 0 || p.VirtualNS > r.EndNS || (i > 0 && (p.VirtualNS < seen[i-1].VirtualNS || p.Steps < seen[i-1].Steps)) {
			t.Fatalf("progress %d: %+v (before: %+v; the run ended at %d)", i, p, seen[max(i-1, 0)], r.EndNS)
		}
	}
	if last := seen[len(seen)-1]; last.VirtualNS == 0 {
		t.Errorf("the virtual clock never moved in %d reports", len(seen))
	}
	if plain := s.Run(context.Background(), 1, engine.RunOptions{Trace: true}); plain.TraceHash != r.TraceHash {
		t.Errorf("trace %s with Progress, %s without", r.TraceHash, plain.TraceHash)
	}
}
