package engine_test

// Tests of checking (DESIGN.md §3): sim's assertions, the Antithesis Go SDK used
// unchanged, and the property table of a sweep. They run real wasm guests through the
// engine; the guests live in testdata/checking (the Antithesis ones in their own module,
// so the main go.mod does not need the SDK) and in examples/kvlog.

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/report"
)

// builtWasm remembers the modules built for a set of node packages, so that variants
// of a config (other args or env) skip the go build.
var builtWasm = struct {
	sync.Mutex
	m map[string][]string
}{m: map[string][]string{}}

// prepare loads a config, lets edit change it, and prepares it (building the guests, or
// reusing the modules of an earlier config with the same packages).
func prepare(t *testing.T, path string, edit func(*engine.Config)) *engine.Sim {
	t.Helper()
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	key := cfg.Dir
	for _, n := range cfg.AllNodes() {
		key += "\x00" + n.Name + "=" + n.Pkg + " " + strings.Join(n.Tags, ",")
	}
	builtWasm.Lock()
	wasm := builtWasm.m[key]
	builtWasm.Unlock()
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{Wasm: wasm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	builtWasm.Lock()
	builtWasm.m[key] = engineapi.WasmPaths(s)
	builtWasm.Unlock()
	return s
}

func seeds(lo, hi uint64) []uint64 {
	var out []uint64
	for s := lo; s <= hi; s++ {
		out = append(out, s)
	}
	return out
}

func sweep(t *testing.T, s *engine.Sim, ss []uint64) []*engine.Result {
	t.Helper()
	rs := s.Sweep(context.Background(), ss, engine.SweepOptions{RunOptions: engine.RunOptions{OutDir: t.TempDir()}})
	if len(rs) != len(ss) {
		t.Fatalf("sweep returned %d results for %d seeds", len(rs), len(ss))
	}
	return rs
}

func summary(t *testing.T, ps []engine.PropertySummary, name string) engine.PropertySummary {
	t.Helper()
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	t.Fatalf("property %q not in the sweep's table; have %q", name, names)
	return engine.PropertySummary{}
}

func wantSummary(t *testing.T, ps []engine.PropertySummary, name string, kind engine.PropertyKind, reached, held int, ok bool) {
	t.Helper()
	p := summary(t, ps, name)
	if p.Kind != kind || p.SeedsReached != reached || p.SeedsTrue != held || p.OK != ok {
		t.Errorf("%q = %s reached %d true %d ok %v; want %s reached %d true %d ok %v",
			name, p.Kind, p.SeedsReached, p.SeedsTrue, p.OK, kind, reached, held, ok)
	}
}

func passed(t *testing.T, rs []*engine.Result) {
	t.Helper()
	for _, r := range rs {
		if r.Verdict != engine.VerdictPass {
			t.Errorf("%v", r)
		}
	}
}

func propertyRows(ps []engine.PropertySummary) []report.Property { return report.Properties(ps) }

// ---- sim assertions ----

const simprops = "testdata/checking/simprops/seedfall.json"

func workloadArgs(args ...string) func(*engine.Config) {
	return func(c *engine.Config) { c.Workload.Args = args }
}

func TestSimAlwaysFailsTheRun(t *testing.T) {
	s := prepare(t, simprops, workloadArgs("-violate"))
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictFail || r.Failure == nil {
		t.Fatalf("run = %v; want a failure", r)
	}
	f := r.Failure
	if f.Kind != "always" || f.Node != "client#1" {
		t.Errorf("failure kind %q node %q; want always, client#1", f.Kind, f.Node)
	}
	for _, want := range []string{"always violated: x is negative", `"why":"on purpose"`, `"x":4`} {
		if !strings.Contains(f.Reason, want) {
			t.Errorf("failure reason %q lacks %q", f.Reason, want)
		}
	}
	if f.Signature == "" {
		t.Error("failure has no signature")
	}
	p := findHit(r, "x is negative")
	if p == nil || p.Kind != engine.PropAlways || !p.Reached || p.Held {
		t.Errorf("property hit = %+v; want an always reached and not held", p)
	}
}

func TestSimUnreachableFailsTheRun(t *testing.T) {
	s := prepare(t, simprops, workloadArgs("-unreachable"))
	r := s.Run(context.Background(), 2, engine.RunOptions{})
	if r.Verdict != engine.VerdictFail || r.Failure == nil || r.Failure.Kind != "unreachable" {
		t.Fatalf("run = %v; want an unreachable failure", r)
	}
	for _, want := range []string{"unreachable violated: the unreachable branch", `"coin":`} {
		if !strings.Contains(r.Failure.Reason, want) {
			t.Errorf("failure reason %q lacks %q", r.Failure.Reason, want)
		}
	}
}

func findHit(r *engine.Result, name string) *engine.PropertyHit {
	for i := range r.Properties {
		if r.Properties[i].Name == name {
			return &r.Properties[i]
		}
	}
	return nil
}

func TestSimPropertiesAggregate(t *testing.T) {
	s := prepare(t, simprops, nil)
	rs := sweep(t, s, seeds(1, 8))
	passed(t, rs)
	ps := engine.AggregateProperties(rs)
	wantSummary(t, ps, "coin is 0 or 1", engine.PropAlways, 8, 8, true)
	wantSummary(t, ps, "coin came up seven", engine.PropSometimes, 8, 0, false) // never true: not OK
	wantSummary(t, ps, "workload finished", engine.PropReachable, 8, 8, true)
	wantSummary(t, ps, "node started", engine.PropReachable, 8, 8, true) // from a server node
	wantSummary(t, ps, "node accepted a connection", engine.PropSometimes, 8, 8, true)
	heads := summary(t, ps, "coin came up heads")
	if heads.Kind != engine.PropSometimes || heads.SeedsReached != 8 || heads.SeedsTrue == 0 || heads.SeedsTrue == 8 || !heads.OK {
		t.Errorf("coin came up heads = %+v; want a sometimes reached on 8 seeds, true on some but not all", heads)
	}
	if findHit(rs[0], "coin seven branch") != nil {
		t.Error("a sim.Reachable never run appears in a run's properties")
	}
}

// ---- the Antithesis Go SDK, unchanged ----

const (
	antithesisCfg     = "testdata/checking/antithesis/seedfall.json"
	antithesisViolate = "testdata/checking/antithesis/seedfall.violate.json"
)

// localOutput points every node's ANTITHESIS_SDK_LOCAL_OUTPUT at a file in the root of
// its disk, instead of the engine's default /.seedfall/antithesis-<incarnation>.jsonl.
// The collector reads whatever path the environment names and removes the file after
// reading it, so a path shared by a node's incarnations still counts each one once.
func localOutput(c *engine.Config) {
	for _, n := range append([]*engine.NodeConfig{&c.Workload}, nodePtrs(c)...) {
		if n.Env == nil {
			n.Env = map[string]string{}
		}
		n.Env["ANTITHESIS_SDK_LOCAL_OUTPUT"] = "/antithesis.jsonl"
	}
}

func nodePtrs(c *engine.Config) []*engine.NodeConfig {
	var out []*engine.NodeConfig
	for i := range c.Nodes {
		out = append(out, &c.Nodes[i])
	}
	return out
}

func edits(fs ...func(*engine.Config)) func(*engine.Config) {
	return func(c *engine.Config) {
		for _, f := range fs {
			f(c)
		}
	}
}

// checkAntithesisTable checks the SDK's assertions in a passing sweep of the
// antithesis guests (server and workload, with crashes and restarts of the server).
func checkAntithesisTable(t *testing.T, rs []*engine.Result) {
	t.Helper()
	passed(t, rs)
	n := len(rs)
	ps := engine.AggregateProperties(rs)
	wantSummary(t, ps, "server doubles", engine.PropAlways, n, n, true)
	wantSummary(t, ps, "server sees non-negative requests", engine.PropAlways, n, n, true)
	wantSummary(t, ps, "server was not told to misbehave", engine.PropAlways, n, n, true)
	wantSummary(t, ps, "server started", engine.PropReachable, n, n, true)
	wantSummary(t, ps, "workload finished", engine.PropReachable, n, n, true)
	// Declared by the catalog, never reached: the sweep fails on it.
	wantSummary(t, ps, "workload answered a million requests", engine.PropReachable, 0, 0, false)
	// Declared, never reached: that is what an Unreachable wants.
	wantSummary(t, ps, "workload took the unreachable branch", engine.PropUnreachable, 0, 0, true)
	// Never declared and never hit: not in the table at all.
	for _, p := range ps {
		if p.Name == "server got a malformed request" || (p.Name == "answered count is negative" && p.SeedsReached > 0) {
			t.Errorf("unexpected property %+v", p)
		}
	}
	for _, name := range []string{"workload sent a small number", "server saw a multiple of 7"} {
		p := summary(t, ps, name)
		if p.Kind != engine.PropSometimes || p.SeedsReached != n || p.SeedsTrue == 0 || !p.OK {
			t.Errorf("%q = %+v; want a sometimes reached on all %d seeds and true on some", name, p, n)
		}
	}
	var b bytes.Buffer
	report.PropertyTable(&b, propertyRows(ps))
	table := b.String()
	for _, want := range []string{"seeds reached  seeds true  always", "seeds reached  seeds true  reachable", "workload answered a million requests"} {
		if !strings.Contains(table, want) {
			t.Errorf("property table lacks %q:\n%s", want, table)
		}
	}
	t.Logf("\n%s", table)
}

func TestAntithesisSDKProperties(t *testing.T) {
	s := prepare(t, antithesisCfg, localOutput)
	rs := sweep(t, s, seeds(1, 6))
	checkAntithesisTable(t, rs)
	// The server crashed and restarted on some seed: every incarnation's file counted.
	restarts := 0
	for _, r := range rs {
		if r.Stats.Incarnations > 2 {
			restarts++
			if p := findHit(r, "server started"); p == nil || p.Count < 2 {
				t.Errorf("seed %d: %d incarnations but server started hit %+v", r.Seed, r.Stats.Incarnations, p)
			}
		}
	}
	if restarts == 0 {
		t.Error("no seed restarted the server; the test does not cover incarnations")
	}
}

// TestAntithesisSDKDefaultOutput uses the engine's own per-incarnation path. If the SDK
// cannot create its file there (the engine did not create /.seedfall on the node's disk)
// that is an engine bug, and the test fails on it.
func TestAntithesisSDKDefaultOutput(t *testing.T) {
	s := prepare(t, antithesisCfg, nil)
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	for _, line := range r.Trace {
		if strings.Contains(line, "Failed to open path /.seedfall/") {
			t.Fatalf("engine bug: the SDK cannot create its output file, /.seedfall does not exist on the node's disk:\n%s", line)
		}
	}
	checkAntithesisTable(t, append([]*engine.Result{r}, sweep(t, s, seeds(2, 4))...))
}

func TestAntithesisSDKViolatedAlways(t *testing.T) {
	s := prepare(t, antithesisViolate, localOutput)
	r := s.Run(context.Background(), 1, engine.RunOptions{})
	if r.Verdict != engine.VerdictFail || r.Failure == nil || r.Failure.Kind != "always" {
		t.Fatalf("run = %v; want an always failure", r)
	}
	for _, want := range []string{"client#1", "always violated: answered count is negative", `{"answered":`} {
		if !strings.Contains(r.Failure.Reason, want) {
			t.Errorf("failure reason %q lacks %q", r.Failure.Reason, want)
		}
	}
	ps := engine.AggregateProperties([]*engine.Result{r})
	wantSummary(t, ps, "answered count is negative", engine.PropAlways, 1, 0, false)
}

func TestAntithesisSDKUnreachable(t *testing.T) {
	s := prepare(t, antithesisViolate, edits(localOutput, workloadArgs("-unreachable")))
	r := s.Run(context.Background(), 1, engine.RunOptions{})
	if r.Verdict != engine.VerdictFail || r.Failure == nil || r.Failure.Kind != "unreachable" ||
		!strings.Contains(r.Failure.Reason, "workload took the unreachable branch") {
		t.Fatalf("run = %v; want an unreachable failure", r)
	}
}

// A server's file is read only when the server stops, here after the workload exited 0:
// the violation must still fail the run.
func TestAntithesisSDKViolationFoundAtShutdown(t *testing.T) {
	s := prepare(t, antithesisViolate, edits(localOutput, workloadArgs(), func(c *engine.Config) {
		c.Nodes[0].Args = []string{"-violate"}
	}))
	r := s.Run(context.Background(), 3, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictFail || r.Failure == nil || r.Failure.Kind != "always" || r.Failure.Node != "server#1" ||
		!strings.Contains(r.Failure.Reason, "server was not told to misbehave") {
		t.Fatalf("run = %v; want the server's always failure", r)
	}
	exited := false
	for _, line := range r.Trace {
		if strings.Contains(line, "client#1 | ok:") {
			exited = true
		}
	}
	if !exited {
		t.Error("the workload did not finish before the failure; the test does not cover shutdown")
	}
}

// ---- kvlog's property table ----

func TestKvlogTornTailProperty(t *testing.T) {
	s := prepare(t, filepath.Join("..", "examples", "kvlog", "seedfall.fixed.json"), nil)
	rs := sweep(t, s, seeds(1, 20))
	passed(t, rs)
	ps := engine.AggregateProperties(rs)
	p := summary(t, ps, "recovery found a torn tail")
	if p.Kind != engine.PropSometimes || p.SeedsReached != len(rs) || p.SeedsTrue == 0 || p.SeedsTrue >= p.SeedsReached || !p.OK {
		t.Errorf("recovery found a torn tail = %+v; want a sometimes reached on all %d seeds and true on some but not all", p, len(rs))
	}
	var b bytes.Buffer
	report.PropertyTable(&b, propertyRows(ps))
	table := b.String()
	lines := strings.Split(table, "\n")
	header, row := "", ""
	for i, l := range lines {
		if strings.HasPrefix(l, "recovery found a torn tail") && i > 0 {
			header, row = lines[i-1], l
		}
	}
	// The product page's shape:
	//   property                    seeds reached  seeds true  sometimes
	//   recovery found a torn tail           1000         406  ok
	f := strings.Fields(header)
	if len(f) != 6 || f[0] != "property" || strings.Join(f[1:], " ") != "seeds reached seeds true sometimes" ||
		!strings.Contains(header, "  seeds reached  seeds true  sometimes") {
		t.Errorf("header %q does not have the product page's shape", header)
	}
	rf := strings.Fields(strings.TrimPrefix(row, "recovery found a torn tail"))
	if len(rf) != 3 || rf[2] != "ok" || len(row) != len(header)-len("sometimes")+len("ok") {
		t.Errorf("row %q does not line up with header %q", row, header)
	}
	t.Logf("\n%s", table)
}

// The Antithesis SDK's lifecycle.SetupComplete, unchanged, starts the generated faults
// under faults.start_on "setup_complete": no fault before the workload's setup line.
// The control is the same config without start_on: faults before that moment.
func TestAntithesisSDKSetupComplete(t *testing.T) {
	faster := func(startOn string) func(*engine.Config) {
		return func(c *engine.Config) {
			c.Faults.CrashPerSec = 10
			c.Faults.StartOn = startOn
		}
	}
	setupAt := func(t *testing.T, r *engine.Result) (time.Duration, bool) {
		for _, l := range r.Trace {
			if f := strings.Fields(l); len(f) >= 4 && f[1] == "client#1" && f[2] == "setup" && f[3] == "complete" {
				d, err := time.ParseDuration(f[0])
				if err != nil {
					t.Fatalf("trace time %q: %v", f[0], err)
				}
				return d, true
			}
		}
		return 0, false
	}
	for _, tc := range []struct {
		startOn string
		early   bool
	}{{"setup_complete", false}, {"time", true}} {
		t.Run(tc.startOn, func(t *testing.T) {
			s := prepare(t, antithesisCfg, edits(localOutput, workloadArgs("-setup-after", "5"), faster(tc.startOn)))
			early := 0
			for seed := uint64(1); seed <= 3; seed++ {
				r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true})
				at, ok := setupAt(t, r)
				if !ok {
					t.Fatalf("seed %d: no setup complete line in the trace:\n%s", seed, strings.Join(r.Trace, "\n"))
				}
				if len(r.Faults) == 0 {
					t.Fatalf("seed %d: no faults at all", seed)
				}
				for _, f := range r.Faults {
					if time.Duration(f.AtNS) < at {
						early++
					}
				}
			}
			if (early > 0) != tc.early {
				t.Fatalf("%d faults before the setup signal, want early faults: %v", early, tc.early)
			}
		})
	}
}
