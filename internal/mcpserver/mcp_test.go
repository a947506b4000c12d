package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/mcpserver"
)

// progressLog records the progress notifications a client receives, by token.
type progressLog struct {
	mu     sync.Mutex
	byTok  map[string][]*mcp.ProgressNotificationParams
	notify chan struct{}
}

func (p *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	tok := fmt.Sprint(req.Params.ProgressToken)
	p.byTok[tok] = append(p.byTok[tok], req.Params)
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

func (p *progressLog) get(tok string) []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.byTok[tok])
}

// server is a `seedfall mcp` subprocess and a client session connected to it.
type server struct {
	session  *mcp.ClientSession
	pid      int
	progress *progressLog
	stderr   *bytes.Buffer
}

// startServer builds seedfall and starts `seedfall mcp` in examples/kvlog, driven by
// the SDK's client over stdio, as an agent's MCP client would.
func startServer(t *testing.T) *server {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "seedfall")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/seedfall")...)
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/seedfall: %v\n%s", err, out)
	}
	kvlog, err := filepath.Abs("../../examples/kvlog")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = kvlog
	s := &server{progress: &progressLog{byTok: map[string][]*mcp.ProgressNotificationParams{}, notify: make(chan struct{}, 1)}, stderr: &bytes.Buffer{}}
	cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "seedfall-test", Version: "v0"},
		&mcp.ClientOptions{ProgressNotificationHandler: s.progress.handle})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.session, err = client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to seedfall mcp: %v", err)
	}
	s.pid = cmd.Process.Pid
	t.Cleanup(func() {
		s.session.Close() // closes the server's stdin and waits for it to exit
		if bytes.Contains(s.stderr.Bytes(), []byte("DATA RACE")) {
			t.Error("the server reported a data race")
		}
		if t.Failed() && s.stderr.Len() > 0 {
			t.Logf("seedfall mcp stderr:\n%s", s.stderr)
		}
	})
	return s
}

// call calls a tool with a progress token and returns its result.
func (s *server) call(ctx context.Context, t *testing.T, tool, token string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if token != "" {
		p.SetProgressToken(token)
	}
	res, err := s.session.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s %v: protocol error: %v", tool, args, err)
	}
	return res
}

// decode checks a tool result succeeded and decodes its structured content.
func decode[T any](t *testing.T, tool string, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	if res.IsError {
		t.Fatalf("%s: tool error: %s", tool, text(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, data, err)
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// workers lists the `seedfall worker` processes whose parent is pid.
func workers(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if slices.Contains(strings.Split(string(cmdline), "\x00"), "worker") {
			out = append(out, child)
		}
	}
	return out
}

// TestMCP drives `seedfall mcp` over stdio through the agent workflow on kvlog (sweep,
// shrink, replay, cause), then bad arguments, escaping paths and cancellation.
func TestMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds seedfall and the kvlog example and runs seeds")
	}
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("tools", func(t *testing.T) {
		res, err := s.session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			var schema struct {
				Type       string                     `json:"type"`
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			data, _ := json.Marshal(tool.InputSchema)
			if err := json.Unmarshal(data, &schema); err != nil || schema.Type != "object" {
				t.Errorf("%s: input schema %s is not an object schema", tool.Name, data)
			}
			if schema.Properties["config"] == nil || schema.Properties["test"] == nil || schema.Properties["run"] == nil {
				t.Errorf("%s: input schema %s lacks config, test or run", tool.Name, data)
			}
			if slices.Contains(schema.Required, "config") {
				t.Errorf("%s: input schema %s requires config (a simulation test is the other way)", tool.Name, data)
			}
			if tool.OutputSchema == nil {
				t.Errorf("%s: no output schema", tool.Name)
			}
			if tool.Description == "" {
				t.Errorf("%s: no description", tool.Name)
			}
		}
		slices.Sort(names)
		want := []string{"seedfall_cause", "seedfall_replay", "seedfall_run", "seedfall_shrink"}
		if !slices.Equal(names, want) {
			t.Fatalf("tools %v, want %v", names, want)
		}
	})

	t.Run("run with coverage", func(t *testing.T) {
		res := s.call(ctx, t, "seedfall_run", "", map[string]any{"config": "seedfall.cover.json", "seeds": "1-8"})
		out := decode[mcpserver.RunOutput](t, "seedfall_run", res)
		if out.Coverage == nil {
			t.Fatalf("no coverage for a config with the coverage field: %+v", out)
		}
		var paths []string
		for _, p := range out.Coverage.Packages {
			paths = append(paths, p.Path)
			if p.Statements == 0 || p.Covered == 0 {
				t.Errorf("package %+v: want some statements reached", p)
			}
		}
		if !slices.Contains(paths, "github.com/seedfall/seedfall/examples/kvlog/kvstore") {
			t.Errorf("coverage packages %v, want kvlog's kvstore", paths)
		}
		if !strings.Contains(text(res), "coverage (statements reached by any seed):") {
			t.Errorf("text %q has no coverage", text(res))
		}
		plain := decode[mcpserver.RunOutput](t, "seedfall_run", s.call(ctx, t, "seedfall_run", "", map[string]any{"config": "seedfall.fixed.json", "seeds": "1"}))
		if plain.Coverage != nil {
			t.Errorf("coverage for a config without the field")
		}
	})

	t.Run("simulation test", func(t *testing.T) {
		test := map[string]any{"test": "./simtest", "run": "^TestTornTail$"}
		with := func(kv ...any) map[string]any {
			m := maps.Clone(test)
			for i := 0; i < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		res := s.call(ctx, t, "seedfall_run", "", with("seeds", "1-40"))
		out := decode[mcpserver.RunOutput](t, "seedfall_run", res)
		if out.Failed == 0 || len(out.Signatures) == 0 {
			t.Fatalf("%+v: want the torn tail found", out)
		}
		g := out.Signatures[0]
		wantReplay := fmt.Sprintf("seedfall test ./simtest -run '^TestTornTail$' -seed %d", g.Seeds[0])
		if !strings.Contains(g.Reason, "acknowledged write lost") || g.Replay != wantReplay {
			t.Errorf("signature %+v: want the lost write, replayed by %q", g, wantReplay)
		}
		if !strings.Contains(text(res), `next: seedfall_shrink {"test": "./simtest", "run": "^TestTornTail$", "seed": `) {
			t.Errorf("text %q does not point to shrinking the test", text(res))
		}
		sh := decode[cli.ShrinkReport](t, "seedfall_shrink", s.call(ctx, t, "seedfall_shrink", "", with("seed", g.Seeds[0], "budget_seconds", 60)))
		t.Cleanup(func() { os.Remove(filepath.Join("../../examples/kvlog", sh.PlanFile)) })
		if !strings.HasPrefix(sh.PlanFile, "simtest/TestTornTail.seed-") || !sh.ReplaysExact {
			t.Errorf("shrink %+v: want a plan in the test's package that replays exactly", sh)
		}
		rp := decode[mcpserver.ReplayOutput](t, "seedfall_replay", s.call(ctx, t, "seedfall_replay", "", with("seed", g.Seeds[0], "faults", sh.PlanFile)))
		if rp.Verdict != engine.VerdictFail {
			t.Errorf("replay of the shrunk plan: %+v", rp)
		}
		for _, bad := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"test": "./simtest", "seeds": "1"}, "2 simulation tests match (TestTornTail, TestTornTailFixed)"},
			{map[string]any{"test": "./simtest", "config": "seedfall.json", "run": "Fixed", "seeds": "1"}, "either config or test"},
			{map[string]any{"run": "Fixed", "seeds": "1"}, "give the package as test too"},
			{map[string]any{"test": "../../", "run": "X", "seeds": "1"}, "outside the working directory"},
		} {
			res := s.call(ctx, t, "seedfall_run", "", bad.args)
			if !res.IsError || !strings.Contains(text(res), bad.want) {
				t.Errorf("seedfall_run %v: %q, want an error with %q", bad.args, text(res), bad.want)
			}
		}
	})

	var run mcpserver.RunOutput
	t.Run("run", func(t *testing.T) {
		res := s.call(ctx, t, "seedfall_run", "run", map[string]any{"config": "seedfall.json", "seeds": "1-40"})
		run = decode[mcpserver.RunOutput](t, "seedfall_run", res)
		if run.Seeds != 40 || run.Failed == 0 || run.Passed+run.Failed+run.Watchdog+run.Errors != 40 {
			t.Fatalf("seeds %d, passed %d, failed %d: want 40 seeds with failures (buggy recovery)", run.Seeds, run.Passed, run.Failed)
		}
		if len(run.Signatures) == 0 {
			t.Fatal("no signatures")
		}
		g := run.Signatures[0]
		if !strings.Contains(g.Reason, "acknowledged write lost") || len(g.Seeds) == 0 || g.SeedCount != len(g.Seeds) || len(g.FaultsBeforeFailure) == 0 {
			t.Errorf("signature %+v: want the lost write with its seeds and faults", g)
		}
		if !strings.HasPrefix(text(res), "FAIL ") || !strings.Contains(text(res), "seedfall_shrink") {
			t.Errorf("text %q: want a FAIL summary pointing to seedfall_shrink", text(res))
		}
		ps := s.progress.get("run")
		if len(ps) == 0 {
			t.Fatal("no progress notifications")
		}
		for i := 1; i < len(ps); i++ {
			if ps[i].Progress <= ps[i-1].Progress {
				t.Errorf("progress went %v -> %v: must increase", ps[i-1].Progress, ps[i].Progress)
			}
		}
		if last := ps[len(ps)-1]; last.Progress != 40 || last.Total != 40 {
			t.Errorf("last progress %v/%v, want 40/40", last.Progress, last.Total)
		}
	})
	if len(run.Signatures) == 0 {
		t.FailNow()
	}

	// Shrink the first failing seed. A file already at the default plan name
	// (seedfall.seed-N.faults.json) must survive: the tool is annotated as not
	// destructive, so it saves to the next free name. Both files are removed after.
	seed := run.Signatures[0].Seeds[0]
	planPath := func(name string) string { return filepath.Join("../../examples/kvlog", name) }
	taken := fmt.Sprintf("seedfall.seed-%d.faults.json", seed)
	wantPlan := fmt.Sprintf("seedfall.seed-%d.2.faults.json", seed)
	for _, name := range []string{taken, wantPlan} {
		if _, err := os.Stat(planPath(name)); err == nil {
			t.Fatalf("%s exists before the test: remove it", planPath(name))
		}
		t.Cleanup(func() { os.Remove(planPath(name)) })
	}
	const sentinel = "a plan the user keeps\n"
	if err := os.WriteFile(planPath(taken), []byte(sentinel), 0o644); err != nil {
		t.Fatal(err)
	}
	var shrunk cli.ShrinkReport
	t.Run("shrink", func(t *testing.T) {
		res := s.call(ctx, t, "seedfall_shrink", "shrink", map[string]any{"config": "seedfall.json", "seed": seed})
		shrunk = decode[cli.ShrinkReport](t, "seedfall_shrink", res)
		if shrunk.MinimalFaults < 1 || shrunk.MinimalFaults > shrunk.FaultsBefore {
			t.Errorf("minimal_faults %d of %d: want at least 1, at most the original", shrunk.MinimalFaults, shrunk.FaultsBefore)
		}
		if !strings.Contains(shrunk.Failure.Reason, "acknowledged write lost") {
			t.Errorf("failure.reason %q: want the lost write", shrunk.Failure.Reason)
		}
		if len(shrunk.Failure.FaultsBeforeFailure) != shrunk.MinimalFaults {
			t.Errorf("faults_before_failure %q: want %d lines", shrunk.Failure.FaultsBeforeFailure, shrunk.MinimalFaults)
		}
		if shrunk.PlanFile != wantPlan || !shrunk.ReplaysExact {
			t.Errorf("plan_file %q (replays exactly: %v), want %q replaying exactly", shrunk.PlanFile, shrunk.ReplaysExact, wantPlan)
		}
		if _, err := os.Stat(planPath(wantPlan)); err != nil {
			t.Errorf("plan file: %v", err)
		}
		if data, err := os.ReadFile(planPath(taken)); err != nil || string(data) != sentinel {
			t.Errorf("shrink overwrote %s (annotated as not destructive): %q, %v", taken, data, err)
		}
		if len(s.progress.get("shrink")) == 0 {
			t.Error("no progress notifications")
		}
	})
	if shrunk.PlanFile == "" {
		t.FailNow()
	}

	t.Run("replay", func(t *testing.T) {
		res := s.call(ctx, t, "seedfall_replay", "", map[string]any{"config": "seedfall.json", "seed": seed, "faults": shrunk.PlanFile})
		r := decode[mcpserver.ReplayOutput](t, "seedfall_replay", res)
		if r.Verdict != "fail" || r.Failure == nil || r.Failure.Reason != shrunk.Failure.Reason {
			t.Errorf("replay of the minimal plan: %s %+v, want the shrunk failure %q", r.Verdict, r.Failure, shrunk.Failure.Reason)
		}
		if len(r.TraceTail) == 0 || len(r.TraceTail) > 60 || r.TraceLines < len(r.TraceTail) || r.TraceHash == "" {
			t.Errorf("trace: %d lines, tail of %d, hash %q", r.TraceLines, len(r.TraceTail), r.TraceHash)
		}
		again := decode[mcpserver.ReplayOutput](t, "seedfall_replay",
			s.call(ctx, t, "seedfall_replay", "", map[string]any{"config": "seedfall.json", "seed": seed, "faults": shrunk.PlanFile, "trace_lines": 5}))
		if again.TraceHash != r.TraceHash || len(again.TraceTail) != 5 {
			t.Errorf("second replay: hash %s (first %s), tail %d lines (want 5)", again.TraceHash, r.TraceHash, len(again.TraceTail))
		}
	})

	t.Run("cause", func(t *testing.T) {
		res := s.call(ctx, t, "seedfall_cause", "cause", map[string]any{"config": "seedfall.json", "seed": seed, "faults": shrunk.PlanFile, "moments": 3, "futures": 3})
		c := decode[mcpserver.CauseOutput](t, "seedfall_cause", res)
		if len(c.Moments) < 3 || len(c.Bars) != len(c.Moments) || c.Failure == nil {
			t.Fatalf("cause: %d moments, %d bars, failure %v", len(c.Moments), len(c.Bars), c.Failure)
		}
		if c.Futures != 3*len(c.Moments) {
			t.Errorf("futures %d, want 3 per moment (%d)", c.Futures, 3*len(c.Moments))
		}
		if !strings.Contains(text(res), "P(fail)") {
			t.Errorf("text %q", text(res))
		}
	})

	passing := uint64(0)
	for x := uint64(1); x <= 120 && passing == 0; x++ {
		failing := false
		for _, g := range run.Signatures {
			failing = failing || slices.Contains(g.Seeds, x)
		}
		if !failing {
			passing = x
		}
	}
	t.Run("tool errors", func(t *testing.T) {
		for _, tc := range []struct {
			name, tool string
			args       map[string]any
			want       string
		}{
			{"parent escape", "seedfall_run", map[string]any{"config": "../../go.mod", "seeds": "1"}, "outside the working directory"},
			{"absolute path outside", "seedfall_run", map[string]any{"config": "/etc/passwd", "seeds": "1"}, "outside the working directory"},
			{"escape after a clean-looking start", "seedfall_shrink", map[string]any{"config": "client/../../../go.mod", "seed": 1}, "outside the working directory"},
			{"plan file outside", "seedfall_replay", map[string]any{"config": "seedfall.json", "seed": 1, "faults": "../../go.sum"}, "outside the working directory"},
			{"missing config file", "seedfall_run", map[string]any{"config": "nope.json", "seeds": "1"}, "no such file"},
			{"missing config argument", "seedfall_run", map[string]any{"seeds": "1"}, "config"},
			{"bad seeds", "seedfall_run", map[string]any{"config": "seedfall.json", "seeds": "1-x"}, "is not a seed"},
			{"too many seeds", "seedfall_run", map[string]any{"config": "seedfall.json", "seeds": "1-200000"}, "at most 100000"},
			{"shrink a passing seed", "seedfall_shrink", map[string]any{"config": "seedfall.json", "seed": passing}, "does not fail"},
			{"cause a passing seed", "seedfall_cause", map[string]any{"config": "seedfall.json", "seed": passing, "moments": 2, "futures": 2}, "does not fail"},
			{"bad trace_lines", "seedfall_replay", map[string]any{"config": "seedfall.json", "seed": 1, "trace_lines": -3}, "trace_lines"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := s.call(ctx, t, tc.tool, "", tc.args)
				if !res.IsError || !strings.Contains(text(res), tc.want) {
					t.Errorf("%s %v: error %v, text %q; want a tool error mentioning %q", tc.tool, tc.args, res.IsError, text(res), tc.want)
				}
				if strings.Contains(tc.want, "working directory") && !strings.Contains(text(res), "examples/kvlog") {
					t.Errorf("text %q: want the working directory named", text(res))
				}
			})
		}
	})

	t.Run("cancel", func(t *testing.T) {
		callCtx, cancelCall := context.WithCancel(ctx)
		defer cancelCall()
		type outcome struct {
			res *mcp.CallToolResult
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			p := &mcp.CallToolParams{Name: "seedfall_run", Arguments: map[string]any{"config": "seedfall.fixed.json", "seeds": "1-100000"}}
			p.SetProgressToken("cancel")
			res, err := s.session.CallTool(callCtx, p)
			done <- outcome{res, err}
		}()
		// Wait until seeds are running in workers (the config builds first), then give the
		// sweep two seconds more.
		deadline := time.After(90 * time.Second)
		for running := false; !running; {
			select {
			case <-s.progress.notify:
				for _, p := range s.progress.get("cancel") {
					running = running || p.Progress >= 1
				}
			case o := <-done:
				t.Fatalf("the sweep of 100000 seeds returned before it was canceled: %v %v", o.err, o.res)
			case <-deadline:
				t.Fatal("no seed finished within 90s")
			}
		}
		time.Sleep(2 * time.Second)
		if len(workers(t, s.pid)) == 0 {
			t.Fatal("no worker processes while the sweep runs")
		}
		start := time.Now()
		cancelCall()
		select {
		case o := <-done:
			if !errors.Is(o.err, context.Canceled) {
				t.Errorf("canceled call returned %v, %v; want context.Canceled", o.res, o.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the canceled call did not return within 10s")
		}
		// The server stops the sweep: its workers go away promptly.
		for ws := workers(t, s.pid); len(ws) > 0; ws = workers(t, s.pid) {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("worker processes %v still running 10s after the cancellation", ws)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("sweep stopped, workers gone %.1fs after the cancellation", time.Since(start).Seconds())
		lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
		defer lcancel()
		if res, err := s.session.ListTools(lctx, nil); err != nil || len(res.Tools) != 4 {
			t.Fatalf("tools/list after the cancellation: %v, %v", res, err)
		}
		last := s.progress.get("cancel")
		if n := last[len(last)-1].Progress; n >= 100000 {
			t.Errorf("progress reached %v: the sweep was not stopped", n)
		}
	})
}
