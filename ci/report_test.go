package ci

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportMatchesRun: `seedfall report` of the results a local `seedfall ci` run
// wrote renders the same report.html, report.md, junit.xml and results.jsonl, byte for
// byte, as that run did (same grouping, labels and renderers). The baseline knows the
// signature, so neither path shrinks or notes a shrink it did not do. The negative
// control: the same results reported without the baseline label the signature new, and
// the files differ.
func TestReportMatchesRun(t *testing.T) {
	dir := t.TempDir()
	eng := &fakeEngine{bug: true}
	sig := eng.result(3).Failure.Signature
	base := newBaseline()
	base.Signatures[sig] = &Entry{Kind: "always", Reason: "acknowledged write lost", Seeds: []uint64{3}, FirstSeen: strings.Repeat("a", 40), LastSeen: strings.Repeat("a", 40), Status: StatusFailing}
	base.Signatures["sig-000000000001"] = &Entry{Reason: "old", Seeds: []uint64{4}, FirstSeen: strings.Repeat("b", 40), LastSeen: strings.Repeat("b", 40), Status: StatusFailing}
	data, err := base.marshal()
	must(t, err)
	baseFile := filepath.Join(dir, "baseline.json")
	must(t, os.WriteFile(baseFile, data, 0o644))

	ranOut := filepath.Join(dir, "ran")
	// No crash-state search: its findings are not in results.jsonl, which is all that
	// seedfall report reads (TestCrashSearchInCI covers the search's report).
	in, err := ParseInputs([]string{"-c", "app/seedfall.json", "-seeds", "1-30", "-mode", "push", "-fail-on", "any", "-shrink-budget", "0s", "-baseline", baseFile, "-out", ranOut, "-crash-seeds", ""}, nil, nil)
	must(t, err)
	var stdout bytes.Buffer
	code, err := Run(context.Background(), in, Env{}, eng, &stdout)
	if err != nil || code != ExitFailure {
		t.Fatalf("Run: exit %d, %v\n%s", code, err, stdout.String())
	}

	report := func(baseline, name string) (string, string) {
		t.Helper()
		out := filepath.Join(dir, name)
		var stdout bytes.Buffer
		code, err := Report(ReportOptions{Results: filepath.Join(ranOut, ResultsJSONL), Config: "app/seedfall.json", Baseline: baseline, Out: out}, &stdout)
		if err != nil || code != ExitFailure {
			t.Fatalf("Report: exit %d, %v\n%s", code, err, stdout.String())
		}
		return out, stdout.String()
	}
	repOut, repStdout := report(baseFile, "reported")
	for _, want := range []string{"seedfall report: baseline " + baseFile + ": 2 signatures", "1 known, 1 fixed"} {
		if !strings.Contains(repStdout, want) {
			t.Errorf("report's stdout lacks %q:\n%s", want, repStdout)
		}
	}
	files := []string{ReportHTML, ReportMarkdown, JUnitXML, ResultsJSONL}
	for _, name := range files {
		a, errA := os.ReadFile(filepath.Join(ranOut, name))
		b, errB := os.ReadFile(filepath.Join(repOut, name))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", name, errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between seedfall ci and seedfall report (%d and %d bytes)", name, len(a), len(b))
		}
	}

	// Negative control: without the baseline the signature is new, not known.
	noBase, _ := report("", "nobase")
	md1, _ := os.ReadFile(filepath.Join(repOut, ReportMarkdown))
	md2, _ := os.ReadFile(filepath.Join(noBase, ReportMarkdown))
	if bytes.Equal(md1, md2) || !bytes.Contains(md2, []byte("new")) {
		t.Errorf("report.md without a baseline is the same as with it: the comparison above proves nothing")
	}
}
