// Acceptance tests of the fault catalogue: for every fault kind, a guest that observes
// it and a negative control that must pass. Plans are hand-written (engine.FaultPlan)
// wherever the fault can be placed exactly; where the outcome of a crash is a draw from
// the disk stream (which pending write survives, which prefix of a directory's pending
// operations), the test runs a few fixed seeds and asserts on the set of outcomes.
//
// The guests live in testdata/faults and are built once per test process:
//
//	disk   writes, syncs, renames and crashes (-mode), and reports what survived
//	net    a ping server and client, heartbeats, errors named by errno
//	clock  prints its wall and monotonic clocks
//	wait   the workload of the single-node tests: sleeps, then ends the run
package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

const ftDir = "testdata/faults"

var (
	ftOnce   sync.Once
	ftWasm   map[string]string // guest package ("./disk") -> built module
	ftErr    error
	ftPkgs   = []string{"./disk", "./net", "./clock", "./jumpy", "./mapped", "./threeop", "./wait"} // the workload last
	ftDirAbs string
)

// ftModules builds every fault guest once per process.
func ftModules(t *testing.T) map[string]string {
	t.Helper()
	ftOnce.Do(func() {
		ftDirAbs, ftErr = filepath.Abs(ftDir)
		if ftErr != nil {
			return
		}
		var nodes []string
		for i, p := range ftPkgs[:len(ftPkgs)-1] {
			nodes = append(nodes, fmt.Sprintf(`{"name":"n%d","pkg":%q}`, i, p))
		}
		text := fmt.Sprintf(`{"nodes":[%s],"workload":{"name":"client","pkg":"./wait"}}`, strings.Join(nodes, ","))
		cfg, err := engine.ParseConfig([]byte(text))
		if err != nil {
			ftErr = err
			return
		}
		cfg.Dir, cfg.Path = ftDirAbs, filepath.Join(ftDirAbs, "build.json")
		s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
		if err != nil {
			ftErr = err
			return
		}
		defer s.Close()
		ftWasm = map[string]string{}
		for i, p := range ftPkgs {
			ftWasm[p] = engineapi.WasmPaths(s)[i]
		}
	})
	if ftErr != nil {
		t.Fatalf("build fault guests: %v", ftErr)
	}
	return ftWasm
}

// ftSim prepares a world from a config text whose packages are fault guests.
func ftSim(t *testing.T, text string) *engine.Sim {
	t.Helper()
	mods := ftModules(t)
	cfg, err := engine.ParseConfig([]byte(text))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, text)
	}
	cfg.Dir, cfg.Path = ftDirAbs, filepath.Join(ftDirAbs, "faults-test.json")
	var wasm []string
	for _, n := range cfg.AllNodes() {
		p, ok := mods[n.Pkg]
		if !ok {
			t.Fatalf("node %s: %s is not a fault guest", n.Name, n.Pkg)
		}
		wasm = append(wasm, p)
	}
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{Wasm: wasm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ftNode renders one node of a config.
func ftNode(name, pkg string, args ...string) string {
	a, _ := json.Marshal(args)
	if len(args) == 0 {
		a = []byte("[]")
	}
	return fmt.Sprintf(`{"name":%q,"pkg":%q,"args":%s}`, name, pkg, a)
}

// ftConfig renders a config: nodes, a workload, and extra top-level fields ("" or
// `"strict_dirs":true`).
func ftConfig(workload string, extra string, nodes ...string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"nodes":[%s],"workload":%s,"horizon":"30s"%s}`, strings.Join(nodes, ","), workload, extra)
}

// ftDiskConfig is one disk guest ("disk") and a workload that waits 2s.
func ftDiskConfig(extra string, args ...string) string {
	return ftConfig(ftNode("client", "./wait", "-for", "2s"), extra, ftNode("disk", "./disk", args...))
}

func ftPlan(fs ...engine.Fault) *engine.FaultPlan { return &engine.FaultPlan{Faults: fs} }

// ftCrash is an idle crash at a time, with a restart delay.
func ftCrash(node string, at, restart time.Duration) engine.Fault {
	return engine.Fault{AtNS: int64(at), Kind: engine.FaultCrash, Node: node, RestartNS: int64(restart)}
}

func ftRun(t *testing.T, s *engine.Sim, seed uint64, plan *engine.FaultPlan) *engine.Result {
	t.Helper()
	r := s.Run(context.Background(), seed, engine.RunOptions{Plan: plan, Trace: true})
	if r.Verdict == engine.VerdictError || r.Verdict == engine.VerdictWatchdog {
		t.Fatalf("seed %d: %s: %+v\n%s", seed, r.Verdict, r.Failure, strings.Join(r.Trace, "\n"))
	}
	return r
}

// ftLine is one parsed trace line.
type ftLine struct {
	at   time.Duration
	who  string // "disk#2", "fault", "net", "world"
	out  bool   // a line the guest printed ("who | text")
	text string // what follows who (for a printed line, what follows "| ")
	raw  string // what follows who
}

func ftParse(t *testing.T, r *engine.Result) []ftLine {
	t.Helper()
	var out []ftLine
	for _, l := range r.Trace {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("trace line %q", l)
		}
		at, err := time.ParseDuration(f[0])
		if err != nil {
			t.Fatalf("trace line %q: %v", l, err)
		}
		rest := strings.TrimLeft(l, " ")[len(f[0])+1:]
		who, text, _ := strings.Cut(rest, " ")
		x := ftLine{at: at, who: who, text: text, raw: text}
		if strings.HasPrefix(text, "| ") || text == "|" {
			x.out, x.text = true, strings.TrimPrefix(strings.TrimPrefix(text, "|"), " ")
		}
		out = append(out, x)
	}
	return out
}

// ftOutput returns the lines a node (every incarnation when label has no '#') printed.
func ftOutput(t *testing.T, r *engine.Result, label string) []ftLine {
	var out []ftLine
	for _, l := range ftParse(t, r) {
		if !l.out {
			continue
		}
		if l.who == label || !strings.Contains(label, "#") && strings.HasPrefix(l.who, label+"#") {
			out = append(out, l)
		}
	}
	return out
}

// ftFind returns the first trace line whose who and text match (regexp on text).
func ftFind(t *testing.T, r *engine.Result, who, re string) (ftLine, bool) {
	t.Helper()
	rx := regexp.MustCompile(re)
	for _, l := range ftParse(t, r) {
		if (who == "" || l.who == who) && rx.MatchString(l.raw) {
			return l, true
		}
	}
	return ftLine{}, false
}

func ftMust(t *testing.T, r *engine.Result, who, re string) ftLine {
	t.Helper()
	l, ok := ftFind(t, r, who, re)
	if !ok {
		t.Fatalf("seed %d: no trace line %s %q in:\n%s", r.Seed, who, re, strings.Join(r.Trace, "\n"))
	}
	return l
}

func ftDump(r *engine.Result) string { return strings.Join(r.Trace, "\n") }

// ftOutcomes runs the seeds and returns, per seed, "pass" or the failure reason.
func ftOutcomes(t *testing.T, s *engine.Sim, seeds int, plan *engine.FaultPlan) []string {
	t.Helper()
	var out []string
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		r := ftRun(t, s, seed, plan)
		switch r.Verdict {
		case engine.VerdictPass:
			out = append(out, "pass")
		case engine.VerdictFail:
			out = append(out, r.Failure.Reason)
		default:
			t.Fatalf("seed %d: verdict %s\n%s", seed, r.Verdict, ftDump(r))
		}
	}
	return out
}

func ftCount(outcomes []string, sub string) int {
	n := 0
	for _, o := range outcomes {
		if strings.Contains(o, sub) {
			n++
		}
	}
	return n
}
