package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/seedspec"
)

// ReportOptions are `seedfall report`'s flags.
type ReportOptions struct {
	// Results is the results file (JSON lines of `seedfall run -out` or `seedfall merge`).
	Results string
	// Config names the config in replay commands; "" takes the one the sweep recorded,
	// named from the working directory.
	Config string
	// Baseline is a baseline file that labels signatures new, known or fixed; "" for none.
	Baseline string
	// Out is the directory the report files go to (DefaultOut when "").
	Out string
}

// Report is `seedfall report`: it renders a saved sweep, without running anything, into
// the files `seedfall ci` writes for a sweep (report.html, report.md, junit.xml,
// results.jsonl), with the Action's grouping, labelling and renderers, so that the two
// agree byte for byte. Failures are labelled against the baseline file, if any; the
// exit code is fail-on "any" (ExitFailure when any signature fails, new or known, or a
// seed could not run). It prints for a person at a terminal: no workflow commands, no
// job summary, no outputs. Bad input (the results, the baseline) is an error naming the
// file and the line or field, with ExitError.
func Report(o ReportOptions, stdout io.Writer) (int, error) {
	if o.Results == "" {
		return ExitError, errors.New("-in is required (a results file from seedfall run -out)")
	}
	if o.Out == "" {
		o.Out = DefaultOut
	}
	results, err := readResultsFiles([]string{o.Results}, checkVerdict)
	if err != nil {
		return ExitError, err
	}
	if len(results) == 0 {
		return ExitError, fmt.Errorf("%s holds no results", o.Results)
	}
	if err := checkSweepResults(o.Results, results, o.Config != ""); err != nil {
		return ExitError, err
	}
	if o.Config == "" {
		// The sweep recorded the config it ran, as given on its command line, so that
		// the report's replay commands work from the same directory. It is named from
		// where the report is made, when the sweep recorded its working directory and
		// the config is there.
		cwd, _ := os.Getwd()
		for _, r := range results {
			if r.Provenance != nil && r.Provenance.Config != "" {
				o.Config = engineapi.ConfigFrom(r.Provenance, cwd)
				break
			}
		}
	}
	base := newBaseline()
	if o.Baseline != "" {
		if base, err = readBaselineFile(o.Baseline); err != nil {
			return ExitError, err
		}
	}

	seeds := make([]uint64, len(results))
	for i, r := range results {
		seeds[i] = r.Seed
	}
	// The runner here is data only (no engine, event or client): buildData reads the
	// config, the seeds and the fail-on policy from it.
	r := &runner{in: Inputs{Config: o.Config, Seeds: seedspec.Format(seeds), Mode: modePush, FailOn: failOnAny, Out: o.Out}, out: stdout}
	// A sweep of several simulation tests: each result names its test, and its config
	// is the one its own run recorded.
	cwd, _ := os.Getwd()
	for _, res := range results {
		if res.Test == "" || slices.ContainsFunc(r.in.Tests, func(t TestTarget) bool { return t.Name == res.Test }) {
			continue
		}
		t := TestTarget{Name: res.Test, Config: o.Config}
		if res.Provenance != nil && res.Provenance.Config != "" {
			t.Config = engineapi.ConfigFrom(res.Provenance, cwd)
		}
		r.in.Tests = append(r.in.Tests, t)
	}
	if r.upgradeLine, r.upgradeRev, err = recordedUpgrade(o.Results, results); err != nil {
		return ExitError, err
	}
	r.printf("seedfall report: rendering %d results of %s from %s", len(results), o.Config, o.Results)
	if o.Baseline != "" {
		r.printf("seedfall report: baseline %s: %d signatures", o.Baseline, len(base.Signatures))
	}
	groups := groupFailures(results)
	fixed, _ := labelDraws(groups, base, results, nil)
	// No shrinking: new signatures have no note; known ones show the baseline's plan.
	baselinePlans(groups)
	data := r.buildData(results, groups, fixed, base, nil)
	if err := writeFiles(o.Out, data, results, groups); err != nil {
		return ExitError, err
	}
	s := data.Summary
	r.printf("seedfall report: %d seeds: %d passed, %d failed; %d new, %d known, %d fixed: %s; report %s",
		s.Total, s.Passed, s.Failed, s.New, s.Known, s.Fixed, s.Conclusion, filepath.Join(o.Out, ReportHTML))
	return exitCode(failOnAny, s), nil
}

// checkVerdict refuses a result whose verdict is none of the engine's.
func checkVerdict(r *engine.Result) error {
	switch r.Verdict {
	case engine.VerdictPass, engine.VerdictFail, engine.VerdictHorizon, engine.VerdictWatchdog, engine.VerdictError:
		return nil
	}
	return fmt.Errorf("field verdict: %q is not a verdict (want pass, fail, horizon, watchdog or error)", r.Verdict)
}

// readBaselineFile reads a baseline file for `seedfall report`. Unlike the Action, which
// warns and goes on with an empty baseline (its next write replaces a corrupt one), a
// report refuses a baseline it cannot read: labelling every failure new against it
// would be wrong. A missing file is an empty baseline, as in the Action.
func readBaselineFile(name string) (*Baseline, error) {
	if strings.HasPrefix(name, "branch:") {
		return nil, fmt.Errorf("-baseline %s: report reads a baseline file, not a data branch (fetch the file first, e.g. git show BRANCH:%s > baseline.json)", name, DefaultBaselinePath)
	}
	b, _, err := fileStore{Path: name}.Load(context.Background())
	var ce *corruptError
	if errors.As(err, &ce) {
		return nil, fmt.Errorf("baseline %s: %w", name, ce.Err)
	}
	return b, err
}

// checkSweepResults refuses results that report cannot give a true replay command for:
// a `replay -json` result (it may have replayed a fault plan, which a report's seed
// commands would drop), and, unless -c names the config, a result that does not record
// the config its sweep ran.
func checkSweepResults(in string, results []engine.Result, configGiven bool) error {
	for _, r := range results {
		p := r.Provenance
		switch {
		case p != nil && p.Faults != "":
			return fmt.Errorf("%s: seed %d is a `seedfall replay -json` result of the plan %s, not a sweep's: report renders results of `seedfall run -out` (replay it with: %s)", in, r.Seed, p.Faults, cli.ReplayCommand(p.Config, r.Seed, "-faults "+p.Faults))
		case !configGiven && (p == nil || p.Config == ""):
			return fmt.Errorf("%s: seed %d does not record the config it ran (a `seedfall replay -json` result, or results from an older seedfall?): report renders results of `seedfall run -out`; name the config with -c to render these", in, r.Seed)
		}
	}
	return nil
}
