// Package mcpserver serves seedfall to coding agents over the Model Context Protocol:
// four tools that sweep seeds (seedfall_run), replay one seed exactly (seedfall_replay),
// shrink a failure to the faults that matter (seedfall_shrink) and find the moment it
// became inevitable (seedfall_cause). `seedfall mcp` runs it on stdio.
//
// Every tool takes a config path, resolved against the server's working directory and
// refused if it leaves it. Results are structured (each tool has an output schema) and
// come with a short text rendering. A found bug is a result; a tool error means the
// tool could not do its job (bad arguments, a config that does not build). Long calls
// report progress when the client sends a progress token and stop promptly when the
// client cancels them.
//
// It drives the engine through its public API and internal/cli, as the command does;
// it may not depend on the command, and it never writes to stdout other than the
// protocol.
package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedfall/seedfall/engine"
)

// Options configure a Server.
type Options struct {
	// Dir is the working directory: tool paths are resolved against it and may not leave
	// it. Default: the process's working directory.
	Dir string
	// Workers is the number of parallel runs per call (default: the number of CPUs).
	Workers int
	// Executable is the seedfall binary that every tool starts as worker processes
	// (`seedfall worker`): sweeps, and the runs of replay, shrink and cause, so that a
	// guest spinning without host calls never leaks into the server. Default: this
	// process's executable, which is right when the server runs as `seedfall mcp`.
	Executable string
	// Version is reported to clients (default: the module version of the build).
	Version string
}

// Server is seedfall's MCP server. Its tools share a cache of prepared configs.
type Server struct {
	root    string
	workers int
	exe     string
	sims    *simCache
	mcp     *mcp.Server
}

// Instructions tell a connected agent how the tools fit together.
const Instructions = `seedfall runs Go services deterministically under a simulated world that crashes them, tears their writes, loses unsynced data and partitions their network. A seed fixes everything, so a failing seed replays exactly.

Workflow:
1. seedfall_run {config, seeds: "1-500"} sweeps seeds and groups failures by signature.
2. seedfall_shrink {config, seed} on a failing signature's first seed cuts its faults to the few that matter and saves a replayable plan file.
3. seedfall_cause {config, seed, faults: plan_file} shows when P(fail) jumps: the fault that made the failure inevitable.
4. seedfall_replay {config, seed, faults} returns the trace tail to read around the failure.
5. Fix the code, then seedfall_run the same seeds again (check: true to also verify determinism). The same seeds replay the same schedules, so a sweep that passes now is evidence the fix works.

Paths are relative to the server's working directory and may not leave it.`

// New makes a Server.
func New(opt Options) (*Server, error) {
	dir := opt.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("working directory %q: %w", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("working directory %q: %w", dir, err)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	version := opt.Version
	if version == "" {
		version = engine.Version()
	}
	s := &Server{root: root, workers: workers, exe: opt.Executable, sims: newSimCache()}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "seedfall", Title: "seedfall", Version: version},
		&mcp.ServerOptions{Instructions: Instructions, Capabilities: &mcp.ServerCapabilities{}})
	s.mcp.AddReceivingMiddleware(checkArgsMiddleware)
	s.addTools()
	return s, nil
}

// Dir is the working directory tool paths are resolved against.
func (s *Server) Dir() string { return s.root }

// MCP returns the underlying MCP server, to serve it on another transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client on t until the client disconnects or ctx is done, then releases
// the cached configs.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	defer s.Close()
	return s.mcp.Run(ctx, noResponseToCancelled{t})
}

// Close releases the cached configs.
func (s *Server) Close() error {
	s.sims.close()
	return nil
}

func boolPtr(b bool) *bool { return &b }

func (s *Server) addTools() {
	closed := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)}
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "seedfall_run",
		Title: "Sweep seeds",
		Description: "Run many seeds of a seedfall config in parallel, each a deterministic run under its own schedule of crashes, torn writes and partitions. " +
			"Returns the counts, the distinct failures grouped by signature (with the seeds that hit each, the first seed's failure reason and the faults before it), and the sweep's properties. " +
			"Seeds are deterministic: rerun the same seeds after a fix to show it works.",
		Annotations: closed,
	}, s.run)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "seedfall_replay",
		Title: "Replay one seed",
		Description: "Replay one seed exactly, optionally with a fault plan file (from seedfall_shrink), and return its verdict, failure, applied faults, trace hash and the last lines of its trace. " +
			"The same seed and plan always give the same trace.",
		InputSchema: inputSchema[ReplayInput]("seedfall_replay"),
		Annotations: closed,
	}, s.replay)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "seedfall_shrink",
		Title: "Shrink a failure",
		Description: "Cut a failing seed's faults to a minimal set that still produces the same failure (same signature), simplify what remains, and save it as a new plan file next to the config, named CONFIG.seed-N.faults.json (or CONFIG.seed-N.2.faults.json, … when that exists: it never overwrites a file). " +
			"Returns minimal_faults, the failure's reason, the faults before the failure as text lines, the plan file and the command that replays it.",
		InputSchema: inputSchema[ShrinkInput]("seedfall_shrink"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)}, // creates a new file per call, overwrites none
	}, s.shrink)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "seedfall_cause",
		Title: "Find when a failure became inevitable",
		Description: "Replay a failing seed exactly up to a series of moments and, from each, re-randomize the whole future many times: the share of futures that fail the same way is P(fail) from that moment. " +
			"Bystander faults leave it flat; the real cause makes it jump. Returns the curve, one bar line per moment, and the biggest jump with the faults just before it. " +
			"Pass the plan file from seedfall_shrink as faults for a clean curve. Costs moments x futures runs.",
		InputSchema: inputSchema[CauseInput]("seedfall_cause"),
		Annotations: closed,
	}, s.cause)
}
