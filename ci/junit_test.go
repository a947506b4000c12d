package ci

import (
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type junitFile struct {
	Cases []struct {
		Class      string `xml:"classname,attr"`
		Name       string `xml:"name,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Failure *struct{} `xml:"failure"`
	} `xml:"testcase"`
}

// sweepJUnit runs a local sweep of seeds with eng and returns its junit.xml, parsed.
func sweepJUnit(t *testing.T, seeds string, eng Engine, baseline string) junitFile {
	t.Helper()
	in, err := ParseInputs([]string{"-c", "examples/kvlog/seedfall.json", "-seeds", seeds, "-shrink-budget", "0s", "-baseline", baseline, "-out", t.TempDir()}, nil, nil)
	must(t, err)
	if _, err := Run(context.Background(), in, Env{}, eng, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(in.Out, JUnitXML))
	must(t, err)
	var f junitFile
	if err := xml.Unmarshal(b, &f); err != nil {
		t.Fatalf("junit.xml does not parse: %v\n%s", err, b)
	}
	return f
}

// TestJUnitStableNames: two sweeps over different seeds that hit the same bug (with
// different keys and values in its reason) give the same testcase names and classnames,
// so JUnit history tools follow the bug from run to run; new/known/fixed and the seeds
// are properties. A different bug gets a different name (negative control).
func TestJUnitStableNames(t *testing.T) {
	a := sweepJUnit(t, "1-20", &fakeEngine{bug: true}, "")
	b := sweepJUnit(t, "21-40", &fakeEngine{bug: true}, "")
	names := func(f junitFile) []string {
		var out []string
		for _, c := range f.Cases {
			out = append(out, c.Class+" :: "+c.Name)
		}
		return out
	}
	if !reflect.DeepEqual(names(a), names(b)) {
		t.Fatalf("the same bug on different seeds gave different testcases:\n%q\n%q", names(a), names(b))
	}
	want := []string{
		"seedfall.examples_kvlog_seedfall :: " + buggySig(t) + " client#N: acknowledged write lost: kN=vN, server now answers NONE",
		"seedfall.examples_kvlog_seedfall :: seeds passed",
	}
	if !reflect.DeepEqual(names(a), want) {
		t.Errorf("testcases %q, want %q", names(a), want)
	}
	props := func(f junitFile, i int) map[string]string {
		m := map[string]string{}
		for _, p := range f.Cases[i].Properties {
			m[p.Name] = p.Value
		}
		return m
	}
	if p := props(a, 0); p["status"] != "new" || p["seeds"] != "3, 10, 17" || a.Cases[0].Failure == nil {
		t.Errorf("sweep 1 signature properties %v (failure %v), want status new, seeds 3, 10, 17", p, a.Cases[0].Failure != nil)
	}
	if p := props(b, 0); p["seeds"] != "24, 31, 38" {
		t.Errorf("sweep 2 signature properties %v, want seeds 24, 31, 38", p)
	}
	if p := props(a, 1); p["passed"] != "17" || p["total"] != "20" {
		t.Errorf("passing testcase properties %v", p)
	}

	// Known, then fixed, against a baseline: same name, status in a property.
	base := filepath.Join(t.TempDir(), "baseline.json")
	// A local run does not write the baseline; record the signature directly.
	bl := newBaseline()
	bl.Signatures[buggySig(t)] = &Entry{Kind: "always", Reason: "client#1: acknowledged write lost: k3=v9, server now answers NONE", Seeds: []uint64{3, 10, 17}, Status: StatusFailing}
	must(t, fileStore{Path: base}.Save(context.Background(), bl, ""))
	known := sweepJUnit(t, "21-40", &fakeEngine{bug: true}, base)
	fixed := sweepJUnit(t, "1-20", &fakeEngine{}, base)
	if known.Cases[0].Name != a.Cases[0].Name || props(known, 0)["status"] != "known" {
		t.Errorf("known: %q %v, want the same name with status known", known.Cases[0].Name, props(known, 0))
	}
	if fixed.Cases[0].Name != a.Cases[0].Name || props(fixed, 0)["status"] != "fixed" || fixed.Cases[0].Failure != nil {
		t.Errorf("fixed: %q %v, want the same name, passing, with status fixed", fixed.Cases[0].Name, props(fixed, 0))
	}

	// Negative control: another bug is another testcase.
	other := sweepJUnit(t, "1-20", &fakeEngine{extra: 1}, "")
	if len(other.Cases) != 2 || other.Cases[0].Name == a.Cases[0].Name || !strings.HasPrefix(other.Cases[0].Name, "sig-") {
		t.Errorf("a different bug: testcases %q", names(other))
	}
}
