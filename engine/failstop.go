package engine

import (
	"cmp"
	"fmt"
)

// failStopExit handles the own non-zero exit of a fail-stop node: it is restarted after
// the restart delay over its disk as it is (a process exit loses nothing of the page
// cache), unless it exceeds its restart budget, which fails the run.
func (w *world) failStopExit(inc *incarnation, detail string) {
	n := inc.node
	last := fmt.Sprintf("exited with code %d", inc.code)
	if pr := inc.panicReason(); pr != "" {
		last += ": " + pr + detail
	} else if tr := inc.trapReason(); tr != "" {
		last += ": " + tr
	} else if inc.lastLine != "" {
		last += ": " + inc.lastLine + detail
	} else {
		last += detail
	}
	n.lastExit = last
	n.exits = append(n.exits, w.now)
	window := int64(cmp.Or(n.cfg.RestartWindow, defaultRestartWindow))
	budget := cmp.Or(n.cfg.MaxRestarts, defaultMaxRestarts)
	recent := n.recentExits(w.now, window)
	if len(recent) > budget {
		w.tracef(inc.label, "exited with code %d%s (fail-stop)", inc.code, detail)
		w.fail(KindFailStopLoop, n.name, fmt.Sprintf("fail-stop restart loop: exited %d times in %s (more than max_restarts %d within restart_window %s); last %s",
			len(recent), formatDuration(w.now-recent[0]), budget, formatDuration(window), last))
		return
	}
	at := w.now + int64(w.cfg.Faults.RestartDelay)
	w.tracef(inc.label, "exited with code %d%s (fail-stop): restart at %s", inc.code, detail, formatDuration(at))
	w.stats.FailStopRestarts++
	w.schedule(at, func() {
		if n.inc == nil && !w.done && !n.heldDown {
			w.start(n)
		}
	})
}

// recentExits returns the node's own exits within window before now (inclusive).
func (n *node) recentExits(now, window int64) []int64 {
	i := len(n.exits)
	for i > 0 && n.exits[i-1] >= now-window {
		i--
	}
	return n.exits[i:]
}

// failStopAtHorizon fails a run that reached the horizon while a fail-stop node still
// exits again and again: at least twice within its restart window before the horizon,
// the last time after the workload could no longer finish.
func (w *world) failStopAtHorizon() {
	for _, n := range w.nodes {
		if !n.cfg.failStop() || len(n.exits) == 0 {
			continue
		}
		window := int64(cmp.Or(n.cfg.RestartWindow, defaultRestartWindow))
		if recent := n.recentExits(w.now, window); len(recent) >= 2 {
			w.fail("fail-stop-loop", n.name, fmt.Sprintf("fail-stop restart loop: still exiting at the horizon: exited %d times in the last %s (%d in the whole run); last %s",
				len(recent), formatDuration(window), len(n.exits), n.lastExit))
			return
		}
	}
}
