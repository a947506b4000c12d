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

// The two kinds of node death, as the server's peer sees them. A kill (process death on
// a live machine) closes the server's sockets at once: the client reads EOF, dials are
// refused while it is down, and it gets through after the restart. A crash (power loss)
// sends nothing: the client's ping waits, unanswered and unreset, until the server is
// back, and the restarted machine answers it with a reset. Each case is the other's
// negative control.
func TestFaultCrashAndKill(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-n", "30"), "", ftServer("server")))
	const at, back = 100 * time.Millisecond, 400 * time.Millisecond
	afterRelisten := func(r *engine.Result, relisten time.Duration) {
		t.Helper()
		for _, p := range ftPings(t, r) {
			if p.at > relisten {
				return
			}
		}
		t.Fatalf("no ping answered after the restart\n%s", ftDump(r))
	}
	t.Run("kill", func(t *testing.T) {
		kill := engine.Fault{AtNS: int64(at), Kind: engine.FaultKill, Node: "server", RestartNS: int64(back - at)}
		r := ftRun(t, s, 1, ftPlan(kill))
		if r.Verdict != engine.VerdictPass {
			t.Fatalf("%s\n%s", r, ftDump(r))
		}
		ftMust(t, r, "fault", `^kill server#1 \(process death`)
		eof := ftMust(t, r, "client#1", `^\| (read|write) server:7000: (error EOF|reset|broken pipe)$`)
		refused := ftMust(t, r, "client#1", `^\| dial server:7000: refused$`)
		relisten := ftMust(t, r, "server#2", `^listen :7000( at \S+)?$`)
		if eof.at < at || eof.at > at+30*time.Millisecond || refused.at > back || relisten.at < back { // the client sleeps 20ms between pings
			t.Fatalf("closed at %s, refused at %s, listening again at %s\n%s", eof.at, refused.at, relisten.at, ftDump(r))
		}
		if _, ok := ftFind(t, r, "fault", `disk after`); ok {
			t.Fatalf("a kill must leave the disk alone\n%s", ftDump(r))
		}
		afterRelisten(r, relisten.at)
	})
	t.Run("crash", func(t *testing.T) {
		r := ftRun(t, s, 1, ftPlan(ftCrash("server", at, back-at)))
		if r.Verdict != engine.VerdictPass {
			t.Fatalf("%s\n%s", r, ftDump(r))
		}
		first := ftMust(t, r, "client#1", `^\| (read|write|dial) `)
		if first.at < back || first.text != "read server:7000: reset" {
			t.Fatalf("want the first error a reset from the restarted server after %s, got %q at %s\n%s", back, first.text, first.at, ftDump(r))
		}
		ftMust(t, r, "net", `^server:7000 reset client:\d+: no such connection \(lost with the power\)$`)
		if _, ok := ftFind(t, r, "client#1", `refused`); ok {
			t.Fatalf("a powered-off machine refuses nothing\n%s", ftDump(r))
		}
		afterRelisten(r, ftMust(t, r, "server#2", `^listen :7000( at \S+)?$`).at)
	})
}

// A peer that only listens (heartbeats) learns nothing of a power loss: its connection
// is half-open and it waits until its own timeout, here the horizon. A kill closes the
// connection and the peer reads EOF at once.
func TestFaultCrashHalfOpen(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-heartbeat", "20ms", "-n", "50"), `"liveness":{"horizon":"fail"}`, ftServer("server", "-heartbeat", "20ms")))
	const at = 300 * time.Millisecond
	r := ftRun(t, s, 1, ftPlan(ftCrash("server", at, 100*time.Millisecond)))
	if r.Verdict != engine.VerdictFail || r.Failure.Kind != engine.KindLiveness {
		t.Fatalf("crash: want the listening client stuck until the horizon, got %s\n%s", r, ftDump(r))
	}
	if l, ok := ftFind(t, r, "client#1", `^\| read `); ok {
		t.Fatalf("crash: the client heard of the power loss: %q", l.text)
	}
	r = ftRun(t, s, 1, ftPlan(engine.Fault{AtNS: int64(at), Kind: engine.FaultKill, Node: "server", RestartNS: int64(100 * time.Millisecond)}))
	l := ftMust(t, r, "client#1", `^\| read server:7000: `)
	if l.text != "read server:7000: error EOF" || l.at > at+10*time.Millisecond {
		t.Fatalf("kill: want EOF just after %s, got %q at %s\n%s", at, l.text, l.at, ftDump(r))
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

// A node's own exit is a process death: the kernel closes its sockets, so the client
// reads EOF (a FIN), not a reset, and the connection's data before it arrived whole. The
// crash of TestFaultCrashAndKill, at the same kind of moment, gives no EOF at all.
func TestFaultOwnExitClosesSockets(t *testing.T) {
	server := `{"name":"server","pkg":"./net","args":["-role","server","-exit-at","5"],"on_exit":"restart"}`
	r := ftRun(t, ftSim(t, ftConfig(ftClient("-n", "30"), "", server)), 1, ftPlan())
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	ftMust(t, r, "server#1", `^\| exiting on ping 5$`)
	if l := ftMust(t, r, "client#1", `^\| (read|write) server:7000: `); l.text != "read server:7000: error EOF" {
		t.Fatalf("the client saw %q, want EOF (the exiting process's kernel sends a FIN)\n%s", l.text, ftDump(r))
	}
	if _, ok := ftFind(t, r, "net", `reset`); ok {
		t.Fatalf("an exit with nothing unread must not reset\n%s", ftDump(r))
	}
}
