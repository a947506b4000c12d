package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// cmdCrashes is `seedfall crashes`: every crash point of one seed's run, and at each the
// distinct crash states the disk model allows, run and checked (docs/crashes.md).
func cmdCrashes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("crashes", stderr)
	cfgPath := fs.String("c", "seedfall.json", "config `file`")
	tf := addTestFlags(fs)
	seed := fs.Uint64("seed", 1, "the seed whose run is crashed")
	node := fs.String("node", "", "the node to crash (default: the config's first node)")
	ops := fs.String("ops", "", "only these disk ops of the node, `A-B` (1-based, inclusive; A- or -B for open ends)")
	maxStates := fs.Int("max-states", engine.DefaultMaxStates, "distinct crash states per disk op, at most")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel worker processes")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	out := fs.String("out", "", "`dir` for the plans of failing states (default: CONFIG.seed-N.crashes next to the config)")
	restart := fs.Duration("restart", 0, "restart delay after each crash (default: the config's faults.restart_delay)")
	recheck := fs.Duration("recheck", -1, "a second power loss of the node (every pending op lost) this long after the crash's restart, to check its recovery a second time (0: none; default, -1: halfway to the end of the seed's run)")
	shrink := fs.Duration("shrink", 0, "shrink each site's first failing plan within this budget (0: no shrink)")
	ownFaults := fs.Bool("own-faults", true, "run the seed with its own random faults and crash on top of them; false: with none, so that a seed that fails on its own faults is still probed to the end of its workload (each plan is then the crash alone)")
	perOp := fs.Bool("per-op", false, "dedupe each op's states alone: also run a state whose durable image an earlier op produced with nothing sent on the network in between (default: such a state is equivalent and not run)")
	faults := fs.String("faults", "", "probe the run of this fault plan `file` (saved by replay -save, shrink or by hand) instead of the seed's own faults; each state's plan is the file's faults before the op plus the crash")
	budget := fs.Int("budget", 0, "run at most `N` distinct states, every call site's first states before any site's later ones (0: all)")
	upgradeFrom := upgradeFromFlag(fs)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if *budget < 0 {
		fmt.Fprintln(stderr, "seedfall crashes: -budget must not be negative (0: no budget)")
		return exitUsage
	}
	if code := tf.resolve(ctx, "crashes", cfgPath, stderr); code != 0 {
		return code
	}
	var opt engineapi.CrashStatesOptions
	if *faults != "" {
		if !*ownFaults {
			fmt.Fprintln(stderr, "seedfall crashes: -faults and -own-faults=false exclude each other (the plan replaces the seed's own faults)")
			return exitUsage
		}
		plan, err := cli.LoadPlan(*faults)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall crashes: -faults: %v\n", err)
			return exitUsage
		}
		opt.Plan = plan
	}
	opt.Node = *node
	opt.MaxStates = *maxStates
	opt.NoOwnFaults = !*ownFaults
	opt.PerOp = *perOp
	if *maxStates <= 0 {
		fmt.Fprintln(stderr, "seedfall crashes: -max-states must be at least 1")
		return exitUsage
	}
	if *ops != "" {
		a, b, err := parseOpRange(*ops)
		if err != nil {
			fmt.Fprintf(stderr, "seedfall crashes: -ops %q: %v\n", *ops, err)
			return exitUsage
		}
		opt.FromOp, opt.ToOp = a, b
	}
	dir := *out
	if dir == "" {
		stem := strings.TrimSuffix(filepath.Base(*cfgPath), filepath.Ext(*cfgPath))
		dir = filepath.Join(filepath.Dir(*cfgPath), fmt.Sprintf("%s.seed-%d.crashes", stem, *seed))
		if ref, ok := cli.TestOf(*cfgPath); ok {
			dir = filepath.Join(ref.Dir, fmt.Sprintf("%s.seed-%d.crashes", ref.Name, *seed))
		}
	}
	sim, code := loadAndPrepareFrom(ctx, *cfgPath, *upgradeFrom, stderr, true)
	if sim == nil {
		return code
	}
	defer sim.Close()
	if opt.Plan != nil {
		for _, w := range engineapi.PlanWarnings(*faults, opt.Plan.Provenance, sim.Provenance(*cfgPath)) {
			fmt.Fprintf(stderr, "seedfall crashes: %s\n", w)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "seedfall crashes: -out: %v\n", err)
		return exitUsage
	}
	rep, err := cli.RunCrashes(ctx, cli.CrashesSpec{Sim: sim, Config: *cfgPath, ReplayFlags: upgradeExtra(*upgradeFrom), Seed: *seed, CrashStatesOptions: opt,
		RestartNS: int64(*restart), RecheckNS: int64(*recheck), Workers: *workers, OutDir: dir, Shrink: *shrink, Progress: stderr, Budget: *budget})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall crashes: %v\n", err)
		return exitUsage
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printCrashes(stdout, rep)
	}
	if rep.Failing > 0 {
		return exitFail
	}
	if rep.Errors > 0 || rep.Partial {
		return exitUsage
	}
	return exitPass
}

// parseOpRange reads "A-B", "A-", "-B" or "A".
func parseOpRange(s string) (int64, int64, error) {
	lo, hi, found := strings.Cut(s, "-")
	if !found {
		hi = lo
	}
	var a, b int64
	var err error
	if lo != "" {
		if a, err = strconv.ParseInt(lo, 10, 64); err != nil || a < 1 {
			return 0, 0, fmt.Errorf("want A-B with disk op numbers from 1")
		}
	}
	if hi != "" {
		if b, err = strconv.ParseInt(hi, 10, 64); err != nil || b < 1 {
			return 0, 0, fmt.Errorf("want A-B with disk op numbers from 1")
		}
	}
	if a > 0 && b > 0 && b < a {
		return 0, 0, fmt.Errorf("the range is empty (%d > %d)", a, b)
	}
	return a, b, nil
}

func printCrashes(w io.Writer, rep *cli.CrashesReport) {
	// Under a budget that left states out, fewer ran than are distinct: say how many.
	run := fmt.Sprintf("%d distinct states run", rep.States)
	if rep.OverBudget > 0 {
		run = fmt.Sprintf("%d distinct states, %d of them run (-budget)", rep.States, rep.States-rep.OverBudget)
	}
	fmt.Fprintf(w, "seed %d, node %s: %d disk ops, %d candidate states, %s (%d ops at the bound)\n",
		rep.Seed, rep.Node, rep.Ops, rep.Candidates, run, rep.BoundedOps)
	if rep.Equivalent > 0 {
		fmt.Fprintf(w, "%s not run: equivalent to a state of an earlier op (the same durable image, nothing sent on the network in between; -per-op runs them)\n",
			plural(rep.Equivalent, "state", "states"))
	}
	fmt.Fprintf(w, "bound: %s\n", rep.Bound)
	if rep.Budget > 0 {
		fmt.Fprintf(w, "budget: %d of the %d distinct states run, every call site's first states first (%d left out)\n", rep.Budget, rep.States, rep.OverBudget)
	}
	if rep.NoOwnFaults {
		fmt.Fprintln(w, "probe: the seed's workload without its own faults (-own-faults=false): each state's plan is the crash alone")
	}
	if rep.Baseline != engine.VerdictPass {
		if rep.NoOwnFaults {
			fmt.Fprintf(w, "note: the seed's run without any fault is %s\n", rep.Baseline)
		} else {
			fmt.Fprintf(w, "note: the seed's own run is %s without these crashes\n", rep.Baseline)
		}
	}
	fmt.Fprintln(w)
	vuln := 0
	for _, s := range rep.Sites {
		if s.Failing == 0 {
			continue
		}
		vuln++
		fmt.Fprintf(w, "VULNERABLE %s: %d of %d states fail (disk ops %s)\n", s.Site, s.Failing, s.States, opList(s.Ops))
		fmt.Fprintf(w, "  first: crash at disk op #%d of %s#%d, state %s: %s\n", s.Op, rep.Node, s.Incarnation, s.Kind, s.Reason)
		fmt.Fprintf(w, "  replay: %s\n", s.Replay)
		for _, f := range s.Failures[min(1, len(s.Failures)):] {
			fmt.Fprintf(w, "  also %d of them: crash at disk op #%d of %s#%d, state %s: %s\n", f.States, f.Op, rep.Node, f.Incarnation, f.Kind, f.Reason)
			fmt.Fprintf(w, "    replay: %s\n", f.Replay)
		}
		if s.Shrunk != "" {
			fmt.Fprintf(w, "  shrunk: %s\n", cli.ReplayCommand(rep.Config, rep.Seed, "-faults "+s.Shrunk))
		}
	}
	if rep.Retimed > 0 {
		fmt.Fprintf(w, "%s ran twice: the run ended before the recheck crash, or long after it, and the recheck was moved to halfway to that end\n", plural(rep.Retimed, "state", "states"))
	}
	if rep.Errors > 0 {
		fmt.Fprintf(w, "%s could not be run (errors or watchdog), not counted as vulnerabilities\n", plural(rep.Errors, "state", "states"))
	}
	if rep.Partial {
		fmt.Fprintf(w, "INTERRUPTED: %d of %d states ran; the rest are not counted\n", rep.Ran, rep.States-rep.OverBudget)
	}
	fmt.Fprintf(w, "%s at %s, %d of %d states failing, in %s\n", plural(vuln, "vulnerable site", "vulnerable sites"),
		plural(len(rep.Sites), "site", "sites"), rep.Failing, rep.States-rep.OverBudget, (time.Duration(rep.Secs * 1e9)).Round(time.Second))
}

// opList is "#5/1,#7/1,+3 more": disk op 5 of incarnation 1, and so on.
func opList(ops []string) string {
	var ss []string
	for i, o := range ops {
		if i == 8 {
			ss = append(ss, fmt.Sprintf("+%d more", len(ops)-8))
			break
		}
		ss = append(ss, "#"+o)
	}
	return strings.Join(ss, ",")
}
