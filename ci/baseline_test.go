package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/seedfall/seedfall/internal/githubtest"
)

// TestPushUpdatesBaselineAndFix checks the baseline's life on the default branch: new,
// then known (first seen kept, last seen moved), then fixed, then gone from the labels.
func TestPushUpdatesBaselineAndFix(t *testing.T) {
	gh := githubtest.New(t)
	gh.SetBranch("seedfall-baseline", nil)
	in := testInputs(t, "branch:seedfall-baseline:data/baseline.json")
	sig := buggySig(t)
	steps := []struct {
		eng              *fakeEngine
		sha              string
		new, known, fix  string
		status, firstSee string
	}{
		{&fakeEngine{bug: true}, "1111111111111111111111111111111111111111", "1", "0", "0", StatusFailing, "1111111111111111111111111111111111111111"},
		{&fakeEngine{bug: true}, "2222222222222222222222222222222222222222", "0", "1", "0", StatusFailing, "1111111111111111111111111111111111111111"},
		{&fakeEngine{}, "3333333333333333333333333333333333333333", "0", "0", "1", StatusFixed, "1111111111111111111111111111111111111111"},
		{&fakeEngine{}, "4444444444444444444444444444444444444444", "0", "0", "0", StatusFixed, "1111111111111111111111111111111111111111"},
	}
	for i, s := range steps {
		r := runGH(t, gh, "push", pushEvent("refs/heads/main", s.sha), int64(200+i), in, s.eng)
		wantOutputs(t, fmt.Sprintf("push %d", i+1), r.outputs, s.new, s.known, s.fix, map[bool]string{true: "failure", false: "success"}[s.new == "1"])
		raw, ok := gh.File("seedfall-baseline", "data/baseline.json")
		if !ok {
			t.Fatalf("push %d: no baseline", i+1)
		}
		b, err := ParseBaseline("fake", raw)
		must(t, err)
		e := b.Signatures[sig]
		if e == nil || e.Status != s.status || e.FirstSeen != s.firstSee {
			t.Errorf("push %d: entry %+v, want status %s first seen %s", i+1, e, s.status, s.firstSee)
		}
		if i == 2 && e.FixedIn != s.sha {
			t.Errorf("push 3: fixed_in %q, want %q", e.FixedIn, s.sha)
		}
	}
}

// TestBaselineKeysSeedsByGo: a run is deterministic per toolchain, so a signature whose
// seeds pass under another Go release than they were recorded with is not marked
// fixed (the log says why); when it fails again under the new release its seeds are
// replaced by that release's and the entry records it; only then do passing seeds of
// the same release mark it fixed.
func TestBaselineKeysSeedsByGo(t *testing.T) {
	gh := githubtest.New(t)
	gh.SetBranch("seedfall-baseline", nil)
	in := testInputs(t, "branch:seedfall-baseline:data/baseline.json")
	sig := buggySig(t)
	entry := func(step string) *Entry { t.Helper(); return baselineEntry(t, gh, "data/baseline.json", sig, step) }
	push := func(i int, eng *fakeEngine) *ghRun {
		return runGH(t, gh, "push", pushEvent("refs/heads/main", fmt.Sprintf("%040d", i)), int64(300+i), in, eng)
	}
	push(1, &fakeEngine{bug: true, goVersion: "go1.26.8"})
	if e := entry("go1.26.8, failing"); e.Go != "go1.26.8" || e.Status != StatusFailing {
		t.Fatalf("go1.26.8, failing: %+v", e)
	}
	// The same seeds pass under go1.27.3: no evidence of a fix.
	r := push(2, &fakeEngine{goVersion: "go1.27.3"})
	wantOutputs(t, "go1.27.3, passing", r.outputs, "0", "0", "0", "success")
	if e := entry("go1.27.3, passing"); e.Status != StatusFailing || e.Go != "go1.26.8" {
		t.Errorf("go1.27.3, passing: %+v, want still failing, recorded with go1.26.8", e)
	}
	if want := sig + " did not fail, but its seeds were recorded with go1.26.8 and this run's guests are built with go1.27.3: not marked fixed"; !strings.Contains(r.stdout.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, r.stdout.String())
	}
	// It fails again under go1.27.3 (say, on seed 10 only): known, re-recorded with it.
	push(3, &fakeEngine{bug: true, goVersion: "go1.27.3"})
	if e := entry("go1.27.3, failing"); e.Status != StatusFailing || e.Go != "go1.27.3" {
		t.Errorf("go1.27.3, failing: %+v, want failing, recorded with go1.27.3", e)
	}
	// Now passing seeds of the same release are a fix.
	r = push(4, &fakeEngine{goVersion: "go1.27.3"})
	wantOutputs(t, "go1.27.3, fixed", r.outputs, "0", "0", "1", "success")
	if e := entry("go1.27.3, fixed"); e.Status != StatusFixed {
		t.Errorf("go1.27.3, fixed: %+v, want fixed", e)
	}
}

// TestMergeEntryGo: two writers' entries whose seeds were recorded with different Go
// releases do not union their seeds: the later run's release and seeds win; the same
// release unions them.
func TestMergeEntryGo(t *testing.T) {
	theirs := &Entry{Seeds: []uint64{1, 2}, Go: "go1.26.8", LastRun: 5, Status: StatusFailing}
	mine := &Entry{Seeds: []uint64{7}, Go: "go1.27.3", LastRun: 6, Status: StatusFailing}
	if r := mergeEntry(theirs, mine); r.Go != "go1.27.3" || !reflect.DeepEqual(r.Seeds, []uint64{7}) {
		t.Errorf("mine later: %+v, want go1.27.3's seeds [7]", r)
	}
	mine.LastRun = 4
	if r := mergeEntry(theirs, mine); r.Go != "go1.26.8" || !reflect.DeepEqual(r.Seeds, []uint64{1, 2}) {
		t.Errorf("theirs later: %+v, want go1.26.8's seeds [1 2]", r)
	}
	mine.Go = "go1.26.8"
	if r := mergeEntry(theirs, mine); !reflect.DeepEqual(r.Seeds, []uint64{1, 2, 7}) {
		t.Errorf("one release: %+v, want the union [1 2 7]", r)
	}
}

// TestPushToOtherBranchDoesNotWrite: only the default branch writes the baseline.
func TestPushToOtherBranchDoesNotWrite(t *testing.T) {
	gh := githubtest.New(t)
	gh.SetBranch("seedfall-baseline", nil)
	runGH(t, gh, "push", pushEvent("refs/heads/feature", "5555555555555555555555555555555555555555"), 1, testInputs(t, "branch:seedfall-baseline"), &fakeEngine{bug: true})
	if gh.Puts() != 0 {
		t.Errorf("a push to a feature branch wrote the baseline")
	}
}

// TestBaselineCAS: two concurrent writers start from the same baseline; the fake API
// refuses the second PUT (stale SHA, 409), the loser re-reads, merges and retries, and
// both signatures land.
func TestBaselineCAS(t *testing.T) {
	gh := githubtest.New(t)
	start := newBaseline()
	start.Signatures["sig-000000000000"] = &Entry{Reason: "old", Seeds: []uint64{1}, FirstSeen: "s0", LastSeen: "s0", Status: StatusFailing, FirstRun: 1, LastRun: 1}
	data, err := start.marshal()
	must(t, err)
	gh.SetBranch("seedfall-baseline", map[string][]byte{"b.json": data})

	client, err := newClient(gh.URL(), "t", gh.Client())
	must(t, err)
	store := branchStore{Client: client, Owner: "acme", Repo: "store", Branch: "seedfall-baseline", Path: "b.json"}

	// Both writers load before either saves, and the first two PUTs are held until both
	// have arrived, so exactly one of them must lose.
	var loaded, arrived sync.WaitGroup
	loaded.Add(2)
	arrived.Add(2)
	var putMu sync.Mutex
	puts := 0
	gh.BeforePut = func() {
		putMu.Lock()
		puts++
		k := puts
		putMu.Unlock()
		if k <= 2 {
			arrived.Done()
			arrived.Wait()
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, sig := range []string{"sig-aaaaaaaaaaaa", "sig-bbbbbbbbbbbb"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, v, err := store.Load(context.Background())
			loaded.Done()
			if err != nil {
				errs[i] = err
				return
			}
			loaded.Wait()
			b.Signatures[sig] = &Entry{Reason: sig, Seeds: []uint64{uint64(10 + i)}, FirstSeen: sig, LastSeen: sig, Status: StatusFailing, FirstRun: int64(10 + i), LastRun: int64(10 + i)}
			b.Signatures["sig-000000000000"].LastSeen, b.Signatures["sig-000000000000"].LastRun = sig, int64(10+i)
			b.Signatures["sig-000000000000"].Seeds = append(b.Signatures["sig-000000000000"].Seeds, uint64(20+i))
			errs[i] = updateBaseline(context.Background(), store, v, b)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	if gh.Conflicts() == 0 {
		t.Fatal("no write was refused as stale: the test did not exercise compare-and-swap")
	}
	raw, _ := gh.File("seedfall-baseline", "b.json")
	b, err := ParseBaseline("fake", raw)
	must(t, err)
	for _, sig := range []string{"sig-000000000000", "sig-aaaaaaaaaaaa", "sig-bbbbbbbbbbbb"} {
		if b.Signatures[sig] == nil {
			t.Errorf("signature %s lost; baseline:\n%s", sig, raw)
		}
	}
	old := b.Signatures["sig-000000000000"]
	if old.FirstSeen != "s0" || old.LastSeen != "sig-bbbbbbbbbbbb" || !reflect.DeepEqual(old.Seeds, []uint64{1, 20, 21}) {
		t.Errorf("merged entry %+v: want first seen s0, last seen by the later run, seeds 1,20,21", old)
	}
}

// TestFork: a fork PR's token is read-only. Comment and status are skipped with a
// notice, the summary and annotations still appear, and the exit code follows fail-on.
func TestFork(t *testing.T) {
	for _, tc := range []struct {
		failOn string
		code   int
	}{{failOnNew, ExitFailure}, {failOnNever, ExitPass}} {
		t.Run(tc.failOn, func(t *testing.T) {
			gh := githubtest.New(t)
			gh.ReadOnly = true
			in := testInputs(t, "")
			in.FailOn = tc.failOn
			r := runGH(t, gh, "pull_request", prEvent(9, "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5", "stranger/store"), 1, in, &fakeEngine{bug: true})
			if r.code != tc.code {
				t.Errorf("exit %d, want %d", r.code, tc.code)
			}
			out := r.stdout.String()
			if !regexp.MustCompile(`(?m)^::notice::seedfall: the token of a fork pull request is read-only: skipped the PR comment and the commit status`).MatchString(out) {
				t.Errorf("no fork notice:\n%s", out)
			}
			if !strings.Contains(out, "::error title=seedfall new failure::") {
				t.Errorf("no annotation:\n%s", out)
			}
			if strings.Contains(out, "::warning") {
				t.Errorf("a read-only token should not warn:\n%s", out)
			}
			if !strings.Contains(r.summary, buggySig(t)) {
				t.Errorf("summary lacks the signature:\n%s", r.summary)
			}
			if len(gh.MarkerComments(9, CommentMarker)) != 0 || len(gh.Statuses()) != 0 {
				t.Error("a read-only run wrote to the API")
			}
			if r.outputs["new"] != "1" {
				t.Errorf("outputs %v", r.outputs)
			}
		})
	}
}

// TestCorruptBaseline: bad JSON in the baseline file is a warning naming the file and
// the JSON error; the run still reports everything as new.
func TestCorruptBaseline(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "baseline.json")
	must(t, os.WriteFile(path, []byte(`{"version":1,"signatures":{`), 0o644))
	in := testInputs(t, path)
	in.Out = filepath.Join(dir, "out")
	var stdout bytes.Buffer
	code, err := Run(context.Background(), in, Env{}, &fakeEngine{bug: true}, &stdout)
	must(t, err)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d", code, ExitFailure)
	}
	out := stdout.String()
	if !strings.Contains(out, "::warning title=seedfall baseline::baseline "+path+" is unreadable: invalid JSON: unexpected end of JSON input") {
		t.Errorf("no clear warning:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "out", ReportMarkdown))
	must(t, err)
	if !strings.Contains(string(md), buggySig(t)) {
		t.Errorf("report lacks the signature:\n%s", md)
	}
}

// TestLocalFileBaseline: a local run (no GitHub) reads a file baseline but does not
// write it; the same flow with a push to the default branch writes it.
func TestLocalFileBaseline(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.json")
	in := testInputs(t, path)
	in.Out = filepath.Join(dir, "out")
	var stdout bytes.Buffer
	if _, err := Run(context.Background(), in, Env{}, &fakeEngine{bug: true}, &stdout); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a local run wrote the baseline: %v", err)
	}
	ev := filepath.Join(dir, "ev.json")
	data, _ := json.Marshal(map[string]any{"repository": map[string]any{"full_name": "acme/store"}})
	must(t, os.WriteFile(ev, data, 0o644))
	// A scheduled run without a token and GitHub API: the file store needs neither.
	env := Env{EventName: "schedule", EventPath: ev, SHA: "abc", APIURL: "http://127.0.0.1:1"}
	in.Token = ""
	stdout.Reset()
	if _, err := Run(context.Background(), in, env, &fakeEngine{bug: true}, &stdout); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	must(t, err)
	b, err := ParseBaseline(path, raw)
	must(t, err)
	if e := b.Signatures[buggySig(t)]; e == nil || e.FirstSeen != "abc" {
		t.Errorf("baseline after a scheduled run:\n%s", raw)
	}
	if !strings.Contains(stdout.String(), "::notice::seedfall: no token") {
		t.Errorf("want a no-token notice:\n%s", stdout.String())
	}
}

// baselineEntry reads the baseline a run wrote to the fake GitHub's branch at path and
// returns its entry for sig, failing the test (naming step) when either is missing.
func baselineEntry(t *testing.T, gh *githubtest.FakeGitHub, path, sig, step string) *Entry {
	t.Helper()
	raw, ok := gh.File("seedfall-baseline", path)
	if !ok {
		t.Fatalf("%s: no baseline", step)
	}
	b, err := ParseBaseline("fake", raw)
	must(t, err)
	if b.Signatures[sig] == nil {
		t.Fatalf("%s: no entry for %s", step, sig)
	}
	return b.Signatures[sig]
}
