package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/sethvargo/go-githubactions"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/report"
)

// Engine is what the ci flow needs from the simulation engine. The real implementation
// (cmd/seedfall) sweeps and shrinks in worker processes (internal/cli, internal/worker);
// tests use a fake that returns canned results.
type Engine interface {
	// Sweep runs every seed of the config and returns the results sorted by seed.
	Sweep(ctx context.Context, configPath string, seeds []uint64) ([]engine.Result, error)
	// Shrink reduces r's faults to a minimal list that still fails with r's signature,
	// within budget.
	Shrink(ctx context.Context, configPath string, r engine.Result, budget time.Duration) (Shrunk, error)
	// Mutate runs durability mutation testing (`seedfall mutate`) over seeds per mutant.
	Mutate(ctx context.Context, configPath string, seeds []uint64) (*Mutation, error)
	// UpgradeFrom makes commit (a full commit hash of the repository the config is in)
	// the old build of every node of the config with an "upgrade" option, for every
	// later Sweep, Shrink and Mutate of that config (input upgrade-from), and returns
	// those nodes in config order. A config without any is an error.
	UpgradeFrom(ctx context.Context, configPath, commit string) ([]UpgradeNode, error)
	// Crashes runs `seedfall crashes -own-faults=false` on seed, saving failing plans
	// under outDir, running at most budget distinct states (0: all; every call site's
	// first states first), and returns its distinct failures.
	Crashes(ctx context.Context, configPath string, seed uint64, outDir string, budget int) (*CrashSearch, error)
}

// Shrunk is what Engine.Shrink found.
type Shrunk struct {
	// Faults is the minimal fault list.
	Faults []engine.Fault
	// Note says how it went ("5 → 2 faults in 41 runs", "budget reached: …").
	Note string
	// Failure is the minimal list's own failure: the same signature as the seed's, but
	// often at another time and with other values (kvlog seed 2: the seed's own faults
	// lose k12=v12 at 3.63s, its minimal plan k0=v48 at 13.08s). nil when unknown.
	Failure *engine.Failure
}

// Exit codes of Run, as for every seedfall command.
const (
	ExitPass    = 0 // nothing the fail-on policy counts
	ExitFailure = 1 // failures the fail-on policy counts
	ExitError   = 2 // usage or tool error
)

// Size limits of the published Markdown.
const (
	commentLimit = 65_000  // bytes; GitHub takes 65,536 characters per comment
	summaryLimit = 1 << 20 // bytes; GitHub takes 1 MiB of job summary per step
	// maxAnnotations is how many new signatures get their own error annotation; the
	// rest are counted on one line.
	maxAnnotations = 10
)

// Output file names in Inputs.Out.
const (
	ReportHTML     = "report.html"
	ReportMarkdown = "report.md"
	JUnitXML       = "junit.xml"
	ResultsJSONL   = "results.jsonl"
	faultsDir      = "faults" // shrunk fault plans, one <signature>.json each
)

// group is one signature's failing results in this sweep.
type group struct {
	sig     string
	results []engine.Result // ascending seed; results[0] is the representative
	status  report.Status
	entry   *Entry // the baseline's entry, if any
	shrunk  []engine.Fault
	note    string
	// shrunkFailure is the minimal plan's own failure (Shrunk.Failure), when this run
	// shrank it.
	shrunkFailure *engine.Failure
	// found are the crash-state search's findings of this signature, in search order.
	found []searchHit
}

// rep is the group's representative run: its lowest failing seed, or for a signature
// only the crash-state search found, the search's first failing state.
func (g *group) rep() *engine.Result {
	if len(g.results) == 0 {
		return &g.found[0].Result
	}
	return &g.results[0]
}

// searchOnly says that no seed of the sweep failed with the group's signature: the
// crash-state search alone found it, and its replay needs the search's plan.
func (g *group) searchOnly() bool { return len(g.results) == 0 && len(g.found) > 0 }

func (g *group) seeds() []uint64 {
	s := make([]uint64, len(g.results))
	for i, r := range g.results {
		s[i] = r.Seed
	}
	return s
}

// Statuses of a group in the report.
const (
	statusNew   = report.StatusNew
	statusKnown = report.StatusKnown
	statusFixed = report.StatusFixed
)

// Run is `seedfall ci`: sweep, group by signature, label against the baseline, shrink
// new signatures, write the report files, publish, update the baseline where allowed,
// set outputs. It returns the exit code per in.FailOn; err is set (with ExitError) only
// when the tool could not do its job. Failures to publish (a read-only token, an API
// error) are notices or warnings, never errors.
func Run(ctx context.Context, in Inputs, env Env, eng Engine, stdout io.Writer) (int, error) {
	r := &runner{in: in, env: env, eng: eng, out: stdout}
	r.action = githubactions.New(githubactions.WithWriter(stdout), githubactions.WithGetenv(r.getenv))
	code, err := r.run(ctx)
	if err != nil {
		return ExitError, err
	}
	return code, nil
}

type runner struct {
	in     Inputs
	env    Env
	eng    Engine
	out    io.Writer
	action *githubactions.Action
	ev     event
	client *github.Client
	// upgrade is input upgrade-from resolved (nil without it).
	upgrade *upgrade
	// upgradeLine is the upgrade line a rendered sweep's results recorded (seedfall
	// report), used when there is no upgrade of this run's own.
	upgradeLine, upgradeRev string
}

// getenv answers go-githubactions' questions from Env, never from the process.
func (r *runner) getenv(k string) string {
	switch k {
	case "GITHUB_OUTPUT":
		return r.env.OutputPath
	case "GITHUB_STEP_SUMMARY":
		return r.env.SummaryPath
	}
	return ""
}

func (r *runner) printf(format string, args ...any) { fmt.Fprintf(r.out, format+"\n", args...) }

func (r *runner) run(ctx context.Context) (int, error) {
	ev, err := readEvent(r.env)
	if err != nil {
		return 0, err
	}
	r.ev = ev
	mode := r.in.Mode
	if mode == modeAuto || mode == "" {
		mode = modePush
		if ev.PR != 0 {
			mode = modePR
		}
	}
	r.in.Mode = mode
	if ev.Owner != "" {
		if r.client, err = newClient(r.env.apiURL(), r.in.Token, r.env.HTTPClient); err != nil {
			return 0, err
		}
	}

	if r.in.Publish != "" {
		return r.publishMode(ctx)
	}

	where := "local run"
	if ev.Name != "" {
		where = ev.Name
		if ev.PR != 0 {
			where += fmt.Sprintf(" #%d", ev.PR)
		}
		if ev.SHA != "" {
			where += " at " + shortSHA(ev.SHA)
		}
	}
	shard := ""
	if r.in.Shard.Count > 1 {
		shard = ", shard " + r.in.Shard.String()
	}
	if r.in.UpgradeFrom != "" {
		if r.upgrade, err = r.resolveUpgrade(ctx); err != nil {
			return 0, err
		}
	}
	var results []engine.Result
	if len(r.in.Tests) > 0 {
		if results, err = r.sweepTests(ctx, where, mode, shard); err != nil {
			return 0, err
		}
	} else {
		seeds, err := r.in.seedsToSweep()
		if err != nil {
			return 0, err
		}
		r.printf("seedfall ci: %s: sweeping %d seeds of %s (%s mode%s)", where, len(seeds), r.in.name(), mode, shard)
		if r.upgrade != nil {
			r.printf("seedfall ci: %s", r.upgrade.line(r.ev))
		}
		results, err = r.eng.Sweep(ctx, r.in.Config, seeds)
		if err != nil {
			return 0, fmt.Errorf("sweep %s: %w", r.in.Config, err)
		}
		results = append([]engine.Result(nil), results...)
		sort.SliceStable(results, func(i, j int) bool { return results[i].Seed < results[j].Seed })
	}
	if r.upgrade != nil {
		// results.jsonl records the line, so that seedfall report and merge keep it.
		setUpgradeLine(results, r.upgrade.line(r.ev), r.upgrade.commit)
	}

	searches := r.search(ctx, mode)
	groups := mergeSearch(groupFailures(results), searches)

	store, base, version, writable := r.loadBaseline(ctx)
	fixed, other := labelDraws(groups, base, results, searchedFully(searches))
	for _, sig := range slices.Sorted(maps.Keys(other)) {
		r.printf("seedfall ci: %s did not fail, but its seeds were %s: not marked fixed until a run like this one passes them or it fails again", sig, other[sig])
	}
	r.shrink(ctx, groups)
	mut := r.mutate(ctx, mode, results)

	data := r.buildData(results, groups, fixed, base, mut)
	data.Summary.Search = searchLine(searches)
	if err := writeFiles(r.in.Out, data, results, groups); err != nil {
		return 0, err
	}
	code := exitCode(r.in.FailOn, data.Summary)

	r.publish(ctx, data)

	if store != nil && writable && mode != modePR && ev.WritesBaseline() {
		next := nextBaseline(base, groups, fixed, results, ev.SHA, r.env.RunID)
		if mut != nil {
			next.Mutation = mut
		}
		if err := updateBaseline(ctx, store, version, next); err != nil {
			r.action.Warningf("seedfall: %v", err)
		} else {
			r.printf("seedfall ci: baseline %s updated (%d signatures)", store.Name(), len(next.Signatures))
		}
	}

	if r.env.OutputPath != "" {
		if err := r.setOutputs(data); err != nil {
			return 0, err
		}
	}
	s := data.Summary
	r.printf("seedfall ci: %d seeds: %d passed, %d failed; %d new, %d known, %d fixed: %s; report %s",
		s.Total, s.Passed, s.Failed, s.New, s.Known, s.Fixed, s.Conclusion, filepath.Join(r.in.Out, ReportHTML))
	return code, nil
}

// groupFailures groups the failing results by signature with the one grouping of
// seedfall's commands (cli.GroupFailures): fail and watchdog results, by lowest seed; a
// watchdog result without a Failure gets one of kind "watchdog". Error results are tool
// errors, counted but not grouped.
func groupFailures(results []engine.Result) []*group {
	ptrs := make([]*engine.Result, len(results))
	for i := range results {
		ptrs[i] = &results[i]
	}
	var out []*group
	for _, sg := range cli.GroupFailures(ptrs) {
		g := &group{sig: sg.Signature}
		for _, r := range sg.Results {
			g.results = append(g.results, *r)
		}
		out = append(out, g)
	}
	return out
}

// loadBaseline opens the store the baseline input names and loads it. Problems are
// warnings: the run goes on with an empty baseline. writable is false when the stored
// baseline could not be read at all (writing would clobber it blindly).
func (r *runner) loadBaseline(ctx context.Context) (store baselineStore, b *Baseline, version string, writable bool) {
	loc, err := parseBaselineLocation(r.in.Baseline)
	if err != nil {
		r.action.Warningf("seedfall: %v", err)
		return nil, newBaseline(), "", false
	}
	switch {
	case loc.File != "":
		store = fileStore{Path: loc.File}
	case loc.Branch != "":
		if r.client == nil {
			r.action.Warningf("seedfall: baseline %s needs GITHUB_REPOSITORY; running without a baseline", r.in.Baseline)
			return nil, newBaseline(), "", false
		}
		store = branchStore{Client: r.client, Owner: r.ev.Owner, Repo: r.ev.Repo, Branch: loc.Branch, Path: loc.Path}
	default:
		return nil, newBaseline(), "", false
	}
	b, version, err = store.Load(ctx)
	var ce *corruptError
	switch {
	case errors.As(err, &ce):
		r.action.WithFieldsMap(map[string]string{"title": "seedfall baseline"}).Warningf("%v", ce)
		return store, newBaseline(), version, true
	case err != nil:
		r.action.WithFieldsMap(map[string]string{"title": "seedfall baseline"}).Warningf("%v; running without a baseline", err)
		return store, newBaseline(), "", false
	}
	r.printf("seedfall ci: baseline %s: %d signatures", store.Name(), len(b.Signatures))
	return store, b, version, true
}

// labelDraws marks each group new or known against the baseline, and returns the fixed
// signatures: failing in the baseline, and now evidently not: at least one of their
// seeds swept with the draw they were recorded with (entryDraw: the Go release and the
// crash placement) and none failing with them, or a seed whose crash-state search found
// them searched in full (fully) without finding them again. A signature whose seeds were
// not swept (another shard, a smaller seed range), were swept with another draw, or
// whose search ran under a budget that may not have reached it, is neither: absence of
// evidence is not a fix. other lists the signatures that would be fixed but for their
// seeds' draw, each with that draw.
func labelDraws(groups []*group, base *Baseline, results []engine.Result, fully map[seedKey]bool) (fixed []string, other map[string]string) {
	current := map[string]bool{}
	for _, g := range groups {
		current[g.sig] = true
		g.status = statusNew
		if e, ok := base.Signatures[g.sig]; ok {
			g.entry = e
			if e.Status != StatusFixed {
				g.status = statusKnown
			}
		}
	}
	swept := map[seedKey]bool{}
	for _, res := range results {
		swept[seedKey{res.Test, res.Seed}] = true
	}
	now := runDraw(results)
	for sig, e := range base.Signatures {
		if current[sig] || e.Status == StatusFixed {
			continue
		}
		test := sigTest(sig)
		evidence := slices.ContainsFunc(e.SearchSeeds, func(s uint64) bool { return fully[seedKey{test, s}] })
		if !evidence && slices.ContainsFunc(e.Seeds, func(s uint64) bool { return swept[seedKey{test, s}] }) {
			if was := base.entryDraw(e); was.differs(now) {
				if other == nil {
					other = map[string]string{}
				}
				other[sig] = was.diff(now)
				continue
			}
			evidence = true
		}
		if evidence {
			fixed = append(fixed, sig)
		}
	}
	sort.Strings(fixed)
	return fixed, other
}

// seedDraw is what a seed's run depends on beside the config and the code: the Go
// release that built the guests (a run is deterministic per toolchain) and the crash
// placement its mid-op crashes were drawn with (engine.Provenance.CrashPlacement). Under
// another, the same seed is another run, and its passing is no evidence of a fix.
type seedDraw struct {
	Go, Placement string
}

// differs says whether seeds of d are other runs under now. An unknown Go release (empty)
// matches any; placements compare as recorded, where empty means the seeds drew no
// mid-op crash or were recorded before placements were (when "next_op" was the only one).
func (d seedDraw) differs(now seedDraw) bool {
	if d.Go != "" && now.Go != "" && d.Go != now.Go {
		return true
	}
	return d.Placement != now.Placement
}

// diff says how seeds of d differ from seeds of now, for the log: "recorded with
// go1.26.8 and this run's guests are built with go1.27.3".
func (d seedDraw) diff(now seedDraw) string {
	var parts []string
	if d.Go != "" && now.Go != "" && d.Go != now.Go {
		parts = append(parts, fmt.Sprintf("recorded with %s and this run's guests are built with %s", d.Go, now.Go))
	}
	if d.Placement != now.Placement {
		name := func(p string) string {
			if p == "" {
				return "none recorded (before crash placements were, every mid-op crash landed in the next op)"
			}
			return p
		}
		parts = append(parts, fmt.Sprintf("drawn with crash placement %s and this run's with %s", name(d.Placement), name(now.Placement)))
	}
	return strings.Join(parts, ", and ")
}

// runDraw is the draw of this run's results: the Go release that built the guests (""
// if none says) and the crash placement.
func runDraw(results []engine.Result) seedDraw {
	var d seedDraw
	for _, r := range results {
		if r.Provenance == nil {
			continue
		}
		if d.Go == "" && r.Provenance.Go != "" && r.Provenance.Go != "unknown" {
			d.Go = r.Provenance.Go
		}
		d.Placement = r.Provenance.CrashPlacement
		break
	}
	return d
}

// runGo is the Go release that built the guests of results ("" if none says).
func runGo(results []engine.Result) string { return runDraw(results).Go }

// baselinePlans gives each known group the baseline's shrunk plan, or a note that it
// has none, and returns the new groups, which are left to shrink.
func baselinePlans(groups []*group) (todo []*group) {
	for _, g := range groups {
		switch {
		case g.searchOnly():
			// The search's plan is already a crash and its recheck: nothing to shrink,
			// and the seed alone does not fail.
			h := g.found[0]
			g.shrunk = h.Plan
			g.note = fmt.Sprintf("the crash-state search's plan (%s)", plural(len(h.Plan), "fault", "faults"))
		case g.status == statusNew:
			todo = append(todo, g)
		case g.entry != nil && len(g.entry.Shrunk) > 0:
			g.shrunk = g.entry.Shrunk
			g.note = fmt.Sprintf("shrunk in an earlier run (first seen %s)", shortSHA(g.entry.FirstSeen))
		default:
			g.note = "not shrunk: known signature without a shrunk plan in the baseline"
		}
	}
	return todo
}

// shrink shrinks the new groups in order, splitting the budget: each gets the time left
// divided by the groups left, so time one group does not use passes to the next.
func (r *runner) shrink(ctx context.Context, groups []*group) {
	todo := baselinePlans(groups)
	if len(todo) == 0 {
		return
	}
	if r.in.ShrinkBudget <= 0 {
		for _, g := range todo {
			g.note = "not shrunk: shrink-budget is 0"
		}
		return
	}
	start := r.env.now()
	for i, g := range todo {
		left := r.in.ShrinkBudget - r.env.now().Sub(start)
		if left <= 0 {
			g.note = "not shrunk: budget exhausted"
			continue
		}
		per := left / time.Duration(len(todo)-i)
		res, err := r.eng.Shrink(ctx, r.configOf(g.rep().Test), *g.rep(), per)
		if err != nil {
			g.note = "not shrunk: " + err.Error()
			r.action.Warningf("seedfall: shrink %s (seed %d): %v", g.sig, g.rep().Seed, err)
			continue
		}
		g.shrunk, g.note, g.shrunkFailure = res.Faults, res.Note, res.Failure
		if g.note == "" {
			g.note = fmt.Sprintf("shrunk from %d to %d faults", len(g.rep().Faults), len(res.Faults))
		}
	}
}

// shrunkPlanRef is how a replay command names the shrunk plan of sig that writeFiles
// saves: in Actions, under the report directory's base name, as its artifact unpacks;
// elsewhere, under the report directory as given, which works from where the user ran
// the command (an absolute -out stays absolute).
func (r *runner) shrunkPlanRef(sig string) string {
	dir := r.in.Out
	if r.env.Actions {
		dir = filepath.Base(dir)
	}
	return filepath.Join(dir, faultsDir, sig+".json")
}

func (r *runner) replayCommand(test string, seed uint64) string {
	var flags []string
	if r.upgrade != nil {
		// The config's own "from" is not what ran: name the revision that did.
		flags = append(flags, "-upgrade-from "+r.upgrade.commit)
	} else if r.upgradeRev != "" {
		flags = append(flags, "-upgrade-from "+r.upgradeRev) // as the rendered sweep recorded
	}
	return cli.ReplayCommand(r.configOf(test), seed, flags...)
}

// sweepTests sweeps each simulation test of a sweep of several, its share of the seeds
// in turn, and returns the results, test by test and by seed within each. A result's
// Test names its test and its signature is prefixed with it: one baseline, report and
// comment keep the tests' failures apart (one bug in two tests is two signatures, as
// in two configs).
func (r *runner) sweepTests(ctx context.Context, where, mode, shard string) ([]engine.Result, error) {
	perTest, err := r.in.testSeeds()
	if err != nil {
		return nil, err
	}
	total := 0
	for _, ss := range perTest {
		total += len(ss)
	}
	r.printf("seedfall ci: %s: sweeping %d seeds of %d simulation tests of %s (%s mode%s)", where, total, len(r.in.Tests), r.in.name(), mode, shard)
	var out []engine.Result
	for i, t := range r.in.Tests {
		if len(perTest[i]) == 0 {
			continue
		}
		r.printf("seedfall ci: %s: %d seeds", t.Name, len(perTest[i]))
		res, err := r.eng.Sweep(ctx, t.Config, perTest[i])
		if err != nil {
			return nil, fmt.Errorf("sweep %s: %w", t.Name, err)
		}
		res = append([]engine.Result(nil), res...)
		sort.SliceStable(res, func(i, j int) bool { return res[i].Seed < res[j].Seed })
		for k := range res {
			tagTest(&res[k], t.Name)
		}
		out = append(out, res...)
	}
	return out, nil
}

// tagTest marks r as a seed of test, in a sweep of several: its signature is keyed by
// the test.
func tagTest(r *engine.Result, test string) {
	r.Test = test
	if r.Failure != nil && r.Failure.Signature != "" {
		f := *r.Failure
		f.Signature = test + "." + f.Signature
		r.Failure = &f
	}
}

// sigTest is the test a signature of a sweep of several belongs to ("" for a config's).
func sigTest(sig string) string {
	if i := strings.LastIndex(sig, ".sig-"); i > 0 {
		return sig[:i]
	}
	return ""
}

// configOf is the config of test (a sweep of several), or the sweep's own config.
func (r *runner) configOf(test string) string {
	for _, t := range r.in.Tests {
		if t.Name == test {
			return t.Config
		}
	}
	return r.in.Config
}

// testRows are the per-test counts of a sweep of several tests (nil otherwise).
func (r *runner) testRows(results []engine.Result, gs []report.Group) []report.TestRow {
	if len(r.in.Tests) == 0 {
		return nil
	}
	rows := make([]report.TestRow, len(r.in.Tests))
	at := map[string]*report.TestRow{}
	for i, t := range r.in.Tests {
		rows[i] = report.TestRow{Name: t.Name, Command: t.Command}
		at[t.Name] = &rows[i]
	}
	for _, res := range results {
		row := at[res.Test]
		if row == nil {
			continue
		}
		row.Seeds++
		switch res.Verdict {
		case engine.VerdictPass:
			row.Passed++
		case engine.VerdictFail, engine.VerdictWatchdog:
			row.Failed++
		}
	}
	for _, g := range gs {
		row := at[sigTest(g.Signature)]
		if row == nil {
			continue
		}
		switch g.Status {
		case statusNew:
			row.New++
		case statusKnown:
			row.Known++
		}
	}
	return rows
}

// seedKey names one seed of one test.
type seedKey struct {
	test string
	seed uint64
}

func statusRank(s report.Status) int {
	switch s {
	case statusNew:
		return 0
	case statusKnown:
		return 1
	}
	return 2
}

// buildData turns the sweep into the report's data. Groups come newest first: new, then
// known, then fixed; within each, by lowest seed.
func (r *runner) buildData(results []engine.Result, groups []*group, fixed []string, base *Baseline, mut *Mutation) *report.Data {
	sum := report.Summary{
		Config: r.in.name(),
		Seeds:  r.in.Seeds,
		Commit: r.ev.SHA,
		Ref:    r.ev.Ref,
		Event:  r.ev.Name,
		Total:  len(results),
	}
	if r.upgrade != nil {
		sum.Upgrade = r.upgrade.line(r.ev)
	} else {
		sum.Upgrade = r.upgradeLine
	}
	if r.in.Mode == modeDeep {
		sum.Seeds += fmt.Sprintf(" ×%d (deep)", deepFactor)
	}
	if r.in.Shard.Count > 1 {
		sum.Seeds += " shard " + r.in.Shard.String()
	}
	for _, res := range results {
		switch res.Verdict {
		case engine.VerdictPass:
			sum.Passed++
		case engine.VerdictFail:
			sum.Failed++
			if res.Failure != nil && res.Failure.Kind == engine.KindLiveness {
				sum.Liveness++
			}
		case engine.VerdictHorizon:
			sum.Horizon++
		case engine.VerdictWatchdog:
			sum.Watchdog++
		case engine.VerdictError:
			sum.Errors++
		}
		if res.Checked {
			sum.Checked = true
		}
		if res.Divergence != nil {
			sum.Divergences++
		}
	}
	var gs []report.Group
	for _, g := range groups {
		rep := g.rep()
		rg := report.Group{
			Signature:    g.sig,
			Status:       g.status,
			Kind:         string(rep.Failure.Kind),
			Reason:       rep.Failure.Reason,
			Seeds:        g.seeds(),
			FaultClasses: report.FaultClasses(rep),
			Shrunk:       g.shrunk,
			ShrinkNote:   g.note,
			Faults:       rep.Faults,
			Trace:        rep.Trace,
			Replay:       r.replayCommand(rep.Test, rep.Seed),
			FirstSeen:    r.ev.SHA,
			LastSeen:     r.ev.SHA,
			AtNS:         rep.Failure.AtNS,
		}
		if f := g.shrunkFailure; f != nil && len(g.shrunk) > 0 {
			rg.ShrunkAtNS, rg.ShrunkReason = f.AtNS, f.Reason
		}
		if len(g.shrunk) > 0 && (g.status == statusNew || g.searchOnly()) {
			// The shrunk plan is saved with the report (see writeFiles), under the report
			// directory as the artifact unpacks it: replay it exactly.
			rg.Replay += " -faults " + r.shrunkPlanRef(g.sig)
		}
		if len(g.found) > 0 {
			h := g.found[0]
			rg.Search = fmt.Sprintf("crash-state search of seed %d: a crash in %s (%s); %d of the %d states run there fail", h.seed, h.Where, h.Site, h.Failing, h.States)
		}
		if g.status == statusKnown {
			rg.FirstSeen = g.entry.FirstSeen
			sum.Known++
		} else {
			sum.New++
		}
		gs = append(gs, rg)
	}
	for _, sig := range fixed {
		e := base.Signatures[sig]
		seeds := append([]uint64(nil), e.Seeds...)
		sortSeeds(seeds)
		rg := report.Group{
			Signature:  sig,
			Status:     statusFixed,
			Kind:       e.Kind,
			Reason:     e.Reason,
			Seeds:      seeds,
			Shrunk:     e.Shrunk,
			ShrinkNote: "fixed: its seeds pass now",
			FirstSeen:  e.FirstSeen,
			LastSeen:   e.LastSeen,
		}
		if len(seeds) > 0 {
			rg.Replay = r.replayCommand(sigTest(sig), seeds[0])
		}
		gs = append(gs, rg)
		sum.Fixed++
	}
	sort.SliceStable(gs, func(i, j int) bool {
		a, b := gs[i], gs[j]
		if ra, rb := statusRank(a.Status), statusRank(b.Status); ra != rb {
			return ra < rb
		}
		if len(a.Seeds) > 0 && len(b.Seeds) > 0 && a.Seeds[0] != b.Seeds[0] {
			return a.Seeds[0] < b.Seeds[0]
		}
		return a.Signature < b.Signature
	})

	sum.Tests = r.testRows(results, gs)
	d := &report.Data{
		Title:      "seedfall: " + r.in.name(),
		Groups:     gs,
		Properties: aggregateProperties(results),
	}
	covs := make([]*coverage.Coverage, 0, len(results))
	for i := range results {
		covs = append(covs, results[i].Coverage)
	}
	if c := coverage.Merge(covs...); c != nil {
		if rep, err := c.Report(); err != nil {
			r.printf("seedfall report: coverage: %v", err)
		} else {
			d.Coverage = rep
		}
	}
	shown := base.Mutation // the last result, when this run did not mutate
	blind := blindMutants(base.Mutation, mut)
	if mut != nil {
		shown = mut
		if base.Mutation != nil {
			sum.MutationWas = base.Mutation.Score
		}
		sum.Blind = len(blind)
	}
	if shown != nil {
		sum.MutationScore = shown.Score
		for _, mu := range shown.Mutants {
			d.Mutants = append(d.Mutants, report.Mutant{Name: mu.Name, Site: mu.Site, Killed: mu.Killed, Seed: mu.Seed,
				Outcome: mu.Outcome, Reason: mu.Reason, Blind: blind[mu.key()]})
		}
	}
	if r.ev.Owner != "" && r.env.runIDString() != "" {
		sum.ReportURL = fmt.Sprintf("%s/%s/%s/actions/runs/%s", strings.TrimSuffix(r.env.serverURL(), "/"), r.ev.Owner, r.ev.Repo, r.env.runIDString())
	}
	sum.Conclusion = "success"
	if exitCode(r.in.FailOn, sum) != ExitPass {
		sum.Conclusion = "failure"
	}
	d.Summary = sum
	return d
}

// runIDString is GITHUB_RUN_ID as text, "" when unknown.
func (e Env) runIDString() string {
	if e.RunID == 0 {
		return ""
	}
	return fmt.Sprint(e.RunID)
}

// aggregateProperties totals property hits across the sweep, sorted by name: seeds
// that reached each property and seeds in which it held.
func aggregateProperties(results []engine.Result) []report.Property {
	ptrs := make([]*engine.Result, len(results))
	for i := range results {
		ptrs[i] = &results[i]
	}
	return report.Properties(engine.AggregateProperties(ptrs))
}

// exitCode applies the fail-on policy.
func exitCode(failOn string, s report.Summary) int {
	switch failOn {
	case failOnNever:
		return ExitPass
	case failOnAny:
		if s.New+s.Known > 0 || s.Errors > 0 || s.Divergences > 0 {
			return ExitFailure
		}
		return ExitPass
	}
	if s.New > 0 || s.Blind > 0 {
		return ExitFailure
	}
	return ExitPass
}

// nextBaseline is the baseline after this run: every failing signature recorded (seeds
// that pass now dropped, seeds not swept kept), fixed ones marked fixed, the rest
// untouched.
func nextBaseline(base *Baseline, groups []*group, fixed []string, results []engine.Result, sha string, run int64) *Baseline {
	next := base.clone()
	swept := map[seedKey]bool{}
	for _, res := range results {
		swept[seedKey{res.Test, res.Seed}] = true
		if res.Provenance != nil {
			next.Provenance = res.Provenance
		}
	}
	for _, g := range groups {
		rep := g.rep()
		e, ok := next.Signatures[g.sig]
		if !ok || e.Status == StatusFixed {
			if !ok {
				e = &Entry{FirstSeen: sha, FirstRun: run}
			}
			next.Signatures[g.sig] = e
		}
		var keep []uint64
		for _, s := range e.Seeds {
			if !swept[seedKey{sigTest(g.sig), s}] {
				keep = append(keep, s)
			}
		}
		e.Seeds = unionSeeds(keep, g.seeds())
		e.Kind, e.Reason = string(rep.Failure.Kind), rep.Failure.Reason
		if len(g.shrunk) > 0 {
			e.Shrunk = g.shrunk
		}
		e.LastSeen, e.LastRun = sha, run
		e.Status, e.FixedIn, e.FixedRun = StatusFailing, "", 0
		for _, h := range g.found {
			e.SearchSeeds = unionSeeds(e.SearchSeeds, []uint64{h.seed})
		}
		if len(g.results) > 0 {
			// Seeds recorded with another draw (Go release, crash placement) are not
			// this draw's evidence.
			now := runDraw(results)
			if base.entryDraw(e).differs(now) {
				e.Seeds = g.seeds()
			}
			if now.Go != "" {
				e.Go = now.Go
			}
			e.Placement = now.Placement
		}
	}
	for _, sig := range fixed {
		e := next.Signatures[sig]
		e.Status, e.FixedIn, e.FixedRun = StatusFixed, sha, run
	}
	return next
}
