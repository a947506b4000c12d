package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// JUnit writes the sweep as JUnit XML, for CI systems that show test results and for
// the history tools that follow a testcase from run to run by its classname and name:
// one testsuite "seedfall" with a testcase per failure signature and one testcase for
// the seeds that passed, all under the classname JUnitClass(config).
//
// Names are stable: a signature's testcase is named by its id and its normalized reason
// (engine.NormalizeReason: no seed-specific keys, values, numbers or times), so two
// sweeps over different seeds that hit the same bug give the same name; the passing
// seeds are "seeds passed" whatever the counts. What changes from run to run is in
// properties (status new/known/fixed, seeds, counts) and in the body. A new or known
// signature is a failed testcase (its failure element holds the reason, the seeds, the
// minimal schedule, the replay command and the trace excerpt); a fixed signature is a
// passing one with the same name, so the history shows it going green. When the sweep
// checked determinism, a "determinism" testcase fails if any seed diverged, and runs the
// tool could not complete are one errored testcase, "tool errors".
func JUnit(w io.Writer, d *Data) error {
	s := d.Summary
	class := JUnitClass(s.Config)
	suite := junitSuite{Name: "seedfall"}
	for _, f := range []struct{ name, value string }{
		{"config", s.Config}, {"seeds", s.Seeds}, {"commit", s.Commit}, {"ref", s.Ref}, {"event", s.Event},
		{"conclusion", s.Conclusion}, {"mutation_score", s.MutationScore}, {"report_url", s.ReportURL}, {"upgrade", s.Upgrade},
		{"crash_search", s.Search},
	} {
		if f.value != "" {
			suite.Properties = append(suite.Properties, junitProperty{Name: f.name, Value: xmlSafe(f.value)})
		}
	}

	for _, g := range orderedGroups(d.Groups) {
		tc := junitCase{
			ClassName: class,
			Name:      JUnitName(g.Signature, g.Reason),
			Properties: []junitProperty{
				{Name: "status", Value: statusLabel(g.Status)},
				{Name: "kind", Value: xmlSafe(oneLine(g.Kind))},
				{Name: "seeds", Value: formatSeeds(g.Seeds, 0)},
			},
		}
		if g.Status == StatusFixed {
			tc.SystemOut = &cdata{xmlSafe(fmt.Sprintf("fixed: no longer fails; the baseline had it on seeds %s\n", formatSeeds(g.Seeds, 0)))}
		} else {
			tc.Failure = &junitFailure{
				Message: xmlSafe(oneLine(g.Reason)),
				Type:    xmlSafe(g.Kind),
				Text:    xmlSafe(junitDetail(g)),
			}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
	}

	suite.Cases = append(suite.Cases, junitCase{
		ClassName: class,
		Name:      JUnitPassedName,
		Properties: []junitProperty{
			{Name: "passed", Value: fmt.Sprint(s.Passed)},
			{Name: "total", Value: fmt.Sprint(s.Total)},
		},
		SystemOut: &cdata{fmt.Sprintf("seeds %s: %d passed, %d failed (%d never finished), %d hit the time horizon, %d watchdog, %d errors\n",
			xmlSafe(s.Seeds), s.Passed, s.Failed, s.Liveness, s.Horizon, s.Watchdog, s.Errors)},
	})
	if s.Checked {
		tc := junitCase{ClassName: class, Name: "determinism", SystemOut: &cdata{determinismLine(s) + "\n"}}
		if s.Divergences > 0 {
			tc.SystemOut = nil
			tc.Failure = &junitFailure{Message: determinismLine(s), Type: "nondeterminism"}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if s.Errors > 0 {
		msg := fmt.Sprintf("%s could not complete", plural(s.Errors, "run"))
		suite.Cases = append(suite.Cases, junitCase{ClassName: class, Name: "tool errors",
			Error: &junitFailure{Message: msg, Type: "error"}})
		suite.Errors++
	}
	suite.Tests = len(suite.Cases)

	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suite); err != nil {
		return fmt.Errorf("junit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// JUnitPassedName is the name of the testcase that stands for the seeds that passed.
const JUnitPassedName = "seeds passed"

// JUnitClass is the classname of every testcase of a sweep of config: "seedfall." and
// the config's path without ".json", each character other than a letter, digit, '-'
// or '_' replaced by '_' (history tools split classnames at dots), e.g.
// "examples/kvlog/seedfall.json" gives "seedfall.examples_kvlog_seedfall".
func JUnitClass(config string) string {
	c := strings.TrimPrefix(strings.TrimSuffix(config, ".json"), "./")
	if c == "" {
		c = "sweep"
	}
	return "seedfall." + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, c)
}

// JUnitName is a signature's testcase name: its id and its normalized reason, which
// holds no seed-specific values, clipped to 200 bytes.
func JUnitName(sig, reason string) string {
	n := engine.NormalizeReason(oneLine(reason))
	if n == "" {
		return sig
	}
	return sig + " " + xmlSafe(clip(n, 200))
}

// junitDetail is the body of a signature's failure element.
func junitDetail(g Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s at %s: %s\n", g.Signature, g.Kind, fmtNS(g.AtNS), oneLine(g.Reason))
	fmt.Fprintf(&b, "seeds: %s\n", formatSeeds(g.Seeds, 0))
	if g.Search != "" {
		fmt.Fprintf(&b, "found by the %s\n", oneLine(g.Search))
	}
	if len(g.FaultClasses) > 0 {
		fmt.Fprintf(&b, "faults before the failure: %s\n", strings.Join(g.FaultClasses, ", "))
	}
	if g.FirstSeen != "" || g.LastSeen != "" {
		fmt.Fprintf(&b, "first seen: %s, last seen: %s\n", g.FirstSeen, g.LastSeen)
	}
	if len(g.Shrunk) > 0 || g.ShrinkNote != "" {
		fmt.Fprintf(&b, "minimal fault schedule (%s):\n", oneLine(g.ShrinkNote))
		for _, f := range g.Shrunk {
			fmt.Fprintf(&b, "  %s\n", oneLine(f.String()))
		}
	}
	if g.Replay != "" {
		fmt.Fprintf(&b, "replay: %s\n", oneLine(g.Replay))
	}
	if len(g.Trace) > 0 {
		b.WriteString("trace:\n")
		for _, l := range g.Trace {
			fmt.Fprintf(&b, "  %s\n", printable(l))
		}
	}
	return b.String()
}

// xmlSafe drops what XML 1.0 cannot carry at all (most control characters);
// encoding/xml escapes the rest.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

type junitSuite struct {
	XMLName    xml.Name        `xml:"testsuite"`
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

// cdata is element text written as CDATA, so that multi-line output stays readable
// in the file (encoding/xml splits any "]]>" in it).
type cdata struct {
	Text string `xml:",cdata"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName  string          `xml:"classname,attr"`
	Name       string          `xml:"name,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitFailure   `xml:"failure,omitempty"`
	Error      *junitFailure   `xml:"error,omitempty"`
	SystemOut  *cdata          `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}
