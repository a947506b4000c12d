// Acceptance tests of the engine core, through real wasm guests: the disk model, the
// network, determinism and bad input. The guests live in testdata/guests and are built
// for wasip1 once per test process; each config gets one prepared Sim, shared by its
// subtests.
package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// ---- shared machinery ----

var (
	wasmMu    sync.Mutex
	wasmByPkg = map[string]string{} // guest package dir -> built module
	simMu     sync.Mutex
	simByName = map[string]*engine.Sim{}
)

// guestModule builds the guest package (a path relative to testdata, "./guests/basic")
// for wasip1 once per process and returns the module file.
func guestModule(t *testing.T, dir, pkg string) string {
	t.Helper()
	key := filepath.Join(dir, pkg)
	wasmMu.Lock()
	defer wasmMu.Unlock()
	if p, ok := wasmByPkg[key]; ok {
		return p
	}
	cfg, err := engine.ParseConfig([]byte(fmt.Sprintf(`{"workload": {"name": "client", "pkg": %q}}`, pkg)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Path = dir, filepath.Join(dir, "build.json")
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatalf("build %s: %v", pkg, err)
	}
	p := engineapi.WasmPaths(s)[0]
	s.Close()
	wasmByPkg[key] = p
	return p
}

// prepared returns the Sim of a config, preparing it on first use with the shared
// builds. name identifies the config: a file under testdata ("disk.json"), or, with
// text set, an inline config that the tests name.
func prepared(t *testing.T, name, text string) *engine.Sim {
	t.Helper()
	simMu.Lock()
	s := simByName[name]
	simMu.Unlock()
	if s != nil {
		return s
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var cfg *engine.Config
	if text == "" {
		if cfg, err = engine.LoadConfig(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	} else {
		if cfg, err = engine.ParseConfig([]byte(text)); err != nil {
			t.Fatalf("config %s: %v", name, err)
		}
		cfg.Dir, cfg.Path = dir, filepath.Join(dir, name)
	}
	var wasm []string
	for _, n := range cfg.AllNodes() {
		wasm = append(wasm, guestModule(t, cfg.Dir, n.Pkg))
	}
	s, err = engine.Prepare(context.Background(), cfg, engine.PrepareOptions{Wasm: wasm})
	if err != nil {
		t.Fatal(err)
	}
	simMu.Lock()
	defer simMu.Unlock()
	if old := simByName[name]; old != nil {
		s.Close()
		return old
	}
	simByName[name] = s
	return s
}

// basicConfig is an inline config: nodes (made by basicNode), the last of which is the
// workload, and extra top-level fields ("horizon": "5s").
func basicConfig(extra string, nodes ...string) string {
	if extra != "" {
		extra = ",\n" + extra
	}
	last := len(nodes) - 1
	return fmt.Sprintf(`{"nodes": [%s], "workload": %s%s}`, strings.Join(nodes[:last], ", "), nodes[last], extra)
}

// basicNode is a node running the basic guest with args (its mode first).
func basicNode(name string, args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`{"name": %q, "pkg": "./guests/basic", "args": [%s]}`, name, strings.Join(q, ", "))
}

// runSeed runs one seed with the trace kept.
func runSeed(t *testing.T, s *engine.Sim, seed uint64, plan *engine.FaultPlan) *engine.Result {
	t.Helper()
	r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true, Plan: plan})
	if r.Verdict == engine.VerdictError {
		t.Fatalf("seed %d: run error: %s", seed, r.Error)
	}
	return r
}

// output returns the lines an incarnation ("n#2") printed, without the trace prefix.
// label may be a node name alone ("n"), which matches every incarnation.
func output(r *engine.Result, label string) []string {
	var out []string
	for _, l := range r.Trace {
		_, rest, ok := strings.Cut(l, " | ")
		if !ok {
			continue
		}
		who := strings.Fields(strings.TrimSpace(l[:len(l)-len(rest)-3]))
		if len(who) < 2 {
			continue
		}
		w := who[len(who)-1]
		if w == label || strings.HasPrefix(w, label+"#") {
			out = append(out, rest)
		}
	}
	return out
}

func traceText(r *engine.Result) string { return strings.Join(r.Trace, "\n") }

// traceLine returns the first trace line containing s, and its index.
func traceLine(r *engine.Result, s string) (string, int) {
	for i, l := range r.Trace {
		if strings.Contains(l, s) {
			return l, i
		}
	}
	return "", -1
}

func crashAt(node string, at, restart time.Duration) *engine.FaultPlan {
	return &engine.FaultPlan{Faults: []engine.Fault{{AtNS: int64(at), Kind: engine.FaultCrash, Node: node, RestartNS: int64(restart)}}}
}

func crashDuringOp(node string, op int64, restart time.Duration) *engine.FaultPlan {
	return &engine.FaultPlan{Faults: []engine.Fault{{Kind: engine.FaultCrash, Node: node, DiskOp: op, Incarnation: 1, RestartNS: int64(restart)}}}
}

// TestBadConfig checks that malformed configs are errors naming the file and the field.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	const ok = `"workload": {"pkg": "./client"}`
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown field", `{` + ok + `, "nodez": []}`, []string{"field nodez: unknown field"}},
		{"unknown node field", `{"nodes": [{"name": "s", "pkg": "./s", "argz": []}], ` + ok + `}`, []string{"field nodes[0].argz: unknown field"}},
		{"unknown fault field", `{` + ok + `, "faults": {"crash_per_minute": 1}}`, []string{"field faults.crash_per_minute: unknown field"}},
		{"bad type", `{` + ok + `, "faults": {"crash_per_sec": "fast"}}`, []string{"faults.crash_per_sec"}},
		{"bad type in node", `{"nodes": [{"name": "s", "pkg": "./s", "args": "-x"}], ` + ok + `}`, []string{"args"}},
		{"bad duration", `{` + ok + `, "horizon": "5 parsecs"}`, []string{"horizon", "5 parsecs"}},
		{"bad duration type", `{` + ok + `, "horizon": true}`, []string{"horizon"}},
		{"bad nested duration", `{` + ok + `, "faults": {"restart_delay": "soon"}}`, []string{"faults.restart_delay", "soon"}},
		{"negative duration", `{` + ok + `, "watchdog": "-5s"}`, []string{"watchdog", "negative"}},
		{"bad rate", `{` + ok + `, "faults": {"crash_per_sec": -1}}`, []string{"faults.crash_per_sec"}},
		{"bad probability", `{` + ok + `, "faults": {"fsync_eio": 1.5}}`, []string{"faults.fsync_eio"}},
		{"bad node name", `{"nodes": [{"name": "Server", "pkg": "./s"}], ` + ok + `}`, []string{"nodes[0].name"}},
		{"duplicate node", `{"nodes": [{"name": "s", "pkg": "./s"}, {"name": "s", "pkg": "./s"}], ` + ok + `}`, []string{"nodes[1].name", "duplicate"}},
		{"missing workload", `{"nodes": [{"name": "s", "pkg": "./s"}]}`, []string{"workload.pkg"}},
		{"memory limit", `{` + ok + `, "memory_limit_mib": 5000}`, []string{"memory_limit_mib"}},
		{"tear unit not a power of two", `{` + ok + `, "faults": {"tear_unit": 500}}`, []string{"field faults.tear_unit", "500"}},
		{"tear unit negative", `{` + ok + `, "faults": {"tear_unit": -512}}`, []string{"field faults.tear_unit"}},
		{"tear unit too large", `{` + ok + `, "faults": {"tear_unit": 4194304}}`, []string{"field faults.tear_unit"}},
		{"disk limit", `{` + ok + `, "disk_limit_mib": -1}`, []string{"field disk_limit_mib"}},
		{"file limit", `{` + ok + `, "file_limit_mib": 100000}`, []string{"field file_limit_mib"}},
		{"syntax", "{\n" + ok + ",\n}", []string{"line 3"}},
		{"trailing data", `{` + ok + `} {}`, []string{"trailing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad-config.json")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := engine.LoadConfig(path)
			if err == nil {
				t.Fatalf("config %s loaded without error", tc.text)
			}
			for _, w := range append([]string{path}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// The control: the same file without the mistake loads.
	path := filepath.Join(t.TempDir(), "good.json")
	os.WriteFile(path, []byte(`{`+ok+`, "horizon": "5s", "faults": {"crash_per_sec": 0.5, "restart_delay": "100ms"}}`), 0o644)
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		t.Fatalf("good config: %v", err)
	}
	if time.Duration(cfg.Horizon) != 5*time.Second || time.Duration(cfg.Faults.RestartDelay) != 100*time.Millisecond {
		t.Errorf("good config read as horizon %v restart_delay %v", time.Duration(cfg.Horizon), time.Duration(cfg.Faults.RestartDelay))
	}
}

// TestBuildError: a node package that does not compile is a *BuildError naming the node
// and carrying the compiler's output.
func TestBuildError(t *testing.T) {
	t.Parallel()
	cfg, err := engine.LoadConfig(filepath.Join("testdata", "broken.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	var be *engine.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Prepare: %v (%T), want a *engine.BuildError", err, err)
	}
	if be.Node != "server" {
		t.Errorf("BuildError.Node = %q, want server", be.Node)
	}
	for _, w := range []string{"main.go", "cannot use"} {
		if !strings.Contains(be.Output, w) {
			t.Errorf("compiler output %q does not contain %q", be.Output, w)
		}
	}
	if !strings.Contains(err.Error(), `"server"`) {
		t.Errorf("error %q does not name the node", err)
	}
}
