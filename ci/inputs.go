// Package ci is seedfall's GitHub Actions integration: the `seedfall ci` entrypoint of
// the container action. It reads the action's inputs and the triggering event, sweeps
// seeds through an Engine, groups failures by signature, compares them with a baseline
// to label each new, known (still failing) or fixed, shrinks the new ones within a time
// budget, renders the report, and publishes it: a sticky PR comment, a check run with
// file:line annotations (a commit status without checks: write), the job summary,
// workflow-command annotations, step outputs, and the publish artifact that publish
// mode (a workflow_run workflow, for fork pull requests) posts after validating it. On the default branch and on scheduled
// runs it writes the baseline back with compare-and-swap, so concurrent runs lose
// nothing.
//
// Everything GitHub-facing goes through Env (event file, output files, API URL), so the
// whole flow runs offline against files and an httptest server. It may not run a
// simulation itself: Engine is its only way to sweeps, shrinks and mutants (the
// seedfall command implements it over the engine), and it uses the engine's types only
// as data.
//
// Report is `seedfall report`: it renders saved results into the same report files with
// the same grouping, labels and renderers, without an Engine, an event or GitHub.
//
// The package exports what the seedfall command and its tests use, nothing more
// (api_test.go bounds it).
package ci

import (
	"errors"
	"flag"
	"fmt"
	"github.com/seedfall/seedfall/internal/seedspec"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"
)

// Modes of a run.
const (
	modeAuto = "auto" // pr for pull_request events, push otherwise
	modePush = "push" // sweep the seeds; may write the baseline (default branch, schedule)
	modePR   = "pr"   // sweep the seeds; never writes the baseline
	modeDeep = "deep" // sweep deepFactor times as many seeds; may write the baseline
)

// Fail-on policies: which failures make the step fail (exit 1).
const (
	failOnNew   = "new"   // only signatures not in the baseline
	failOnAny   = "any"   // any failing signature, new or known, and any run error
	failOnNever = "never" // report only
)

// deepFactor is how many times more seeds a deep run sweeps: the given seeds, then the
// seeds after the highest one, until the count is deepFactor times the given count.
const deepFactor = 10

// maxSeeds caps one sweep, so a typo such as "1-10000000000" is an error, not an
// out-of-memory kill.
const maxSeeds = 10_000_000

// DefaultOut is the directory the report files are written to.
const DefaultOut = "seedfall-report"

// Inputs are the action's inputs, one-to-one with `seedfall ci` flags. ParseInputs fills
// and validates them; the zero value is not valid.
type Inputs struct {
	Config       string        // config file (input config, default "seedfall.json")
	Seeds        string        // seed list as given, e.g. "1-500,900" (input seeds, default "1-500")
	Mode         string        // auto, push, pr or deep (input mode, default "auto")
	ShrinkBudget time.Duration // total time to shrink new signatures (input shrink-budget, default 2m)
	Baseline     string        // "" (none), a file path, or "branch:NAME[:PATH]" (input baseline)
	Token        string        // GitHub token (input token; GITHUB_TOKEN when unset)
	Comment      bool          // upsert the sticky PR comment (input comment, default true)
	FailOn       string        // new, any or never (input fail-on, default "new")
	Shard        shard         // share of the seeds to sweep (input shard, default "1/1")
	Out          string        // directory for report.html, report.md, junit.xml, results.jsonl (flag -out, default DefaultOut)
	// Mutation says when durability mutation testing runs (input mutation): "off"
	// (default), "deep" (scheduled, manual and deep runs) or "always".
	Mutation string
	// MutationSeeds are the seeds each mutant runs (input mutation-seeds, default "1-50").
	MutationSeeds string
	// CrashSeeds are the seeds whose crash states every run searches (`seedfall crashes
	// -own-faults=false`, input crash-seeds, default "1"; "": none).
	CrashSeeds string
	// CrashBudget is how many distinct crash states a search runs per seed on pushes and
	// pull requests (input crash-budget, default 200; 0: all). Deep, scheduled and
	// manual runs search every state.
	CrashBudget int
	// Publish is the publish artifact (a directory holding publish.json, or the file)
	// that publish mode posts on a workflow_run event (input publish); "" sweeps.
	Publish string
	// UpgradeFrom is the old build of every node with an "upgrade" option (input
	// upgrade-from): "" keeps the config's own, "base" the pull request's base
	// commit (for a push, the previous commit), anything else a git revision of the
	// repository.
	UpgradeFrom string
	// Test and Run name a simulation test (package simtest: its package, and a regexp
	// matching its name) to sweep instead of Config (inputs test and run). The
	// entrypoint derives the test's config (as `seedfall test` does) and sets Config to
	// it, Home to the test's package directory and Name to the test's command.
	Test, Run string
	// Home is the directory that stands for the config's place (the repository, its
	// module and Go release are found from it); "": the config's directory.
	Home string
	// Name is what titles and logs call the sweep; "": Config.
	Name string
	// Tests are the simulation tests of a sweep of several (input test matching more
	// than one, with run empty or matching several): each sweeps the seeds (shard splits
	// the test and seed pairs), in one report, comment and baseline, where signatures
	// are keyed by test (TestTornTail.sig-…). Config is then unused.
	Tests []TestTarget
}

// TestTarget is one simulation test of a sweep of several: its name, its derived
// config, and the command that names it (`seedfall test ./simtest -run '^TestX$'`).
type TestTarget struct {
	Name, Config, Command string
}

// name is what titles and logs call the sweep.
func (in Inputs) name() string {
	if in.Name != "" {
		return in.Name
	}
	return in.Config
}

// home is the directory of the sweep's sources: the config's, or the test's package.
func (in Inputs) home() string {
	if in.Home != "" {
		return in.Home
	}
	return filepath.Dir(in.Config)
}

// anchor is a path in the directory of the sweep's sources, for what finds the
// module, the repository or the Go release from a config's path (GoToolchain).
func (in Inputs) anchor() string {
	if in.Home != "" {
		return filepath.Join(in.Home, "seedfall.json")
	}
	return in.Config
}

// inputNames lists the action inputs, in action.yml order.
var inputNames = []string{"config", "test", "run", "seeds", "mode", "shrink-budget", "baseline", "token", "comment", "fail-on", "shard", "mutation", "mutation-seeds", "crash-seeds", "crash-budget", "upgrade-from", "publish"}

// upgradeBase is the input upgrade-from's value for the event's base: the pull
// request's base commit, or the commit before a push.
const upgradeBase = "base"

// When durability mutation testing runs (input mutation).
const (
	mutationOff    = "off"
	mutationDeep   = "deep"   // scheduled and manual runs, and mode deep
	mutationAlways = "always" // every run
)

// shard is a deterministic share of a seed list: shard Index of Count takes the seeds
// whose position p (0-based, in the sorted list) satisfies p % Count == Index-1.
type shard struct {
	Index, Count int // 1 <= Index <= Count
}

// String renders the shard as "i/n".
func (s shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Apply returns the shard's share of seeds (which must be sorted).
func (s shard) Apply(seeds []uint64) []uint64 {
	if s.Count <= 1 {
		return seeds
	}
	return seedspec.Shard(seeds, s.Index, s.Count)
}

// parseShard reads "i/n" (1 <= i <= n). The empty string is the whole sweep, 1/1.
func parseShard(s string) (shard, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return shard{1, 1}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil {
		return shard{}, fmt.Errorf("input shard: %q is not of the form i/n (e.g. \"2/4\")", s)
	}
	if n < 1 || i < 1 || i > n {
		return shard{}, fmt.Errorf("input shard: %q: want 1 <= i <= n", s)
	}
	return shard{i, n}, nil
}

// parseSeeds reads a seed list such as "1-500,900" (seedspec.Parse), as the input
// seeds: errors name the input, and at most maxSeeds seeds are allowed.
func parseSeeds(s string) ([]uint64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("input seeds: empty (want e.g. \"1-500\" or \"1-500,900\")")
	}
	seeds, err := seedspec.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("input %w", err)
	}
	if len(seeds) > maxSeeds {
		return nil, fmt.Errorf("input seeds: %q asks for more than %d seeds", s, maxSeeds)
	}
	return seeds, nil
}

// deepen extends sorted seeds to deepFactor times as many, continuing after the highest.
func deepen(seeds []uint64) []uint64 {
	if len(seeds) == 0 {
		return seeds
	}
	want := len(seeds) * deepFactor
	out := append([]uint64(nil), seeds...)
	for next := seeds[len(seeds)-1] + 1; len(out) < want && next != 0; next++ {
		out = append(out, next)
	}
	return out
}

// seedsToSweep returns the seeds this run sweeps: the parsed seed list, deepened in deep
// mode, then the shard's share.
func (in Inputs) seedsToSweep() ([]uint64, error) {
	seeds, err := parseSeeds(in.Seeds)
	if err != nil {
		return nil, err
	}
	if in.Mode == modeDeep {
		seeds = deepen(seeds)
	}
	return in.Shard.Apply(seeds), nil
}

// testSeeds is the sweep of several tests: for each test, in order, its share of the
// seeds, the shard taking every n-th of the (test, seed) pairs so that each job of a
// matrix gets a share of every test.
func (in Inputs) testSeeds() ([][]uint64, error) {
	seeds, err := parseSeeds(in.Seeds)
	if err != nil {
		return nil, err
	}
	if in.Mode == modeDeep {
		seeds = deepen(seeds)
	}
	n := len(in.Tests) * len(seeds)
	idx := make([]uint64, n)
	for i := range idx {
		idx[i] = uint64(i)
	}
	out := make([][]uint64, len(in.Tests))
	for _, k := range in.Shard.Apply(idx) {
		t := int(k) / len(seeds)
		out[t] = append(out[t], seeds[int(k)%len(seeds)])
	}
	return out, nil
}

// ParseInputs reads the inputs from command-line flags and, for those not given as
// flags, from the action's INPUT_* variables (read through getenv), then defaults. Errors
// name the input. getenv may be nil (no environment).
func ParseInputs(args []string, getenv func(string) string, stderr io.Writer) (Inputs, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	action := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(io.Discard))
	fs := flag.NewFlagSet("seedfall ci", flag.ContinueOnError)
	if stderr != nil {
		fs.SetOutput(stderr)
	}
	defaults := map[string]string{
		"config": "seedfall.json", "test": "", "run": "", "seeds": "1-500", "mode": modeAuto, "shrink-budget": "2m",
		"baseline": "", "token": "", "comment": "true", "fail-on": failOnNew, "shard": "1/1", "out": DefaultOut,
		"mutation": mutationOff, "mutation-seeds": "1-50", "crash-seeds": "1", "crash-budget": "200", "upgrade-from": "", "publish": "",
	}
	usage := map[string]string{
		"config":         "seedfall config file",
		"test":           "a simulation test's package (package simtest) to sweep instead of config, e.g. ./simtest or ./...",
		"run":            "with test: a regexp matching the one simulation test to sweep, e.g. ^TestTornTail$",
		"seeds":          "seeds to sweep, e.g. 1-500,900",
		"mode":           "auto, push, pr or deep (deep sweeps 10x the seeds)",
		"shrink-budget":  "total time to shrink new failure signatures, e.g. 2m",
		"baseline":       "baseline location: a file path, or branch:NAME[:PATH] for a data branch; empty for none",
		"token":          "GitHub token (default $GITHUB_TOKEN)",
		"comment":        "upsert a sticky comment on pull requests",
		"fail-on":        "new, any or never: which failures fail the step",
		"shard":          "i/n: sweep a deterministic share of the seeds",
		"out":            "directory for report.html, report.md, junit.xml and results.jsonl",
		"mutation":       "off, deep or always: when durability mutation testing runs (deep: scheduled, manual and deep runs)",
		"mutation-seeds": "seeds each mutant runs, e.g. 1-50",
		"crash-seeds":    "seeds whose crash states every run searches (seedfall crashes -own-faults=false), e.g. 1-3; empty for none",
		"crash-budget":   "distinct crash states each search runs on pushes and pull requests, every call site's first states first (0: all; deep, scheduled and manual runs search all)",
		"upgrade-from":   "old build of every node with an \"upgrade\" option: base (the PR's base commit; for a push, the previous one) or a git revision",
		"publish":        "publish mode: post the sweep artifact in `dir` (or file) on a workflow_run event, without sweeping",
	}
	vals := map[string]*string{}
	for _, name := range append(append([]string(nil), inputNames...), "out") {
		vals[name] = fs.String(name, defaults[name], usage[name])
	}
	fs.StringVar(vals["config"], "c", defaults["config"], "shorthand for -config")
	if err := fs.Parse(args); err != nil {
		return Inputs{}, err
	}
	if fs.NArg() > 0 {
		return Inputs{}, fmt.Errorf("seedfall ci: unexpected argument %q (every input is a flag, e.g. -seeds 1-500)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["c"] {
		set["config"] = true
	}
	get := func(name string) string {
		if set[name] {
			return strings.TrimSpace(*vals[name])
		}
		if v := action.GetInput(name); v != "" {
			return v
		}
		if name == "token" {
			return strings.TrimSpace(getenv("GITHUB_TOKEN"))
		}
		return defaults[name]
	}

	in := Inputs{
		Config:   get("config"),
		Test:     get("test"),
		Run:      get("run"),
		Seeds:    get("seeds"),
		Mode:     get("mode"),
		Baseline: get("baseline"),
		Token:    get("token"),
		FailOn:   get("fail-on"),
		Out:      get("out"),

		Mutation:      get("mutation"),
		MutationSeeds: get("mutation-seeds"),
		CrashSeeds:    get("crash-seeds"),
		Publish:       get("publish"),
		UpgradeFrom:   get("upgrade-from"),
	}
	switch {
	case in.Test != "" && set["config"] || in.Test != "" && action.GetInput("config") != "" && action.GetInput("config") != defaults["config"]:
		return Inputs{}, errors.New("inputs config and test: give one (a config file, or a simulation test's package)")
	case in.Test == "" && in.Run != "":
		return Inputs{}, errors.New("input run: names a simulation test of the package given as input test, which is empty")
	case in.Test != "":
		in.Config = ""
	case in.Config == "":
		return Inputs{}, errors.New("input config: empty (want the path of a seedfall config, e.g. seedfall.json)")
	}
	if _, err := parseSeeds(in.Seeds); err != nil {
		return Inputs{}, err
	}
	switch in.Mode {
	case modeAuto, modePush, modePR, modeDeep:
	default:
		return Inputs{}, fmt.Errorf("input mode: %q is not a mode (want auto, push, pr or deep)", in.Mode)
	}
	d, err := time.ParseDuration(get("shrink-budget"))
	if err != nil || d < 0 {
		return Inputs{}, fmt.Errorf("input shrink-budget: %q is not a duration such as \"2m\" or \"0s\"", get("shrink-budget"))
	}
	in.ShrinkBudget = d
	if _, err := parseBaselineLocation(in.Baseline); err != nil {
		return Inputs{}, err
	}
	c, err := strconv.ParseBool(get("comment"))
	if err != nil {
		return Inputs{}, fmt.Errorf("input comment: %q is not true or false", get("comment"))
	}
	in.Comment = c
	switch in.FailOn {
	case failOnNew, failOnAny, failOnNever:
	default:
		return Inputs{}, fmt.Errorf("input fail-on: %q is not a policy (want new, any or never)", in.FailOn)
	}
	if in.Shard, err = parseShard(get("shard")); err != nil {
		return Inputs{}, err
	}
	switch in.Mutation {
	case mutationOff, mutationDeep, mutationAlways:
	default:
		return Inputs{}, fmt.Errorf("input mutation: %q is not a choice (want off, deep or always)", in.Mutation)
	}
	if _, err := parseSeeds(in.MutationSeeds); err != nil {
		return Inputs{}, fmt.Errorf("input mutation-seeds: %s", strings.TrimPrefix(err.Error(), "input seeds: "))
	}
	if in.CrashSeeds != "" {
		if _, err := parseSeeds(in.CrashSeeds); err != nil {
			return Inputs{}, fmt.Errorf("input crash-seeds: %s", strings.TrimPrefix(err.Error(), "input seeds: "))
		}
	}
	if in.CrashBudget, err = strconv.Atoi(get("crash-budget")); err != nil || in.CrashBudget < 0 {
		return Inputs{}, fmt.Errorf("input crash-budget: %q is not a number of states such as 200 (0: every state)", get("crash-budget"))
	}
	if in.UpgradeFrom != "" && in.UpgradeFrom != upgradeBase {
		if err := checkRevisionName(in.UpgradeFrom); err != nil {
			return Inputs{}, fmt.Errorf("input upgrade-from: %w", err)
		}
	}
	if in.Out == "" {
		in.Out = DefaultOut
	}
	return in, nil
}
