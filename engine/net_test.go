// Acceptance tests of the simulated network's TCP fidelity: byte order and close order
// across partitions (the faults/net guest's sink and burst roles), and socket buffers,
// resets and half-close compared with the same program run natively on Linux loopback
// (testdata/netsem).
package engine_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/internal/overlay"
)

// ftOrderSim is a sink server and a burst client over links of 5-6ms latency, so a
// segment is in flight for at least 5ms, and segments sent at one moment arrive at
// different ones.
func ftOrderSim(t *testing.T, burstArgs ...string) *engine.Sim {
	args := append([]string{"-role", "burst", "-targets", "server:7000", "-gap", "2ms", "-linger", "1s"}, burstArgs...)
	return ftSim(t, ftConfig(ftNode("client", "./net", args...), `"faults":{"latency":"5ms","jitter":"1ms"}`,
		ftNode("server", "./net", "-role", "sink")))
}

// ftLastRead is the sink's last report: what the connection delivered, in order.
func ftLastRead(t *testing.T, r *engine.Result) ftLine {
	t.Helper()
	var last *ftLine
	for _, l := range ftOutput(t, r, "server#1") {
		if strings.HasPrefix(l.text, "read ") {
			last = &l
		}
	}
	if last == nil {
		t.Fatalf("the server read nothing\n%s", ftDump(r))
	}
	return *last
}

// ftOrderRun runs the burst once without faults to learn when it writes the 'A's, then
// again with a partition that starts 1ms later (the 'A's in flight) and lasts 100ms,
// and returns the second run and the partition's start.
func ftOrderRun(t *testing.T, s *engine.Sim, oneWay bool, step string) (*engine.Result, time.Duration) {
	t.Helper()
	ctl := ftRun(t, s, 1, ftPlan())
	wroteA := ftMust(t, ctl, "client#1", `^\| wrote A$`).at
	cut := wroteA + time.Millisecond
	r := ftRun(t, s, 1, ftPlan(engine.Fault{AtNS: int64(cut), Kind: engine.FaultPartition, Node: "client",
		Peers: []string{"server"}, OneWay: oneWay, DurationNS: int64(100 * time.Millisecond)}))
	// The setup: the same prefix, and the second step inside the partition.
	if a := ftMust(t, r, "client#1", `^\| wrote A$`).at; a != wroteA {
		t.Fatalf("wrote A at %s with the partition, %s without\n%s", a, wroteA, ftDump(r))
	}
	if b := ftMust(t, r, "client#1", `^\| `+step+`$`).at; b <= cut || b >= cut+100*time.Millisecond {
		t.Fatalf("%s at %s, want inside the partition %s+100ms\n%s", step, b, cut, ftDump(r))
	}
	return r, cut
}

// A segment already in flight when a partition starts is held, and bytes written during
// the partition queue behind it: the reader sees the connection's bytes in order.
func TestNetOrderAcrossPartition(t *testing.T) {
	s := ftOrderSim(t)
	for _, oneWay := range []bool{false, true} {
		t.Run(fmt.Sprintf("one_way=%v", oneWay), func(t *testing.T) {
			r, cut := ftOrderRun(t, s, oneWay, "wrote B")
			got := ftLastRead(t, r)
			if got.text != "read A1000 B10" {
				t.Fatalf("server got %q, want the A's before the B's\n%s", got.text, ftDump(r))
			}
			if got.at < cut+100*time.Millisecond {
				t.Fatalf("server read at %s, before the heal", got.at)
			}
		})
	}
}

// A close never overtakes the data written before it: data in flight when a partition
// starts and a close during it reach the reader as the data, then EOF.
func TestNetCloseBehindDataAcrossPartition(t *testing.T) {
	s := ftOrderSim(t, "-post", "0", "-close")
	for _, oneWay := range []bool{false, true} {
		t.Run(fmt.Sprintf("one_way=%v", oneWay), func(t *testing.T) {
			r, _ := ftOrderRun(t, s, oneWay, "closed")
			if got := ftLastRead(t, r); got.text != "read A1000 EOF" {
				t.Fatalf("server got %q, want \"read A1000 EOF\"\n%s", got.text, ftDump(r))
			}
		})
	}
}

// netsemSim builds testdata/netsem with the net overlay as a one-node world.
func netsemSim(t *testing.T, extra string) *engine.Sim {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		extra = "," + extra
	}
	cfg, err := engine.ParseConfig([]byte(`{"workload":{"name":"client","pkg":"./netsem","net_overlay":true},"horizon":"60s"` + extra + `}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Path = dir, filepath.Join(dir, "netsem.json")
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatalf("build netsem: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// netsemNative runs testdata/netsem natively, over the host's loopback.
func netsemNative(t *testing.T) []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "netsem")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/netsem").CombinedOutput(); err != nil {
		t.Fatalf("go build netsem: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("netsem natively: %v\n%s", err, out)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

var netsemTotal = regexp.MustCompile(`^backpressure: (\d+) bytes written before the timeout$`)

// netsemLines returns what netsem printed on stdout, and the bytes it wrote before the
// backpressure timeout (printed on stderr, which the trace has too).
func netsemLines(t *testing.T, r *engine.Result) ([]string, int) {
	t.Helper()
	var out []string
	total := -1
	for _, l := range ftOutput(t, r, "client#1") {
		if m := netsemTotal.FindStringSubmatch(l.text); m != nil {
			total, _ = strconv.Atoi(m[1])
			continue
		}
		out = append(out, l.text)
	}
	return out, total
}

// The same program observes the same TCP behaviour natively on Linux and under
// seedfall: writers to a peer that does not read block (bounded buffers, EAGAIN and a
// wake-up through poll_oneoff when the peer reads), data that reaches a closed socket is
// answered with a reset (ECONNRESET once, then EPIPE and EOF), a close with unread data
// resets, half-close works both ways, CloseRead wakes a blocked reader with EOF (before
// the fix it timed out under seedfall: the negative control is that older output, which
// this comparison rejects), and SetLinger(0) and Close reset the peer (ECONNRESET, where
// a plain close gives EOF).
func TestNetSemanticsMatchLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reference behaviour is Linux's")
	}
	want := netsemNative(t)
	if len(want) == 0 || want[len(want)-1] != "done" {
		t.Fatalf("native run: %q", want)
	}
	for _, tc := range []struct {
		name, extra string
		buffered    int // the send and receive buffers: what a writer gets in before it blocks
	}{
		{"default buffers", "", (256 + 256) << 10},
		{"small buffers", `"net":{"send_buffer_kib":16,"recv_buffer_kib":8}`, (16 + 8) << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := netsemSim(t, tc.extra)
			var hash string
			for _, seed := range []uint64{1, 2, 1} {
				r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true})
				if r.Verdict != engine.VerdictPass {
					t.Fatalf("seed %d: %s\n%s", seed, r, ftDump(r))
				}
				got, total := netsemLines(t, r)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: under seedfall:\n\t%s\nnatively:\n\t%s", seed, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
				}
				if total != tc.buffered {
					t.Fatalf("seed %d: %d bytes written before the writer blocked, want %d", seed, total, tc.buffered)
				}
				if seed == 1 {
					if hash != "" && hash != r.TraceHash {
						t.Fatalf("seed 1 twice: trace hashes %s and %s", hash, r.TraceHash)
					}
					hash = r.TraceHash
				}
			}
		})
	}
}

// The socket buffer knobs: defaults like Linux's, errors that name the field.
func TestNetConfig(t *testing.T) {
	const ok = `"workload": {"pkg": "./client"}`
	cfg, err := engine.ParseConfig([]byte(`{` + ok + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Net.SendBufferKiB != 256 || cfg.Net.RecvBufferKiB != 256 {
		t.Fatalf("default buffers %+v, want 256 KiB each", cfg.Net)
	}
	cfg, err = engine.ParseConfig([]byte(`{` + ok + `, "net": {"send_buffer_kib": 4, "recv_buffer_kib": 1024}}`))
	if err != nil || cfg.Net.SendBufferKiB != 4 || cfg.Net.RecvBufferKiB != 1024 {
		t.Fatalf("%+v, %v", cfg, err)
	}
	for _, tc := range []struct{ text, want string }{
		{`"net": {"send_buffer_kib": -1}`, "field net.send_buffer_kib: -1 is out of range"},
		{`"net": {"recv_buffer_kib": 100000}`, "field net.recv_buffer_kib: 100000 is out of range"},
		{`"net": {"send_buffer": 4}`, "field net.send_buffer: unknown field"},
		{`"net": {"recv_buffer_kib": "big"}`, "field net.recv_buffer_kib"},
	} {
		_, err := engine.ParseConfig([]byte(`{` + ok + `, ` + tc.text + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// ifacesRun runs testdata/ifaces as the workload "client", built with or without the
// net overlay, and returns what it printed.
func ifacesRun(t *testing.T, withOverlay bool) []string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.ParseConfig([]byte(fmt.Sprintf(`{"workload":{"name":"client","pkg":"./ifaces","net_overlay":%v},"horizon":"10s"}`, withOverlay)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Path = dir, filepath.Join(dir, "ifaces.json")
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatalf("build ifaces: %v", err)
	}
	defer s.Close()
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	var out []string
	for _, l := range ftOutput(t, r, "client#1") {
		out = append(out, l.text)
	}
	return out
}

// ifacesProblem says what is missing from ifaces' output for node "client": a loopback
// interface with 127.0.0.1 and an interface with the node's own address; "" if nothing.
func ifacesProblem(out []string) string {
	self := overlay.NodeIP("client").String() + "/8"
	var lo, own, all bool
	for _, l := range out {
		lo = lo || strings.HasPrefix(l, "interface lo ") && strings.Contains(l, "loopback") && strings.Contains(l, "127.0.0.1/8")
		own = own || strings.HasPrefix(l, "interface eth0 up|broadcast|multicast|running ") && strings.Contains(l, self)
		all = all || strings.HasPrefix(l, "all ") && strings.Contains(l, "127.0.0.1/8") && strings.Contains(l, self)
	}
	switch {
	case !lo:
		return "no loopback interface with 127.0.0.1/8"
	case !own:
		return "no interface with the node's address " + self
	case !all:
		return "net.InterfaceAddrs lacks 127.0.0.1/8 or " + self
	}
	return ""
}

// Under the net overlay, net.Interfaces answers a loopback interface and one with the
// node's own simulated address (NATS asks for them). The negative control is the same
// program built without the overlay: the stock wasip1 package net has no interfaces,
// and the check must reject that.
func TestNetInterfaces(t *testing.T) {
	out := ifacesRun(t, true)
	if p := ifacesProblem(out); p != "" {
		t.Fatalf("with the overlay: %s:\n\t%s", p, strings.Join(out, "\n\t"))
	}
	t.Logf("with the overlay:\n\t%s", strings.Join(out, "\n\t"))
	stock := ifacesRun(t, false)
	if ifacesProblem(stock) == "" {
		t.Fatalf("without the overlay the check passes too, so it proves nothing:\n\t%s", strings.Join(stock, "\n\t"))
	}
}
