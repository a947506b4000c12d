// Tests of the httpoverlay example: an unmodified net/http server and client, built
// with "net_overlay": true, talk over seedfall's simulated network.
package httpoverlay_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

var (
	simOnce sync.Once
	theSim  *engine.Sim
	simErr  error
)

// prepared builds the server and the client with the net overlay once per process.
func prepared(t *testing.T) *engine.Sim {
	t.Helper()
	simOnce.Do(func() {
		cfg, err := engine.LoadConfig("seedfall.json")
		if err != nil {
			simErr = err
			return
		}
		theSim, simErr = engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	})
	if simErr != nil {
		t.Fatal(simErr)
	}
	return theSim
}

var request = regexp.MustCompile(`^\s*(\S+) client#1 \| (PUT|GET) server:8080/kv/(\S+) -> (\d+) in (\S+)$`)

type req struct {
	at     time.Duration // when the answer arrived
	method string
	code   string
	took   time.Duration
}

func requests(t *testing.T, r *engine.Result) []req {
	t.Helper()
	var out []req
	for _, l := range r.Trace {
		m := request.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, err1 := time.ParseDuration(m[1])
		took, err2 := time.ParseDuration(m[5])
		if err1 != nil || err2 != nil {
			t.Fatalf("line %q", l)
		}
		out = append(out, req{at, m[2], m[4], took})
	}
	return out
}

func run(t *testing.T, plan *engine.FaultPlan) *engine.Result {
	t.Helper()
	r := prepared(t).Run(context.Background(), 1, engine.RunOptions{Plan: plan, Trace: true})
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, strings.Join(r.Trace, "\n"))
	}
	return r
}

func TestRequestsSucceed(t *testing.T) {
	r := run(t, &engine.FaultPlan{Faults: []engine.Fault{}})
	reqs := requests(t, r)
	if len(reqs) != 40 {
		t.Fatalf("%d requests answered, want 40\n%s", len(reqs), strings.Join(r.Trace, "\n"))
	}
	for _, q := range reqs {
		if q.took > 20*time.Millisecond {
			t.Fatalf("%s took %s without faults", q.method, q.took)
		}
	}
	// The server's unmodified http.ListenAndServe reached the simulated network.
	for _, want := range []string{"server#1 listen :8080", "client#1 dial server:8080", "server#1 accept server:8080 from client:"} {
		if !strings.Contains(strings.Join(r.Trace, "\n"), want) {
			t.Fatalf("no %q in the trace", want)
		}
	}
}

// A partition stalls the request in flight (TCP keeps the connection: no error) and
// the heal resumes it.
func TestPartitionStallsAndHealResumes(t *testing.T) {
	at, dur := 300*time.Millisecond, time.Second
	heal := at + dur
	for _, oneWay := range []bool{false, true} {
		name := "symmetric"
		if oneWay {
			name = "one-way"
		}
		t.Run(name, func(t *testing.T) {
			r := run(t, &engine.FaultPlan{Faults: []engine.Fault{{
				AtNS: int64(at), Kind: engine.FaultPartition, Node: "server", Peers: []string{"client"},
				OneWay: oneWay, DurationNS: int64(dur),
			}}})
			reqs := requests(t, r)
			if len(reqs) != 40 {
				t.Fatalf("%d requests answered, want 40", len(reqs))
			}
			var stalled []req
			for _, q := range reqs {
				if q.at > at && q.at < heal {
					t.Fatalf("a request was answered during the partition: %+v", q)
				}
				if q.took > 100*time.Millisecond {
					stalled = append(stalled, q)
				}
			}
			if len(stalled) != 1 || stalled[0].at < heal || stalled[0].at > heal+20*time.Millisecond {
				t.Fatalf("want one request stalled until the heal at %s, got %+v\n%s", heal, stalled, strings.Join(r.Trace, "\n"))
			}
			if strings.Contains(strings.Join(r.Trace, "\n"), "retrying") {
				t.Fatal("a partition must stall the connection, not break it")
			}
		})
	}
}

// Runs with the config's random partitions are deterministic: every seed twice, traces
// compared line by line (as `seedfall run -check`).
func TestDeterministicUnderCheck(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	var list []uint64
	for s := 1; s <= seeds; s++ {
		list = append(list, uint64(s))
	}
	partitioned := 0
	for _, r := range prepared(t).Sweep(context.Background(), list, engine.SweepOptions{Workers: 2, RunOptions: engine.RunOptions{Check: true}}) {
		if r.Verdict != engine.VerdictPass || !r.Checked || r.Divergence != nil {
			t.Errorf("seed %d: %s (divergence %+v)", r.Seed, r, r.Divergence)
		}
		if len(r.Faults) > 0 {
			partitioned++
		}
	}
	if partitioned == 0 {
		t.Fatal("no seed had a partition")
	}
}
