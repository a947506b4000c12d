package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/seedspec"
	"github.com/seedfall/seedfall/internal/worker"
)

// Limits on one call, so that an agent's typo cannot tie the machine up for a day.
const (
	maxSeeds      = 100_000
	maxMoments    = 200
	maxFutures    = 200
	maxTraceLines = 5000
	// shownSeeds is how many seeds of one signature a run result lists.
	shownSeeds = 50
	// defaultTraceLines is how many trace lines replay returns by default.
	defaultTraceLines = 60
)

// RunInput are seedfall_run's arguments.
type RunInput struct {
	Config string `json:"config,omitempty" jsonschema:"the seedfall config file (or give test), relative to the server's working directory, e.g. seedfall.json"`
	Test   string `json:"test,omitempty" jsonschema:"instead of config: a simulation test's package directory (package simtest), relative to the working directory, e.g. ./simtest; run names the test"`
	Run    string `json:"run,omitempty" jsonschema:"with test: a regexp (as go test -run) that matches the one simulation test to use, e.g. ^TestTornTail$"`
	Seeds  string `json:"seeds" jsonschema:"the seeds to run: a range 1-500, one seed 7, or a list 1-5,9,20-22 (at most 100000 seeds)"`
	Check  bool   `json:"check,omitempty" jsonschema:"run every seed twice and compare the traces line by line, to prove the system runs deterministically"`
}

// RunOutput is seedfall_run's result.
type RunOutput struct {
	Config string `json:"config" jsonschema:"the config, relative to the working directory"`
	// Seeds counts the seeds that ran.
	Seeds    int  `json:"seeds" jsonschema:"seeds that ran"`
	Passed   int  `json:"passed" jsonschema:"seeds that passed, including those that hit the time horizon"`
	Failed   int  `json:"failed" jsonschema:"seeds where a check failed, including liveness failures"`
	Liveness int  `json:"liveness" jsonschema:"failed seeds whose workload never finished (by the horizon, or within liveness.quiet of the last fault)"`
	Horizon  int  `json:"horizon" jsonschema:"passing seeds that reached the time horizon before the workload finished (liveness.horizon count)"`
	Watchdog int  `json:"watchdog" jsonschema:"seeds stopped by the wall-clock watchdog (a guest spinning without host calls)"`
	Errors   int  `json:"errors" jsonschema:"seeds the tool could not run"`
	Checked  bool `json:"checked" jsonschema:"every seed ran twice and the traces were compared"`
	Diverged int  `json:"diverged" jsonschema:"seeds whose two runs differ (nondeterminism)"`
	// LinUnknown counts seeds whose linearizability check ran out of its budget.
	LinUnknown       int                      `json:"lin_unknown" jsonschema:"seeds whose linearizability check ran out of its budget (unknown)"`
	Signatures       []SignatureGroup         `json:"signatures" jsonschema:"distinct failures, by lowest seed"`
	Properties       []engine.PropertySummary `json:"properties" jsonschema:"the workload's properties aggregated over the seeds"`
	PropertyFailures []string                 `json:"property_failures,omitempty" jsonschema:"sweep-level property failures (a sometimes property never true, a reachable one never reached)"`
	// Coverage is set when the config has a "coverage" field.
	Coverage    *coverage.Report `json:"coverage,omitempty" jsonschema:"coverage of the system under test over the sweep: per package the statements any seed reached, and the functions no seed entered (config field coverage)"`
	WallSeconds float64          `json:"wall_seconds"`
}

// SignatureGroup is one distinct failure of a sweep.
type SignatureGroup struct {
	Signature string   `json:"signature" jsonschema:"the failure's identity: the same bug on other seeds has the same signature"`
	Kind      string   `json:"kind"`
	Reason    string   `json:"reason" jsonschema:"the failure reason on the lowest seed"`
	Seeds     []uint64 `json:"seeds" jsonschema:"the lowest seeds that hit it (at most 50)"`
	SeedCount int      `json:"seed_count" jsonschema:"how many seeds hit it"`
	// FaultsBeforeFailure are the lowest seed's faults up to the failure, one a line.
	FaultsBeforeFailure []string `json:"faults_before_failure" jsonschema:"the faults applied before the failure on the lowest seed"`
	Replay              string   `json:"replay" jsonschema:"the command that replays the lowest seed"`
}

// ReplayInput are seedfall_replay's arguments.
type ReplayInput struct {
	Config     string `json:"config,omitempty" jsonschema:"the seedfall config file (or give test), relative to the server's working directory"`
	Test       string `json:"test,omitempty" jsonschema:"instead of config: a simulation test's package directory (package simtest), relative to the working directory, e.g. ./simtest; run names the test"`
	Run        string `json:"run,omitempty" jsonschema:"with test: a regexp (as go test -run) that matches the one simulation test to use, e.g. ^TestTornTail$"`
	Seed       uint64 `json:"seed" jsonschema:"the seed to replay"`
	Faults     string `json:"faults,omitempty" jsonschema:"a fault plan file (plan_file from seedfall_shrink) to replay instead of the seed's own faults"`
	TraceLines int    `json:"trace_lines,omitempty" jsonschema:"how many lines of the end of the trace to return (default 60, at most 5000)"`
}

// ReplayOutput is seedfall_replay's result.
type ReplayOutput struct {
	Seed       uint64          `json:"seed"`
	Verdict    engine.Verdict  `json:"verdict" jsonschema:"pass, fail, horizon, watchdog or error"`
	Failure    *engine.Failure `json:"failure,omitempty"`
	Faults     []string        `json:"faults" jsonschema:"every fault applied, in order, one a line"`
	TraceHash  string          `json:"trace_hash" jsonschema:"identifies the run: equal hashes, identical runs"`
	TraceLines int             `json:"trace_lines" jsonschema:"lines in the whole trace"`
	EndNS      int64           `json:"end_ns" jsonschema:"virtual time at which the run ended"`
	TraceTail  []string        `json:"trace_tail" jsonschema:"the last lines of the trace"`
	Replay     string          `json:"replay" jsonschema:"the command that prints the whole trace"`
}

// ShrinkInput are seedfall_shrink's arguments.
type ShrinkInput struct {
	Config        string `json:"config,omitempty" jsonschema:"the seedfall config file (or give test), relative to the server's working directory"`
	Test          string `json:"test,omitempty" jsonschema:"instead of config: a simulation test's package directory (package simtest), relative to the working directory, e.g. ./simtest; run names the test"`
	Run           string `json:"run,omitempty" jsonschema:"with test: a regexp (as go test -run) that matches the one simulation test to use, e.g. ^TestTornTail$"`
	Seed          uint64 `json:"seed" jsonschema:"a failing seed, e.g. the first seed of a signature from seedfall_run"`
	Faults        string `json:"faults,omitempty" jsonschema:"start from this fault plan file instead of the seed's own faults"`
	BudgetSeconds int    `json:"budget_seconds,omitempty" jsonschema:"wall-clock budget in seconds (default 300, at most 3600); when it runs out the smallest plan so far is returned"`
}

// CauseInput are seedfall_cause's arguments.
type CauseInput struct {
	Config  string `json:"config,omitempty" jsonschema:"the seedfall config file (or give test), relative to the server's working directory"`
	Test    string `json:"test,omitempty" jsonschema:"instead of config: a simulation test's package directory (package simtest), relative to the working directory, e.g. ./simtest; run names the test"`
	Run     string `json:"run,omitempty" jsonschema:"with test: a regexp (as go test -run) that matches the one simulation test to use, e.g. ^TestTornTail$"`
	Seed    uint64 `json:"seed" jsonschema:"a failing seed"`
	Faults  string `json:"faults,omitempty" jsonschema:"explain the run of this fault plan file (plan_file from seedfall_shrink) instead of the seed's own faults"`
	Moments int    `json:"moments,omitempty" jsonschema:"evenly spaced moments (default 20); a moment just before and just after each fault is added"`
	Futures int    `json:"futures,omitempty" jsonschema:"alternate futures per moment (default 20)"`
}

// CauseOutput is seedfall_cause's result.
type CauseOutput struct {
	Seed        uint64          `json:"seed"`
	Failure     *engine.Failure `json:"failure"`
	Moments     []engine.Moment `json:"moments" jsonschema:"the P(fail) curve: at each moment, the share of re-randomized futures that fail the same way"`
	Bars        []string        `json:"bars" jsonschema:"the curve as text, one moment a line"`
	BiggestJump *engine.Jump    `json:"biggest_jump,omitempty" jsonschema:"the biggest rise of P(fail) between consecutive moments and the faults between them"`
	Futures     int             `json:"futures" jsonschema:"runs in all"`
	WallSeconds float64         `json:"wall_seconds"`
}

// call is what every tool needs: the resolved config, its prepared Sim, progress.
type call struct {
	cfgArg  string // the config relative to the working directory
	target  target
	sim     *engine.Sim
	release func()
	prog    *progress
}

// open resolves the config and gets its prepared Sim.
func (s *Server) open(ctx context.Context, req *mcp.CallToolRequest, tg target) (*call, error) {
	path, err := s.configPath(ctx, tg)
	if err != nil {
		return nil, err
	}
	c := &call{cfgArg: display(s.root, path), target: tg, prog: newProgress(ctx, req)}
	built := false
	sim, release, err := s.sims.acquire(ctx, path, func(line string) {
		if !built {
			built = true
			c.prog.report(0, 0, "preparing "+c.cfgArg+": "+line)
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("canceled while preparing %s: %w", c.cfgArg, ctx.Err())
		}
		var be *engine.BuildError
		if errors.As(err, &be) {
			return nil, fmt.Errorf("config %s: %w", c.cfgArg, err)
		}
		return nil, err
	}
	c.sim, c.release = sim, release
	return c, nil
}

// runner runs the call's seeds in worker processes, as seedfall_run's sweep does: the
// server is a long-lived process, and a guest that spins without host calls would leave
// its instance and goroutine in it for good (and stall its garbage collector). The
// workers live for one call.
func (s *Server) runner(c *call) (*worker.Pool, error) {
	r, err := cli.NewPool(c.sim, s.workers, s.exe)
	if err != nil {
		return nil, fmt.Errorf("start workers for %s: %w", c.cfgArg, err)
	}
	return r, nil
}

// plan loads an optional fault plan argument.
func (s *Server) plan(arg string) (*engine.FaultPlan, string, error) {
	if arg == "" {
		return nil, "", nil
	}
	path, err := resolve(s.root, "faults", arg)
	if err != nil {
		return nil, "", err
	}
	p, err := cli.LoadPlan(path)
	if err != nil {
		return nil, "", err
	}
	return p, display(s.root, path), nil
}

func (s *Server) run(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, RunOutput, error) {
	seeds, err := seedspec.Parse(in.Seeds)
	if err != nil {
		return nil, RunOutput{}, err
	}
	if len(seeds) > maxSeeds {
		return nil, RunOutput{}, fmt.Errorf("seeds %q: %d seeds; at most %d per call (split the range over several calls)", in.Seeds, len(seeds), maxSeeds)
	}
	c, err := s.open(ctx, req, target{in.Config, in.Test, in.Run})
	if err != nil {
		return nil, RunOutput{}, err
	}
	defer c.release()
	start := time.Now()
	var cov *coverage.Sum
	if c.sim.Config().Coverage != nil {
		cov = &coverage.Sum{}
	}
	results, err := cli.Sweep(ctx, cli.SweepSpec{
		Sim: c.sim, Seeds: seeds, Check: in.Check, Workers: s.workers, Executable: s.exe, Coverage: cov,
		OnProgress: func(done, failed, total int) {
			c.prog.report(float64(done), float64(total), fmt.Sprintf("%d/%d seeds, %d failed", done, total, failed))
		},
	})
	if ctx.Err() != nil {
		return nil, RunOutput{}, fmt.Errorf("seedfall_run canceled after %d of %d seeds: %w", len(results), len(seeds), ctx.Err())
	}
	if err != nil {
		return nil, RunOutput{}, fmt.Errorf("sweep %s: %w", c.cfgArg, err)
	}
	sum := cli.Summarize(c.cfgArg, results)
	out := RunOutput{Config: c.cfgArg, Seeds: sum.Seeds, Passed: sum.Passed, Failed: sum.Failed, Liveness: sum.Liveness, Horizon: sum.Horizon,
		Watchdog: sum.Watchdog, Errors: sum.Errors, Checked: sum.Checked, Diverged: sum.Diverged, LinUnknown: sum.LinUnknown,
		Signatures: []SignatureGroup{}, Properties: sum.Properties, PropertyFailures: sum.PropFails,
		WallSeconds: time.Since(start).Seconds()}
	if cv := cov.Coverage(); cv != nil {
		if out.Coverage, err = cv.Report(); err != nil {
			return nil, RunOutput{}, fmt.Errorf("sweep %s: coverage: %w", c.cfgArg, err)
		}
	}
	for _, g := range sum.Signatures {
		out.Signatures = append(out.Signatures, SignatureGroup{
			Signature: g.Signature, Kind: g.Kind, Reason: g.Reason,
			Seeds: g.Seeds[:min(len(g.Seeds), shownSeeds)], SeedCount: len(g.Seeds),
			FaultsBeforeFailure: nonNil(cli.FaultLines(g.Faults)),
			Replay:              cli.ReplayCommand(c.cfgArg, g.First.Seed),
		})
	}
	return textResult(runText(out, c.target), out), out, nil
}

func (s *Server) replay(ctx context.Context, req *mcp.CallToolRequest, in ReplayInput) (*mcp.CallToolResult, ReplayOutput, error) {
	n := in.TraceLines
	if n == 0 {
		n = defaultTraceLines
	}
	if n < 0 || n > maxTraceLines {
		return nil, ReplayOutput{}, fmt.Errorf("trace_lines %d: want 1 to %d", in.TraceLines, maxTraceLines)
	}
	plan, planArg, err := s.plan(in.Faults)
	if err != nil {
		return nil, ReplayOutput{}, err
	}
	c, err := s.open(ctx, req, target{in.Config, in.Test, in.Run})
	if err != nil {
		return nil, ReplayOutput{}, err
	}
	defer c.release()
	runner, err := s.runner(c)
	if err != nil {
		return nil, ReplayOutput{}, err
	}
	defer runner.Close()
	r := runner.Run(ctx, in.Seed, engine.RunOptions{Plan: plan, Trace: true})
	if ctx.Err() != nil {
		return nil, ReplayOutput{}, fmt.Errorf("seedfall_replay canceled: %w", ctx.Err())
	}
	replay := cli.ReplayCommand(c.cfgArg, in.Seed)
	if planArg != "" {
		replay = cli.ReplayCommand(c.cfgArg, in.Seed, "-faults "+planArg)
	}
	out := ReplayOutput{Seed: r.Seed, Verdict: r.Verdict, Failure: r.Failure, Faults: nonNil(cli.FaultLines(r.Faults)),
		TraceHash: r.TraceHash, TraceLines: r.TraceLines, EndNS: r.EndNS,
		TraceTail: nonNil(r.Trace[max(0, len(r.Trace)-n):]), Replay: replay}
	return textResult(replayText(out, r), out), out, nil
}

func (s *Server) shrink(ctx context.Context, req *mcp.CallToolRequest, in ShrinkInput) (*mcp.CallToolResult, cli.ShrinkReport, error) {
	var none cli.ShrinkReport
	if in.BudgetSeconds < 0 || in.BudgetSeconds > maxBudgetSeconds {
		return nil, none, fmt.Errorf("budget_seconds %d: want 1 to %d seconds (leave it out for the default 300)", in.BudgetSeconds, maxBudgetSeconds)
	}
	budget := 5 * time.Minute
	if in.BudgetSeconds > 0 {
		budget = time.Duration(in.BudgetSeconds) * time.Second
	}
	plan, _, err := s.plan(in.Faults)
	if err != nil {
		return nil, none, err
	}
	c, err := s.open(ctx, req, target{in.Config, in.Test, in.Run})
	if err != nil {
		return nil, none, err
	}
	defer c.release()
	runner, err := s.runner(c)
	if err != nil {
		return nil, none, err
	}
	defer runner.Close()
	res, err := c.sim.Shrink(ctx, in.Seed, engine.ShrinkOptions{Plan: plan, Workers: s.workers, Budget: budget, Run: runner.Run,
		Progress: func(runs, _ int) {
			c.prog.report(float64(runs), 0, fmt.Sprintf("shrinking seed %d: %d runs", in.Seed, runs))
		}})
	if ctx.Err() != nil {
		return nil, none, fmt.Errorf("seedfall_shrink canceled: %w", ctx.Err())
	}
	if err != nil {
		return nil, none, err
	}
	// A new file every time, never an existing one: the tool is annotated as not
	// destructive, and a plan the user committed must survive an agent's shrink.
	planFile := cli.FreePlanPath(c.sim.Config().Path, in.Seed)
	res.Plan.Provenance = c.sim.Provenance(c.cfgArg)
	if err := cli.SavePlan(planFile, res.Plan); err != nil {
		return nil, none, fmt.Errorf("save the minimal plan: %w", err)
	}
	planArg := display(s.root, planFile)
	out := cli.NewShrinkReport(res, planArg, cli.ReplayCommand(c.cfgArg, in.Seed, "-faults "+planArg))
	out.Failure.FaultsBeforeFailure = nonNil(out.Failure.FaultsBeforeFailure)
	return textResult(shrinkText(out, c.target, res), out), out, nil
}

func (s *Server) cause(ctx context.Context, req *mcp.CallToolRequest, in CauseInput) (*mcp.CallToolResult, CauseOutput, error) {
	var none CauseOutput
	if in.Moments < 0 || in.Moments > maxMoments {
		return nil, none, fmt.Errorf("moments %d: want 1 to %d (leave it out for the default 20)", in.Moments, maxMoments)
	}
	if in.Futures < 0 || in.Futures > maxFutures {
		return nil, none, fmt.Errorf("futures %d: want 1 to %d (leave it out for the default 20)", in.Futures, maxFutures)
	}
	plan, _, err := s.plan(in.Faults)
	if err != nil {
		return nil, none, err
	}
	c, err := s.open(ctx, req, target{in.Config, in.Test, in.Run})
	if err != nil {
		return nil, none, err
	}
	defer c.release()
	runner, err := s.runner(c)
	if err != nil {
		return nil, none, err
	}
	defer runner.Close()
	res, err := c.sim.Cause(ctx, in.Seed, engine.CauseOptions{Plan: plan, Moments: in.Moments, Futures: in.Futures, Workers: s.workers, Run: runner.Run,
		Progress: func(done, total int) {
			c.prog.report(float64(done), float64(total), fmt.Sprintf("%d/%d alternate futures", done, total))
		}})
	if ctx.Err() != nil {
		return nil, none, fmt.Errorf("seedfall_cause canceled: %w", ctx.Err())
	}
	if err != nil {
		return nil, none, err
	}
	out := CauseOutput{Seed: res.Seed, Failure: res.Failure, Moments: res.Moments, Bars: nonNil(cli.CauseBars(res)),
		BiggestJump: res.Jump, Futures: res.Futures, WallSeconds: time.Duration(res.WallNS).Seconds()}
	return textResult(causeText(out), out), out, nil
}

// textResult is a tool result whose content is the short text rendering, then the
// structured result as JSON for clients that show only text content.
func textResult(text string, out any) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	if data, err := json.Marshal(out); err == nil {
		res.Content = append(res.Content, &mcp.TextContent{Text: string(data)})
	}
	return res
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func runText(o RunOutput, tg target) string {
	var b strings.Builder
	bad := o.Failed + o.Watchdog + o.Errors
	if bad == 0 {
		fmt.Fprintf(&b, "ok %s passed (%d hit the time horizon) in %.1fs\n", plural(o.Passed, "seed", "seeds"), o.Horizon, o.WallSeconds)
	} else {
		live := ""
		if o.Liveness > 0 {
			live = fmt.Sprintf(", %d never finished (liveness)", o.Liveness)
		}
		fmt.Fprintf(&b, "FAIL %d of %s failed (%s)%s; %d passed\n", bad, plural(o.Seeds, "seed", "seeds"),
			plural(len(o.Signatures), "distinct failure", "distinct failures"), live, o.Passed)
	}
	for _, g := range o.Signatures {
		var ss []string
		for _, x := range g.Seeds[:min(len(g.Seeds), 8)] {
			ss = append(ss, fmt.Sprint(x))
		}
		if g.SeedCount > len(ss) {
			ss = append(ss, "…")
		}
		fmt.Fprintf(&b, "\n%s on %s (%s): %s\n", g.Signature, plural(g.SeedCount, "seed", "seeds"), strings.Join(ss, ", "), g.Reason)
		fmt.Fprintf(&b, "  faults before the failure on seed %d (%d):\n", g.Seeds[0], len(g.FaultsBeforeFailure))
		for _, l := range g.FaultsBeforeFailure {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		next := tg
		if next.test == "" {
			next.config = o.Config
		}
		fmt.Fprintf(&b, "  next: seedfall_shrink {%s, \"seed\": %d}\n", next.args(), g.Seeds[0])
	}
	for _, pf := range o.PropertyFailures {
		fmt.Fprintf(&b, "FAIL property: %s\n", pf)
	}
	if o.Coverage != nil {
		for _, l := range cli.CoverageLines(&cli.CoverageSummary{Packages: o.Coverage.Packages, Unreached: o.Coverage.Unreached}) {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	if o.Checked {
		if o.Diverged == 0 {
			b.WriteString("every seed ran twice, traces identical\n")
		} else {
			fmt.Fprintf(&b, "NONDETERMINISM: %s whose two runs differ\n", plural(o.Diverged, "seed", "seeds"))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func replayText(o ReplayOutput, r *engine.Result) string {
	var b strings.Builder
	if o.Failure != nil {
		fmt.Fprintf(&b, "%s seed %d at t=%s: %s\n", strings.ToUpper(string(o.Verdict)), o.Seed, time.Duration(o.Failure.AtNS).String(), o.Failure.Reason)
		fb := cli.FaultLines(cli.FaultsBefore(r))
		fmt.Fprintf(&b, "faults before the failure (%d):\n", len(fb))
		for _, l := range fb {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	} else {
		fmt.Fprintf(&b, "%s seed %d at t=%s, %s applied\n", o.Verdict, o.Seed, time.Duration(o.EndNS).String(), plural(len(o.Faults), "fault", "faults"))
	}
	fmt.Fprintf(&b, "trace %s (%d lines); the last %d are in trace_tail", o.TraceHash, o.TraceLines, len(o.TraceTail))
	return b.String()
}

func shrinkText(o cli.ShrinkReport, tg target, res *engine.ShrinkResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "faults before the failure (%d):\n", o.MinimalFaults)
	for _, l := range o.Failure.FaultsBeforeFailure {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "FAIL %s\n", o.Failure.Reason)
	note := ""
	if o.Exhausted {
		note = " (budget exhausted: the plan is smaller, maybe not minimal)"
	}
	fmt.Fprintf(&b, "shrunk %d -> %d faults in %d runs, %.1fs%s\n", o.FaultsBefore, o.MinimalFaults, o.Runs, time.Duration(res.WallNS).Seconds(), note)
	if o.ReplaysExact {
		fmt.Fprintf(&b, "minimal plan saved to %s; it replays exactly: %s\n", o.PlanFile, o.Replay)
	} else {
		fmt.Fprintf(&b, "WARNING: the minimal plan saved to %s did not replay to an identical trace\n", o.PlanFile)
	}
	fmt.Fprintf(&b, "next: seedfall_cause {%s, \"seed\": %d, \"faults\": %q}", tg.args(), o.Seed, o.PlanFile)
	return b.String()
}

func causeText(o CauseOutput) string {
	var b strings.Builder
	if o.Failure != nil {
		fmt.Fprintf(&b, "seed %d: FAIL at %s: %s\n", o.Seed, time.Duration(o.Failure.AtNS).String(), o.Failure.Reason)
	}
	fmt.Fprintf(&b, "P(fail) over %d alternate futures:\n", o.Futures)
	for _, l := range o.Bars {
		fmt.Fprintf(&b, "%s\n", l)
	}
	if o.BiggestJump != nil {
		fmt.Fprintf(&b, "biggest jump: %s", o.BiggestJump.Summary)
	} else {
		b.WriteString("no jump: P(fail) never rises (the failure may not depend on the faults)")
	}
	return b.String()
}
