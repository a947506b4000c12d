package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// hostWorkFile records, per Go release series, the host work of three runs: what the
// regression guard compares with.
const hostWorkFile = "testdata/hostwork.json"

// hostWork is one run's host work.
type hostWork struct {
	VirtualNS int64 `json:"virtual_ns"`
	HostCalls int64 `json:"host_calls"`
	Switches  int64 `json:"switches"`
}

func (h hostWork) perSecond(n int64) float64 { return float64(n) / (float64(h.VirtualNS) / 1e9) }

// hostWorkGrowth is how much the host work per virtual second may grow over the
// recorded figure before the guard fails.
const hostWorkGrowth = 1.2

// TestHostWorkPerVirtualSecond is the regression guard of the simulator's cost: the
// host calls and hand-overs per virtual second of three runs (a client and server over
// the network and a disk, kvlog; a library's WAL in one process, tidwall-wal; a server
// that waits on signals and sockets), counted, never timed. They are deterministic for a
// toolchain, so a change that makes the host do more per virtual second (a guest that
// polls, a yield on every call, a timer that fires too often) shows as a growth and
// fails here; it passes when the figures stay within hostWorkGrowth of those recorded
// in testdata/hostwork.json for this Go release series. After a change that lowers them,
// or for a new series, record them again: SEEDFALL_HOSTWORK_UPDATE=1 go test -run
// TestHostWorkPerVirtualSecond ./engine.
func TestHostWorkPerVirtualSecond(t *testing.T) {
	runs := []struct {
		name string
		sim  func() *engine.Sim
	}{
		{"kvlog", func() *engine.Sim { return prepare(t, "../examples/kvlog/seedfall.fixed.json", nil) }},
		{"tidwall-wal", func() *engine.Sim { return prepare(t, "../examples/tidwall-wal/tidwall.fixed.json", nil) }},
		{"signal-echo", func() *engine.Sim {
			return prepared(t, "signal-echo.json", basicConfig(`"horizon": "10s"`, basicNode("client", "signal-echo", "20")))
		}},
	}
	series := goSeries(runtime.Version())
	recorded := map[string]map[string]hostWork{}
	if data, err := os.ReadFile(hostWorkFile); err == nil {
		if err := json.Unmarshal(data, &recorded); err != nil {
			t.Fatalf("%s: %v", hostWorkFile, err)
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	update := os.Getenv("SEEDFALL_HOSTWORK_UPDATE") == "1"
	now := map[string]hostWork{}
	for _, run := range runs {
		r := run.sim().Run(context.Background(), 1, engine.RunOptions{})
		if r.Failed() {
			t.Fatalf("%s seed 1: %s (%v), want a run that passes", run.name, r.Verdict, r.Failure)
		}
		h := hostWork{VirtualNS: r.EndNS, HostCalls: r.Stats.HostCalls, Switches: r.Stats.Switches}
		now[run.name] = h
		t.Logf("%s: %d host calls, %d switches in %.3fs virtual: %.0f host calls, %.0f switches per virtual second",
			run.name, h.HostCalls, h.Switches, float64(h.VirtualNS)/1e9, h.perSecond(h.HostCalls), h.perSecond(h.Switches))
		if update {
			continue
		}
		was, ok := recorded[series][run.name]
		if !ok {
			t.Errorf("%s: nothing recorded for %s in %s (SEEDFALL_HOSTWORK_UPDATE=1 records it)", run.name, series, hostWorkFile)
			continue
		}
		for _, c := range []struct {
			what     string
			now, was float64
		}{
			{"host calls", h.perSecond(h.HostCalls), was.perSecond(was.HostCalls)},
			{"switches", h.perSecond(h.Switches), was.perSecond(was.Switches)},
		} {
			if c.now > c.was*hostWorkGrowth {
				t.Errorf("%s: %.0f %s per virtual second, recorded %.0f (%s): the host does %.2f× the work per virtual second",
					run.name, c.now, c.what, c.was, series, c.now/c.was)
			} else if c.now < c.was/hostWorkGrowth {
				t.Logf("%s: %s per virtual second fell from %.0f to %.0f: record the new figure (SEEDFALL_HOSTWORK_UPDATE=1)", run.name, c.what, c.was, c.now)
			}
		}
	}
	if update {
		recorded[series] = now
		data, err := json.MarshalIndent(recorded, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hostWorkFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s in %s", series, hostWorkFile)
	}
}

// goSeries is the release series of a Go version: "go1.26" of "go1.26.8".
func goSeries(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
