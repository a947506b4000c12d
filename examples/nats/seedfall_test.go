// Tests of the NATS example: they build the seedfall CLI from this repository and run it
// on the example's configs and plans, as the README does. With -short they take a few
// minutes on two cores with warm caches (the first build of nats-server for wasip1 takes
// about two minutes more); SEEDFALL_LONG=1 runs the README's full sweeps.
package nats_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

var (
	sf       = exampletest.Run
	wantFail = exampletest.WantFail
	wantPass = exampletest.WantPass
)

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// long reports whether the README's full sweeps were asked for.
func long() bool { return os.Getenv("SEEDFALL_LONG") != "" }

// seeds returns the short or the long seed range.
func seeds(short, full string) string {
	if long() {
		return full
	}
	return short
}

// A crash after writeStreamMeta renamed meta.inf into place and before it renamed
// meta.sum: recovery skips the stream, the client creates it again over the same
// directory, which does not rewrite meta.sum, and the next crash loses the stream with
// every message acknowledged since.
func TestMetaSumCrashLosesStream(t *testing.T) {
	code, out := sf(t, "replay", "-c", "seedfall.always.json", "-seed", "1", "-faults", "metasum.faults.json")
	wantFail(t, code, out,
		"rename /data/jetstream/jetstream/$G/streams/EVENTS/meta.inf.tmp -> /data/jetstream/jetstream/$G/streams/EVENTS/meta.inf at v2@v2.15.2/server/filestore.go:14818",
		"fault crash server#1 during disk op #27 write /data/jetstream/jetstream/$G/streams/EVENTS/meta.sum.tmp @0+16 at v2@v2.15.2/server/filestore.go:14808",
		`[WRN]   Missing stream checksum file "/data/jetstream/jetstream/$G/streams/EVENTS/meta.sum"`,
		"client: stream EVENTS created",
		"fault crash server#2 (idle)")
	noInterfaceErrors(t, out)
	if !regexp.MustCompile(`FAIL seed 1 at t=\S+ client#1: stream EVENTS lost after restart, \d+ acknowledged messages gone`).MatchString(out) {
		t.Fatalf("no stream-lost failure:\n%s", tail(out))
	}
}

// The same plan with the first crash two disk ops later, once meta.sum's rename is in
// (the directory fsync after it), passes; so does the plan against the patched server.
func TestMetaSumAfterRenameAndPatchedPass(t *testing.T) {
	code, out := sf(t, "replay", "-c", "seedfall.always.json", "-seed", "1", "-faults", "metasum-after.faults.json")
	wantPass(t, code, out)
	if !strings.Contains(out, "fault crash server#1 during disk op #29 fsync /data/jetstream/jetstream/$G/streams/EVENTS at v2@v2.15.2/server/filestore.go:14865") {
		t.Fatalf("the first crash is not the directory fsync after meta.sum's rename:\n%s", tail(out))
	}
	for _, s := range strings.Split(seeds("1", "1-8"), ",") {
		code, out = sf(t, "replay", "-c", "seedfall.fixed.json", "-seed", s, "-faults", "metasum.faults.json")
		wantPass(t, code, out)
	}
}

// R1 with SyncAlways, crashes during disk ops and torn writes: every acknowledged
// message survives (the meta.sum window is in the first milliseconds, before any
// generated fault); the patched server too.
func TestR1SyncAlwaysPasses(t *testing.T) {
	for _, c := range []string{"seedfall.always.json", "seedfall.fixed.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", seeds("1-2", "1-150"), "-q")
		wantPass(t, code, out)
	}
}

// The negative control: NATS's default sync_interval (2m) acknowledges before fsync,
// and the next crash loses what was acknowledged.
func TestLazySyncCaught(t *testing.T) {
	code, out := sf(t, "run", "-c", "seedfall.lazy.json", "-seeds", "1-2", "-q")
	wantFail(t, code, out)
	if !regexp.MustCompile(`client#1: (stream EVENTS lost after restart, \d+ acknowledged messages gone|acknowledged message seq \d+ lost)`).MatchString(out) {
		t.Fatalf("no lost-message failure:\n%s", out)
	}
}

// The R3 negative control: all three servers lose power at once. With the default lazy
// fsync acknowledged messages are lost (seed 2 happens to keep them); with SyncAlways
// none is.
func TestR3PowerLoss(t *testing.T) {
	code, out := sf(t, "replay", "-c", "seedfall.r3lazy.json", "-seed", "3", "-faults", "r3-power.faults.json", "-q")
	wantFail(t, code, out, "client#1: stream EVENTS lost after restart, ")
	code, out = sf(t, "replay", "-c", "seedfall.r3.json", "-seed", "3", "-faults", "r3-power.faults.json")
	wantPass(t, code, out)
	noInterfaceErrors(t, out)
}

// Three servers, an R3 stream on NATS's raft, routes and clients on the simulated
// network through net_overlay, crashes and partitions.
func TestR3Passes(t *testing.T) {
	code, out := sf(t, "run", "-c", "seedfall.r3.json", "-seeds", seeds("1-2", "1-200"), "-q")
	wantPass(t, code, out)
}

// Every seed run twice gives identical traces.
func TestCheckDeterministic(t *testing.T) {
	for _, c := range []string{"seedfall.always.json", "seedfall.fixed.json", "seedfall.r3.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", seeds("1", "1-20"), "-check", "-q")
		wantPass(t, code, out)
		if !strings.Contains(out, "traces identical") {
			t.Fatalf("%s: -check did not compare traces:\n%s", c, out)
		}
	}
}

// noInterfaceErrors fails the test if a server logged the interface lookup error: with
// ClientAdvertise set, nats-server does not derive its client URLs from the machine's
// interfaces, which seedfall's network does not offer (without it every start logs
// `[ERR] Address "0.0.0.0" can not be resolved properly`).
func noInterfaceErrors(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "can not be resolved properly") {
		t.Fatalf("a server logs the interface lookup error:\n%s", tail(out))
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// The corruption table (docs/findings.md, "Corruption table (CORDS-style)"): one
// representative cell by default. Seed 1 of seedfall.corrupt.json corrupts sectors of
// the stream's 1.blk at a crash: the restarted server restores the messages before the
// first bad one, says nothing else, and reuses the later sequence numbers, so the
// client reads another message at an acknowledged sequence. The same seed's plan without
// its corrupt faults passes.
func TestCorruptionTableCell(t *testing.T) {
	exampletest.CorruptionCell(t, "seedfall.corrupt.json", 1, "corrupt",
		"Restored 9 messages for stream '$G > EVENTS'",
		`acknowledged message seq 10 lost: want "event-9", the stream has "event-46"`)
}

// TestLongCorruptionTable runs the table's sweeps (README, "Device faults") and checks
// each one's verdict.
func TestLongCorruptionTable(t *testing.T) {
	if !long() {
		t.Skip("long sweep; set SEEDFALL_LONG=1")
	}
	for _, s := range natsCorruptionSweeps {
		t.Run(s.cfg, func(t *testing.T) {
			code, out := sf(t, "run", "-q", "-workers", "1", "-c", s.cfg, "-seeds", s.seeds)
			if s.fail {
				wantFail(t, code, out)
			} else {
				wantPass(t, code, out)
			}
		})
	}
}

var natsCorruptionSweeps = []struct {
	cfg, seeds string
	fail       bool
}{
	{"seedfall.read_eio.json", "1-4", true},
	{"seedfall.corrupt.json", "1-4", true},
	{"seedfall.corrupt_read.json", "1-4", true},
	{"seedfall.misdirected_write.json", "1-4", true},
	{"seedfall.lost_write.json", "1-4", true},
	{"seedfall.write_eio.json", "1-2", true},
	{"seedfall.slow_io.json", "1-4", false},
	{"seedfall.r3.read_eio.json", "1-2", true},
	{"seedfall.r3.corrupt.json", "1-2", false},
	{"seedfall.r3.corrupt_read.json", "1-2", false},
	{"seedfall.r3.misdirected_write.json", "1-2", false},
	{"seedfall.r3.lost_write.json", "1-2", false},
	{"seedfall.r3.write_eio.json", "1-2", true},
	{"seedfall.r3.slow_io.json", "1-2", true},
}
