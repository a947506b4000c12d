package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// Exit codes.
const (
	exitPass  = 0 // no failure found
	exitFail  = 1 // a failure was found
	exitUsage = 2 // usage or tool error
)

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "sweep seeds in parallel: seedfall run -c seedfall.json -seeds 1-1000 [-check]", cmdRun},
		{"test", "run a package's simulation tests (package simtest): seedfall test ./pkg -run '^TestX$' [-seeds 1-300] [-check]", cmdTest},
		{"explore", "feedback-directed search over fault plans: seedfall explore -c seedfall.json -runs 400", cmdExplore},
		{"replay", "replay one seed exactly and print its trace: seedfall replay -seed 9 [-faults plan.json]", cmdReplay},
		{"shrink", "cut a failing seed's faults to the few that matter: seedfall shrink -seed 9", cmdShrink},
		{"cause", "P(fail) over time from alternate futures: seedfall cause -seed 9", cmdCause},
		{"crashes", "every crash point and crash state of one seed, checked: seedfall crashes -seed 1", cmdCrashes},
		{"mutate", "durability mutation testing: seedfall mutate -seeds 1-200", cmdMutate},
		{"report", "render results as HTML, Markdown or JUnit: seedfall report -in results.jsonl", cmdReport},
		{"ci", "the GitHub Action's entrypoint (also runs locally)", cmdCI},
		{"merge", "join sharded result files: seedfall merge -o all.jsonl a.jsonl b.jsonl", cmdMerge},
		{"cache", "show the cache's size, or shrink it: seedfall cache prune [-max-size 1GB]", cmdCache},
		{"version", "print the version that results and plans record", cmdVersion},
		{"mcp", "stdio MCP server exposing run, replay, shrink and cause to coding agents", cmdMCP},
		{"worker", "internal: run seeds read from stdin (used by run)", cmdWorker},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: seedfall <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		if c.name == "worker" {
			continue
		}
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 pass, 1 a failure was found, 2 usage or tool error.")
	fmt.Fprintln(w, "Run 'seedfall <command> -h' for a command's flags.")
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitPass
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "seedfall: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// newFlags makes a FlagSet whose errors go to stderr and never exit the process.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("seedfall "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses and reports whether the caller should stop with code.
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass, true
		}
		return exitUsage, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage, true
	}
	return 0, false
}

// loadAndPrepare reads the config and builds the nodes.
func loadAndPrepare(ctx context.Context, path string, stderr io.Writer, quiet bool) (*engine.Sim, int) {
	return loadAndPrepareFrom(ctx, path, "", stderr, quiet)
}

// upgradeFromFlag adds -upgrade-from to fs: every command that builds and runs the
// config takes it (replay, run, shrink, cause, crashes), as the Action's input does.
func upgradeFromFlag(fs *flag.FlagSet) *string {
	return fs.String("upgrade-from", "", "git `revision` to use as the old build of every node with an \"upgrade\" option (as the Action's input upgrade-from does)")
}

// upgradeExtra is what a replay command printed by a run with -upgrade-from rev needs.
func upgradeExtra(rev string) string {
	if rev == "" {
		return ""
	}
	return " -upgrade-from " + rev
}

// loadAndPrepareFrom is loadAndPrepare with upgradeFrom, when not empty, as the old
// build of every node with an "upgrade" option (flag -upgrade-from).
func loadAndPrepareFrom(ctx context.Context, path, upgradeFrom string, stderr io.Writer, quiet bool) (*engine.Sim, int) {
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall: %v\n", err)
		return nil, exitUsage
	}
	if upgradeFrom != "" {
		if _, err := engineapi.SetUpgradeFrom(cfg, upgradeFrom); err != nil {
			fmt.Fprintf(stderr, "seedfall: -upgrade-from: %v\n", err)
			return nil, exitUsage
		}
	}
	var progress func(string)
	if !quiet {
		progress = func(s string) { fmt.Fprintf(stderr, "%s\n", s) }
	}
	s, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{Progress: progress})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall: %v\n", err)
		return nil, exitUsage
	}
	if !quiet || timings() {
		ran, skipped := engineapi.BuildCounts()
		fmt.Fprintf(stderr, "built in %.2fs (%d go build, %d unchanged), compiled in %.2fs (images %.2fs, wazero %.2fs, source locations %.2fs)\n",
			s.BuildTime.Seconds(), ran, skipped, s.CompileTime.Seconds(), s.ImageTime.Seconds(), s.WazeroTime.Seconds(), s.LocTime.Seconds())
	}
	return s, 0
}

// timings reports whether SEEDFALL_TIMINGS=1 asks for every phase's time on stderr.
func timings() bool { return os.Getenv("SEEDFALL_TIMINGS") == "1" }

// printFailure prints one failing result: seed, faults before the failure, reason.
// extra is appended to its replay command (" -faults plan.json" when the run replayed a
// plan, so that the command printed reproduces it).
func printFailure(w io.Writer, r *engine.Result, cfgPath, extra string) {
	at := ""
	if r.Failure != nil {
		at = " at t=" + time.Duration(r.Failure.AtNS).String()
	}
	reason := ""
	if r.Failure != nil {
		reason = r.Failure.Reason
	}
	fmt.Fprintf(w, "FAIL seed %d%s %s\n", r.Seed, at, reason)
	fb := cli.FaultsBefore(r)
	fmt.Fprintf(w, "  faults before the failure (%d):\n", len(fb))
	for _, f := range fb {
		fmt.Fprintf(w, "    %s\n", f.String())
	}
	if r.Failure != nil && r.Failure.Visualization != "" {
		fmt.Fprintf(w, "  linearizability visualization: %s\n", r.Failure.Visualization)
	}
	if d := r.Divergence; d != nil {
		fmt.Fprintf(w, "  runs diverge at trace line %d:\n", d.Line)
		for _, l := range d.Before {
			fmt.Fprintf(w, "      %s\n", l)
		}
		fmt.Fprintf(w, "    1st %s\n    2nd %s\n", d.First, d.Second)
	}
	fmt.Fprintf(w, "  replay: %s\n", cli.ReplayCommand(cfgPath, r.Seed, extra))
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
