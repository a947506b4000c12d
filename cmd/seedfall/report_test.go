package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestReportFromResults: `seedfall report` renders a saved sweep as what it is (no
// "sweeping" line), its replay commands name the config the sweep ran (recorded in the
// results), and its seed list is ranges, not every seed.
func TestReportFromResults(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	code, stdout, stderr := runCLI(t, "run", "-c", kvlogBuggy, "-seeds", "1-100", "-workers", "2", "-q", "-out", results)
	if code != exitFail {
		t.Fatalf("sweep: exit %d, want %d (kvlog's bug in 100 seeds)\n%s\n%s", code, exitFail, stdout, stderr)
	}
	_, rs := readResults(t, results)
	prov, _ := rs[0]["provenance"].(map[string]any)
	if prov["config"] != kvlogBuggy || prov["seedfall"] == "" || !strings.HasPrefix(prov["go"].(string), "go1.") {
		t.Errorf("results record provenance %v, want the config %s, seedfall's and Go's versions", prov, kvlogBuggy)
	}
	if wasm, _ := prov["wasm"].(map[string]any); len(wasm["server"].(string)) != 24 || len(wasm["client"].(string)) != 24 {
		t.Errorf("provenance wasm hashes %v", prov["wasm"])
	}

	out := filepath.Join(dir, "report")
	code, stdout, stderr = runCLI(t, "report", "-in", results, "-out", out)
	if code != exitFail {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "sweeping") || !strings.Contains(stdout, "rendering 100 results of "+kvlogBuggy+" from "+results) {
		t.Errorf("report says it sweeps, or not what it renders:\n%s", stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "seedfall replay -c "+kvlogBuggy+" -seed ") {
		t.Errorf("report.md's replay commands do not name %s:\n%s", kvlogBuggy, md)
	}
	if strings.Contains(string(md), "1,2,3") || !strings.Contains(string(md), "1-100") {
		t.Errorf("report.md lists the seeds one by one, or not as 1-100:\n%s", md)
	}
	// A report for a person at a terminal (issue 35 point 3): no workflow commands, no
	// `seedfall ci:` lines, no sections about a shrink that report never runs or a
	// trace it does not have, and the concrete faults before the failure inline.
	for _, bad := range []string{"::error", "::warning", "seedfall ci:"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("report prints %q outside Actions:\n%s", bad, stdout)
		}
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"shrink-budget is 0", "No minimal schedule", "No trace excerpt", "Minimal fault schedule"} {
		if strings.Contains(string(html)+string(md), bad) {
			t.Errorf("the report shows %q", bad)
		}
	}
	if !regexp.MustCompile(`<h3>Faults before the failure \(\d+\)</h3>\n<ol class="faults before mono">\n<li>\d[^<]* crash server`).Match(html) {
		t.Errorf("report.html does not list the faults before the failure inline")
	}

	// A replay -json result of a plan is refused, naming the plan to replay instead.
	one := filepath.Join(dir, "one.json")
	plan := filepath.Join("..", "..", "examples", "kvlog", "seed-2.faults.json")
	code, stdout, _ = runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "2", "-faults", plan, "-json")
	if code != exitFail {
		t.Fatalf("replay -json: exit %d", code)
	}
	var line bytes.Buffer // as a results file holds it: one JSON object a line
	if err := json.Compact(&line, []byte(stdout)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(one, append(line.Bytes(), '\n'), 0o644)
	code, _, stderr = runCLI(t, "report", "-in", one, "-out", filepath.Join(dir, "r2"))
	if code != exitUsage || !strings.Contains(stderr, "replay -json") || !strings.Contains(stderr, "-faults "+plan) {
		t.Errorf("report of a replay -json result: exit %d, %s", code, stderr)
	}
}

// TestReplayWarnsOnOtherBuild: a plan saved under another engine Behaviour or Go
// release replays with a warning that says which; another Go release gets a line of its
// own (the guests' runtime differs). shrink and cause, which start from a plan too, warn
// the same way. Another seedfall binary of the same Behaviour, or another wasm hash of a
// node (another checkout's path changes it), does not warn: README plans stay quiet.
func TestReplayWarnsOnOtherBuild(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	if code, _, stderr := runCLI(t, "replay", "-c", kvlogFixed, "-seed", "3", "-q", "-save", plan); code != exitPass {
		t.Fatalf("replay -save: exit %d\n%s", code, stderr)
	}
	code, _, stderr := runCLI(t, "replay", "-c", kvlogFixed, "-seed", "3", "-q", "-faults", plan)
	if code != exitPass || strings.Contains(stderr, "warning") {
		t.Fatalf("same build: exit %d, stderr:\n%s", code, stderr)
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	var p engine.FaultPlan
	if err := json.Unmarshal(data, &p); err != nil || p.Provenance == nil {
		t.Fatalf("saved plan has no provenance: %v\n%s", err, data)
	}
	if p.Provenance.Behaviour != engine.Behaviour {
		t.Fatalf("saved plan records behaviour %d, want %d", p.Provenance.Behaviour, engine.Behaviour)
	}
	write := func(p engine.FaultPlan) {
		data, _ := json.Marshal(p)
		if err := os.WriteFile(plan, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Another binary, another checkout: quiet. A plan written before behaviours were
	// recorded reads as behaviour 1.
	quiet := p
	prov := *p.Provenance
	prov.Seedfall = "devel+exe-000000000000"
	prov.Wasm = map[string]string{"server": "000000000000000000000000", "client": "000000000000000000000000"}
	if engine.Behaviour == 1 {
		prov.Behaviour = 0
	}
	quiet.Provenance = &prov
	write(quiet)
	if code, _, stderr := runCLI(t, "replay", "-c", kvlogFixed, "-seed", "3", "-q", "-faults", plan); code != exitPass || strings.Contains(stderr, "warning") {
		t.Fatalf("another binary of the same behaviour: exit %d, stderr:\n%s", code, stderr)
	}
	loud := *p.Provenance
	loud.Go = "go1.19"
	loud.Behaviour = engine.Behaviour + 1
	p.Provenance = &loud
	write(p)
	now := runtime.Version()
	for _, args := range [][]string{
		{"replay", "-c", kvlogFixed, "-seed", "3", "-q", "-faults", plan},
		{"shrink", "-c", kvlogFixed, "-seed", "3", "-faults", plan, "-o", filepath.Join(dir, "shrunk.json")},
		{"cause", "-c", kvlogFixed, "-seed", "3", "-faults", plan},
	} {
		_, _, stderr = runCLI(t, args...)
		for _, want := range []string{
			"seedfall " + args[0] + ": warning: " + plan + " was recorded with go1.19, replaying with " + now + ": the guest's runtime differs, the trace may too\n",
			fmt.Sprintf("seedfall %s: warning: %s was saved by seedfall %s (engine behaviour %d), replaying with ", args[0], plan, loud.Seedfall, engine.Behaviour+1),
			fmt.Sprintf("(behaviour %d): the engine runs plans otherwise now", engine.Behaviour),
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", args[0], want, stderr)
			}
		}
	}
}

// TestReplayCommandKeepsThePlan: a failing replay of a plan prints a replay command that
// replays that plan (the seed alone would run the seed's own faults, which may pass).
func TestReplayCommandKeepsThePlan(t *testing.T) {
	plan := filepath.Join("..", "..", "examples", "kvlog", "seed-2.faults.json")
	code, stdout, stderr := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "2", "-q", "-faults", plan)
	if code != exitFail {
		t.Fatalf("exit %d, want %d (kvlog's shrunk plan fails)\n%s\n%s", code, exitFail, stdout, stderr)
	}
	if want := "replay: seedfall replay -c " + kvlogBuggy + " -seed 2 -faults " + plan + "\n"; !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
}
