package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit writes the sweep as JUnit XML, for CI systems that show test results: one
// testsuite "seedfall" with a testcase per failure signature and one passing testcase
// for the seeds that passed. A new or known signature is a failed testcase (its
// failure element holds the reason, the seeds, the minimal schedule, the replay
// command and the trace excerpt); a fixed signature is a passing one. When the sweep
// checked determinism, a "determinism" testcase fails if any seed diverged, and runs
// the tool could not complete are one errored testcase.
func JUnit(w io.Writer, d *Data) error {
	s := d.Summary
	suite := junitSuite{Name: "seedfall"}
	for _, f := range []struct{ name, value string }{
		{"config", s.Config}, {"seeds", s.Seeds}, {"commit", s.Commit}, {"ref", s.Ref}, {"event", s.Event},
		{"conclusion", s.Conclusion}, {"mutation_score", s.MutationScore}, {"report_url", s.ReportURL},
	} {
		if f.value != "" {
			suite.Properties = append(suite.Properties, junitProperty{Name: f.name, Value: xmlSafe(f.value)})
		}
	}

	for _, g := range orderedGroups(d.Groups) {
		tc := junitCase{
			ClassName: "seedfall." + string(g.Status),
			Name:      fmt.Sprintf("%s (%s) %s", g.Signature, statusLabel(g.Status), xmlSafe(clip(oneLine(g.Reason), 200))),
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
		ClassName: "seedfall.sweep",
		Name:      fmt.Sprintf("%d of %d seeds passed", s.Passed, s.Total),
		SystemOut: &cdata{fmt.Sprintf("seeds %s: %d passed, %d failed (%d never finished), %d hit the time horizon, %d watchdog, %d errors\n",
			xmlSafe(s.Seeds), s.Passed, s.Failed, s.Liveness, s.Horizon, s.Watchdog, s.Errors)},
	})
	if s.Checked {
		tc := junitCase{ClassName: "seedfall.sweep", Name: "determinism", SystemOut: &cdata{determinismLine(s) + "\n"}}
		if s.Divergences > 0 {
			tc.SystemOut = nil
			tc.Failure = &junitFailure{Message: determinismLine(s), Type: "nondeterminism"}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if s.Errors > 0 {
		msg := fmt.Sprintf("%s could not complete", plural(s.Errors, "run"))
		suite.Cases = append(suite.Cases, junitCase{ClassName: "seedfall.sweep", Name: "tool errors",
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

// junitDetail is the body of a signature's failure element.
func junitDetail(g Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s at %s: %s\n", g.Signature, g.Kind, fmtNS(g.AtNS), oneLine(g.Reason))
	fmt.Fprintf(&b, "seeds: %s\n", formatSeeds(g.Seeds, 0))
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
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut *cdata        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}
