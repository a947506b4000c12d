package engine_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

func ftServer(name string, args ...string) string {
	return ftNode(name, "./net", append([]string{"-role", "server"}, args...)...)
}

func ftClient(args ...string) string {
	return ftNode("client", "./net", append([]string{"-role", "client"}, args...)...)
}

var ftRTT = regexp.MustCompile(`^rtt (\S+) (\d+) (\S+)$`)

type ftPing struct {
	addr string
	seq  int
	rtt  time.Duration
	at   time.Duration // when the client printed it (the answer's arrival)
}

func ftPings(t *testing.T, r *engine.Result) []ftPing {
	var out []ftPing
	for _, l := range ftOutput(t, r, "client") {
		m := ftRTT.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		seq, _ := strconv.Atoi(m[2])
		d, err := time.ParseDuration(m[3])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ftPing{m[1], seq, d, l.at})
	}
	return out
}

// Per-link latency: a latency fault on s2 slows pings to s2 for its duration and leaves
// s1 alone; the config's base latency applies to every link.
func TestFaultLatency(t *testing.T) {
	cfg := ftConfig(ftClient("-targets", "s1:7000,s2:7000", "-n", "30"), "", ftServer("s1"), ftServer("s2"))
	s := ftSim(t, cfg)
	spike := engine.Fault{AtNS: int64(100 * time.Millisecond), Kind: engine.FaultLatency, Node: "s2",
		LatencyNS: int64(50 * time.Millisecond), DurationNS: int64(300 * time.Millisecond)}
	for _, tc := range []struct {
		name string
		plan *engine.FaultPlan
	}{{"latency fault on s2", ftPlan(spike)}, {"control", ftPlan()}} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, s, 1, tc.plan)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			slow := 0
			for _, p := range ftPings(t, r) {
				// A ping sent while the spike lasts takes >= 2 x 50ms.
				during := p.at-p.rtt >= 100*time.Millisecond && p.at-p.rtt < 400*time.Millisecond
				switch {
				case p.addr == "s2:7000" && during && len(tc.plan.Faults) > 0:
					if p.rtt < 100*time.Millisecond || p.rtt > 110*time.Millisecond {
						t.Fatalf("ping %d to s2 during the spike took %s, want ~100ms", p.seq, p.rtt)
					}
					slow++
				case p.rtt > 10*time.Millisecond:
					t.Fatalf("ping %d to %s at %s took %s, want the base latency", p.seq, p.addr, p.at, p.rtt)
				}
			}
			if len(tc.plan.Faults) > 0 && slow < 2 {
				t.Fatalf("only %d slow pings\n%s", slow, ftDump(r))
			}
			if len(tc.plan.Faults) > 0 {
				ftMust(t, r, "fault", `^latency s2 \+50ms for 300ms$`)
			}
		})
	}
	t.Run("config latency", func(t *testing.T) {
		s := ftSim(t, ftConfig(ftClient("-n", "5"), `"faults":{"latency":"20ms","jitter":"1ns"}`, ftServer("server")))
		r := ftRun(t, s, 1, nil)
		for _, p := range ftPings(t, r) {
			if p.rtt < 40*time.Millisecond || p.rtt > 42*time.Millisecond {
				t.Fatalf("ping %d took %s, want 2 x 20ms", p.seq, p.rtt)
			}
		}
	})
}

// A partition stalls a connection (TCP: no error, no loss) and heal resumes it. A
// one-way partition cuts one direction only: which side saw the ping tells which.
func TestFaultPartition(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-n", "30"), "", ftServer("server", "-log")))
	at, dur := 100*time.Millisecond, 500*time.Millisecond
	heal := at + dur
	part := func(node string, peer string, oneWay bool) *engine.FaultPlan {
		return ftPlan(engine.Fault{AtNS: int64(at), Kind: engine.FaultPartition, Node: node, Peers: []string{peer}, OneWay: oneWay, DurationNS: int64(dur)})
	}
	for _, tc := range []struct {
		name string
		plan *engine.FaultPlan
		// where the stalled ping shows up: "before" heal or "after" heal, on the server
		serverSees string
	}{
		{"symmetric", part("server", "client", false), "after"},
		{"one-way server->client", part("server", "client", true), "before"},
		{"one-way client->server", part("client", "server", true), "after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, s, 2, tc.plan)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			h := ftMust(t, r, "fault", `^heal `)
			if h.at != heal {
				t.Fatalf("healed at %s, want %s", h.at, heal)
			}
			var stalled *ftPing
			for _, p := range ftPings(t, r) {
				if p.rtt > 100*time.Millisecond {
					if stalled != nil {
						t.Fatalf("two stalled pings")
					}
					stalled = &p
				}
			}
			if stalled == nil || stalled.at < heal || stalled.at-heal > 10*time.Millisecond {
				t.Fatalf("want one ping answered just after the heal at %s, got %+v\n%s", heal, stalled, ftDump(r))
			}
			if _, ok := ftFind(t, r, "client#1", `^\| (read|write|dial) `); ok {
				t.Fatalf("a partition must not break the connection\n%s", ftDump(r))
			}
			got := ftMust(t, r, "server#1", fmt.Sprintf(`^\| got ping %d$`, stalled.seq))
			if (got.at < heal) != (tc.serverSees == "before") {
				t.Fatalf("server got the stalled ping at %s (heal %s), want %s the heal", got.at, heal, tc.serverSees)
			}
		})
	}
}

// A reset fault aborts every connection of the node: the peer sees ECONNRESET.
func TestFaultReset(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-n", "30"), "", ftServer("server")))
	for _, node := range []string{"server", "client"} {
		t.Run("reset "+node, func(t *testing.T) {
			r := ftRun(t, s, 1, ftPlan(engine.Fault{AtNS: int64(105 * time.Millisecond), Kind: engine.FaultReset, Node: node}))
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			ftMust(t, r, "fault", `^reset connections of `+node+`#1$`)
			ftMust(t, r, "client#1", `^\| (read|write) server:7000: reset$`)
		})
	}
	t.Run("control", func(t *testing.T) {
		r := ftRun(t, s, 1, ftPlan())
		if _, ok := ftFind(t, r, "client#1", `reset`); ok || r.Verdict != engine.VerdictPass {
			t.Fatalf("resets without a fault:\n%s", ftDump(r))
		}
	})
}

// While the server is down, connections are reset and dials refused; after its restart
// it listens again and the client gets through.
func TestFaultCrashRefusedAndRelisten(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-n", "30"), "", ftServer("server")))
	r := ftRun(t, s, 1, ftPlan(ftCrash("server", 100*time.Millisecond, 300*time.Millisecond)))
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	ftMust(t, r, "client#1", `^\| (read|write) server:7000: reset$`)
	refused := ftMust(t, r, "client#1", `^\| dial server:7000: refused$`)
	relisten := ftMust(t, r, "server#2", `^listen :7000( at \S+)?$`)
	if refused.at < 100*time.Millisecond || refused.at > 400*time.Millisecond || relisten.at < 400*time.Millisecond {
		t.Fatalf("refused at %s, listening again at %s", refused.at, relisten.at)
	}
	var after int
	for _, p := range ftPings(t, r) {
		if p.at > relisten.at {
			after++
		}
	}
	if after == 0 {
		t.Fatal("no ping answered after the restart")
	}
}

// A paused node is not scheduled: its heartbeats stop for the pause.
func TestFaultPause(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-heartbeat", "20ms", "-n", "50"), "", ftServer("server", "-heartbeat", "20ms")))
	pause := func(at, d time.Duration) engine.Fault {
		return engine.Fault{AtNS: int64(at), Kind: engine.FaultPause, Node: "server", DurationNS: int64(d)}
	}
	for _, tc := range []struct {
		name string
		plan *engine.FaultPlan
	}{
		{"pause", ftPlan(pause(200*time.Millisecond, 500*time.Millisecond))},
		// A shorter pause inside a longer one does not end it early.
		{"overlapping pauses", ftPlan(pause(200*time.Millisecond, 500*time.Millisecond), pause(300*time.Millisecond, 100*time.Millisecond))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, s, 1, tc.plan)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			ftMust(t, r, "fault", `^pause server#1 for 500ms$`)
			if l := ftMust(t, r, "fault", `^resume server$`); l.at != 700*time.Millisecond {
				t.Fatalf("resumed at %s, want 700ms", l.at)
			}
			var n int
			for _, l := range ftOutput(t, r, "client#1") {
				if strings.HasPrefix(l.text, "heartbeat gap ") {
					n++
					d, _ := time.ParseDuration(strings.TrimPrefix(l.text, "heartbeat gap "))
					if d < 480*time.Millisecond || d > 530*time.Millisecond {
						t.Fatalf("gap %s, want ~500ms", d)
					}
				}
			}
			if n != 1 {
				t.Fatalf("want one heartbeat gap, got %d\n%s", n, ftDump(r))
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		r := ftRun(t, s, 1, nil)
		if _, ok := ftFind(t, r, "client#1", `gap`); ok || r.Verdict != engine.VerdictPass {
			t.Fatalf("heartbeat gap without a pause:\n%s", ftDump(r))
		}
	})
}
