package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/githubtest"
)

// locEngine is fakeEngine with guest positions in its traces: every failing run's
// trace ends with a disk write at store/server/log.go (a file of the test workspace's
// module example.com/store), on line 88 for the lost-write bug and 100+n for the n-th
// extra signature, and a client line in a dependency.
type locEngine struct{ fakeEngine }

func (e *locEngine) Sweep(ctx context.Context, configPath string, seeds []uint64) ([]engine.Result, error) {
	rs, err := e.fakeEngine.Sweep(ctx, configPath, seeds)
	for i := range rs {
		if rs[i].Verdict != engine.VerdictFail {
			continue
		}
		line := 88
		if strings.HasPrefix(rs[i].Failure.Reason, "server panicked") {
			line = 100 + int(rs[i].Seed/11)
		}
		rs[i].Trace = append(rs[i].Trace,
			fmt.Sprintf("1.5s server#2 disk #7 write /data/log @0+10 at store/server/log.go:%d", line),
			"1.6s client#1 dial server:7000 at golang.org/x/net/dial.go:12")
	}
	return rs, err
}

// workspace makes a repository checkout: go.mod of module example.com/store,
// server/log.go, and seedfall.json.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/store\n\ngo 1.26\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, "server"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "server", "log.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "seedfall.json"), []byte("{}\n"), 0o644))
	return ws
}

const (
	forkSHA = "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"
	forkPR  = 7
)

// forkSweep plays the pull_request workflow of a fork: the read-only token posts
// nothing, and the publish artifact is left in the report directory. It returns the
// artifact's bytes.
func forkSweep(t *testing.T, gh *githubtest.FakeGitHub, eng Engine, seeds string) []byte {
	t.Helper()
	gh.ReadOnly = true
	defer func() { gh.ReadOnly = false }()
	ws := workspace(t)
	dir := t.TempDir()
	ev := filepath.Join(dir, "event.json")
	data, _ := json.Marshal(prEvent(forkPR, forkSHA, "stranger/store"))
	must(t, os.WriteFile(ev, data, 0o644))
	in, err := ParseInputs([]string{"-c", filepath.Join(ws, "seedfall.json"), "-seeds", seeds, "-shrink-budget", "1m", "-token", "read-only"}, nil, nil)
	must(t, err)
	in.Out = filepath.Join(dir, "seedfall-report")
	env := Env{EventName: "pull_request", EventPath: ev, Repository: "acme/store", SHA: "ffffffffffffffffffffffffffffffffffffffff",
		Ref: "refs/pull/7/merge", APIURL: gh.URL(), HTTPClient: gh.Client(), Workspace: ws}
	var out bytes.Buffer
	code, err := Run(context.Background(), in, env, eng, &out)
	if err != nil || code != ExitFailure {
		t.Fatalf("sweep: exit %d, %v\n%s", code, err, out.String())
	}
	if gh.Writes() != 0 {
		t.Fatalf("the fork's sweep wrote %d times to the API", gh.Writes())
	}
	if !strings.Contains(out.String(), "::error file=server/log.go,line=88,title=seedfall new failure::") {
		t.Errorf("sweep: no workflow-command annotation at server/log.go:88:\n%s", out.String())
	}
	art, err := os.ReadFile(filepath.Join(in.Out, artifactFile))
	must(t, err)
	return art
}

// publish plays the workflow_run workflow: the artifact (as downloaded) in its own
// directory, the event naming the fork's run. It returns the exit code, the error and
// the output.
func publish(t *testing.T, gh *githubtest.FakeGitHub, artifact []byte, mutate func(ev map[string]any)) (int, error, string) {
	t.Helper()
	dir := t.TempDir()
	art := filepath.Join(dir, "seedfall-publish")
	must(t, os.MkdirAll(art, 0o755))
	must(t, os.WriteFile(filepath.Join(art, artifactFile), artifact, 0o644))
	payload := map[string]any{
		"action": "completed",
		"workflow_run": map[string]any{
			"id": 555, "event": "pull_request", "head_sha": forkSHA, "head_branch": "feature",
			"html_url": "https://github.example/acme/store/actions/runs/555", "pull_requests": []any{},
			"head_repository": map[string]any{"full_name": "stranger/store", "owner": map[string]any{"login": "stranger"}},
		},
		"repository": map[string]any{"full_name": "acme/store", "default_branch": "main"},
	}
	if mutate != nil {
		mutate(payload)
	}
	data, _ := json.Marshal(payload)
	ev := filepath.Join(dir, "event.json")
	must(t, os.WriteFile(ev, data, 0o644))
	in, err := ParseInputs([]string{"-publish", art, "-token", "write-token"}, nil, nil)
	must(t, err)
	in.Out = filepath.Join(dir, "out")
	env := Env{EventName: "workflow_run", EventPath: ev, Repository: "acme/store", SHA: "0123456789012345678901234567890123456789",
		Ref: "refs/heads/main", APIURL: gh.URL(), HTTPClient: gh.Client(), Workspace: t.TempDir()}
	var out bytes.Buffer
	code, err := Run(context.Background(), in, env, &fakeEngine{}, &out)
	return code, err, out.String()
}

// TestForkPullRequest plays a fork pull request end to end through the two-workflow
// recipe: the sweep job (read-only token) posts nothing and leaves the artifact; the
// publisher (workflow_run, write token, no checkout) finds the pull request by the
// event's head, comments, and creates the check run with every annotation, in
// batches of 50.
func TestForkPullRequest(t *testing.T) {
	gh := githubtest.New(t)
	gh.AddPull(githubtest.Pull{Number: 3, HeadOwner: "someone", HeadBranch: "feature", HeadSHA: "1111111111111111111111111111111111111111"})
	gh.AddPull(githubtest.Pull{Number: forkPR, HeadOwner: "stranger", HeadBranch: "feature", HeadSHA: forkSHA})
	eng := &locEngine{fakeEngine{bug: true, extra: 60}}
	art := forkSweep(t, gh, eng, "1-700")

	code, err, out := publish(t, gh, art, nil)
	if err != nil || code != ExitPass {
		t.Fatalf("publish: exit %d, %v\n%s", code, err, out)
	}
	cs := gh.MarkerComments(forkPR, CommentMarker)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, buggySig(t)) || !strings.Contains(cs[0].Body, "actions/runs/555") {
		t.Fatalf("publish: comments %v, want one sticky comment with the signature and the run's link", cs)
	}
	if len(gh.Comments(3)) != 0 {
		t.Error("publish: commented on another pull request")
	}
	ck := gh.LastCheck(t)
	if ck.Name != "seedfall" || ck.HeadSHA != forkSHA || ck.Conclusion != "failure" || !strings.Contains(ck.Summary, buggySig(t)) {
		t.Errorf("check run %+v", ck)
	}
	var a0 artifact
	must(t, json.Unmarshal(art, &a0))
	if len(a0.Groups) <= maxAnnotationsPerRequest || len(ck.Annotations) != len(a0.Groups) || ck.Requests != 2 {
		t.Fatalf("check run: %d annotations in %d requests, want %d (one per signature, more than 50) in 2 (batches of 50)", len(ck.Annotations), ck.Requests, len(a0.Groups))
	}
	a := ck.Annotations[0]
	if a.Path != "server/log.go" || a.StartLine != 88 || a.AnnotationLevel != "failure" || !strings.Contains(a.Message, "acknowledged write lost") {
		t.Errorf("first annotation %+v, want the lost write at server/log.go:88", a)
	}
	if len(gh.Statuses()) != 0 {
		t.Error("a commit status was set although the check run was created")
	}
	if !strings.Contains(out, "publishing run 555 for PR #7") {
		t.Errorf("publish output:\n%s", out)
	}
	// The sweep's crash-state search (the fake's: complete, nothing found) reaches the
	// published comment through the artifact.
	if !strings.Contains(strings.ReplaceAll(cs[0].Body, "\\", ""), "crash-state search of seed 1: 40 states, 0 distinct failures") {
		t.Errorf("the published comment lacks the crash-state search's line:\n%s", cs[0].Body)
	}
}

// TestPublishRefusesHostileArtifacts: each hostile or broken artifact is refused with a
// message naming the file and the field, and nothing is posted.
func TestPublishRefusesHostileArtifacts(t *testing.T) {
	gh0 := githubtest.New(t)
	good := forkSweep(t, gh0, &locEngine{fakeEngine{bug: true}}, "1-20")
	edit := func(f func(a map[string]any)) []byte {
		var a map[string]any
		must(t, json.Unmarshal(good, &a))
		f(a)
		b, err := json.Marshal(a)
		must(t, err)
		return b
	}
	group := func(a map[string]any) map[string]any { return a["groups"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		name     string
		artifact []byte
		event    func(map[string]any)
		want     string
	}{
		{"forged PR number", edit(func(a map[string]any) { a["pr"] = 8 }), nil, "field pr: #8, but the workflow_run event is for #7"},
		{"forged head SHA", edit(func(a map[string]any) { a["head_sha"] = strings.Repeat("e", 40) }), nil, "field head_sha: eeeeeee"},
		{"event for another head", good, func(ev map[string]any) {
			ev["workflow_run"].(map[string]any)["head_sha"] = strings.Repeat("d", 40)
		}, "no open pull request from stranger:feature has head ddddddd"},
		{"oversized", append(append([]byte(nil), good...), bytes.Repeat([]byte(" "), artifactLimit)...), nil, "more than the limit of 1048576"},
		{"not JSON", []byte("PK\x03\x04 a zip, not the file"), nil, "not a seedfall publish artifact"},
		{"unknown field", edit(func(a map[string]any) { a["body"] = "## pwned" }), nil, `unknown field "body"`},
		{"wrong version", edit(func(a map[string]any) { a["version"] = 2 }), nil, "field version: 2, want 1"},
		{"counts do not add up", edit(func(a map[string]any) { a["summary"].(map[string]any)["new"] = 0 }), nil, "field summary: counts 0 new"},
		{"HTML in a reason", edit(func(a map[string]any) { group(a)["reason"] = `lost <img src=x onerror="alert(1)">` }), nil, "field groups[0].reason: holds HTML markup"},
		{"Markdown link in a reason", edit(func(a map[string]any) { group(a)["reason"] = "lost: [click here](https://evil.example)" }), nil, "field groups[0].reason: holds Markdown link"},
		{"comment marker in a reason", edit(func(a map[string]any) { group(a)["reason"] = "lost " + CommentMarker }), nil, "field groups[0].reason: holds seedfall's comment marker"},
		{"newline in a replay command", edit(func(a map[string]any) { group(a)["replay"] = "seedfall replay\n\n# Approved" }), nil, "field groups[0].replay: holds the control character U+000A"},
		{"path outside the repository", edit(func(a map[string]any) { group(a)["location"] = map[string]any{"path": "../../etc/passwd", "line": 1} }), nil, "field groups[0].location.path"},
		{"bad signature", edit(func(a map[string]any) { group(a)["signature"] = "sig-`x`" }), nil, "field groups[0].signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh := githubtest.New(t)
			gh.AddPull(githubtest.Pull{Number: forkPR, HeadOwner: "stranger", HeadBranch: "feature", HeadSHA: forkSHA})
			code, err, out := publish(t, gh, tc.artifact, tc.event)
			if err == nil || code != ExitError {
				t.Fatalf("accepted: exit %d\n%s", code, out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if tc.event == nil && !regexp.MustCompile(`artifact \S+publish\.json refused: .*; nothing was posted`).MatchString(err.Error()) {
				t.Errorf("error %q does not name the artifact file", err)
			}
			if gh.Writes() != 0 || len(gh.Comments(forkPR)) != 0 || len(gh.CheckRuns()) != 0 {
				t.Errorf("a refused artifact posted: %d writes", gh.Writes())
			}
		})
	}

	// Negative control: the unedited artifact is published, and guest text that is not
	// markup stays inside code spans.
	gh := githubtest.New(t)
	gh.AddPull(githubtest.Pull{Number: forkPR, HeadOwner: "stranger", HeadBranch: "feature", HeadSHA: forkSHA})
	odd := edit(func(a map[string]any) { group(a)["reason"] = "lost *k3* _v9_ @octocat #12, server answers <nil>" })
	if code, err, out := publish(t, gh, odd, nil); err != nil || code != ExitPass {
		t.Fatalf("publish: exit %d, %v\n%s", code, err, out)
	}
	cs := gh.MarkerComments(forkPR, CommentMarker)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "`lost *k3* _v9_ @octocat #12, server answers <nil>`") {
		t.Errorf("comment does not show the reason in a code span: %v", cs)
	}
}

// TestCheckRunFallsBackToStatus: a token without checks: write gets the commit status.
func TestCheckRunFallsBackToStatus(t *testing.T) {
	gh := githubtest.New(t)
	gh.NoChecks = true
	r := runGH(t, gh, "pull_request", prEvent(7, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "acme/store"), 1, testInputs(t, ""), &fakeEngine{bug: true})
	if len(gh.CheckRuns()) != 0 {
		t.Fatal("a check run was created without checks: write")
	}
	if st := gh.LastStatus(t); st.State != "failure" || st.Context != "seedfall" {
		t.Errorf("status %+v, want failure", st)
	}
	if !strings.Contains(r.stdout.String(), "setting the commit status instead") {
		t.Errorf("no word about the fallback:\n%s", r.stdout.String())
	}
	if strings.Contains(r.stdout.String(), "::warning") {
		t.Errorf("a missing checks: write should not warn:\n%s", r.stdout.String())
	}
}

// TestPublishFromEventPullRequests: for a pull request from a branch of the repository
// the event lists the pull request, and no lookup is needed; a symlinked artifact file
// is refused.
func TestPublishFromEventPullRequests(t *testing.T) {
	gh0 := githubtest.New(t)
	art := forkSweep(t, gh0, &locEngine{fakeEngine{bug: true}}, "1-20")
	gh := githubtest.New(t) // no pull requests to list: a lookup would find none
	listed := func(ev map[string]any) {
		ev["workflow_run"].(map[string]any)["pull_requests"] = []any{
			map[string]any{"number": forkPR, "head": map[string]any{"sha": forkSHA}},
		}
	}
	if code, err, out := publish(t, gh, art, listed); err != nil || code != ExitPass {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if len(gh.MarkerComments(forkPR, CommentMarker)) != 1 || len(gh.CheckRuns()) != 1 {
		t.Errorf("comments %v, check runs %v", gh.Comments(forkPR), gh.CheckRuns())
	}

	// A symlink in place of publish.json (pointing at any file of the runner).
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.json")
	must(t, os.WriteFile(target, art, 0o644))
	link := filepath.Join(dir, "art")
	must(t, os.MkdirAll(link, 0o755))
	if err := os.Symlink(target, filepath.Join(link, artifactFile)); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if _, err := readArtifact(link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlinked artifact: %v, want refused as not a regular file", err)
	}
}
