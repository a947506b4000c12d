package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/githubtest"
	"github.com/seedfall/seedfall/report"
)

// gitRepo makes a temporary git repository with two commits and returns its
// directory and the two commit hashes, oldest first.
func gitRepo(t *testing.T) (dir, c1, c2 string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir = t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(dir, "seedfall.json"), []byte(`{"v": 1}`), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "v1")
	c1 = git("rev-parse", "HEAD")
	must(t, os.WriteFile(filepath.Join(dir, "seedfall.json"), []byte(`{"v": 2}`), 0o644))
	git("commit", "-q", "-am", "v2")
	c2 = git("rev-parse", "HEAD")
	return dir, c1, c2
}

// upgradeRun runs the ci flow against a fake GitHub for one event with input
// upgrade-from, the config in repo. It returns Run's code and error, the stdout, the
// sticky comment (or "") and the HTML report (or "").
func upgradeRun(t *testing.T, repo, event string, payload map[string]any, from string, eng Engine) (code int, err error, stdout, comment, html string) {
	t.Helper()
	gh := githubtest.New(t)
	dir := t.TempDir()
	data, jerr := json.Marshal(payload)
	must(t, jerr)
	evPath := filepath.Join(dir, "event.json")
	must(t, os.WriteFile(evPath, data, 0o644))
	in, perr := ParseInputs([]string{"-c", filepath.Join(repo, "seedfall.json"), "-seeds", "1-20", "-token", "t0ken", "-upgrade-from", from, "-out", filepath.Join(dir, "out")}, nil, nil)
	must(t, perr)
	env := Env{
		EventName: event, EventPath: evPath, Repository: "acme/store",
		SHA: "ffffffffffffffffffffffffffffffffffffffff", Ref: "refs/pull/7/merge",
		APIURL: gh.URL(), ServerURL: "https://github.example", RunID: 5,
		OutputPath: filepath.Join(dir, "output"), SummaryPath: filepath.Join(dir, "summary.md"),
		HTTPClient: gh.Client(),
	}
	var out bytes.Buffer
	code, err = Run(context.Background(), in, env, eng, &out)
	if cs := gh.MarkerComments(7, CommentMarker); len(cs) == 1 {
		// As GitHub renders it: Markdown's backslash escapes dropped.
		comment = strings.ReplaceAll(cs[0].Body, "\\", "")
	}
	if b, rerr := os.ReadFile(filepath.Join(dir, "out", ReportHTML)); rerr == nil {
		html = string(b)
	}
	return code, err, out.String(), comment, html
}

func prEventWithBase(head, base string) map[string]any {
	ev := prEvent(7, head, "acme/store")
	ev["pull_request"].(map[string]any)["base"] = map[string]any{"sha": base, "ref": "main"}
	return ev
}

// TestUpgradeFromInput (issue 28, point 2): input upgrade-from resolves base to the pull
// request's base commit, or for a push to the commit before it, checks it is a commit
// of the repository (a real temporary one), hands it to the engine, and the comment,
// the HTML report and the replay commands say which build wrote and which read.
func TestUpgradeFromInput(t *testing.T) {
	repo, c1, c2 := gitRepo(t)
	const head = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	server := []UpgradeNode{{Name: "server", Mode: "once"}}

	t.Run("pull request base", func(t *testing.T) {
		eng := &fakeEngine{bug: true, upgrades: server}
		code, err, stdout, comment, html := upgradeRun(t, repo, "pull_request", prEventWithBase(head, c1), "base", eng)
		if err != nil || code != ExitFailure {
			t.Fatalf("exit %d, %v; want %d\n%s", code, err, ExitFailure, stdout)
		}
		if len(eng.upgradedFrom) != 1 || eng.upgradedFrom[0] != c1 {
			t.Fatalf("engine upgraded from %q, want the base commit %s", eng.upgradedFrom, c1)
		}
		want := "upgrade (server): data written by base " + c1[:7] + ", read by this PR's build a1a1a1a"
		for name, text := range map[string]string{"stdout": stdout, "comment": comment, "report.html": html} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, text)
			}
		}
		if replay := "seedfall replay -c " + filepath.Join(repo, "seedfall.json") + " -seed 3 -upgrade-from " + c1; !strings.Contains(comment, replay) {
			t.Errorf("the comment lacks the replay command %q:\n%s", replay, comment)
		}
	})

	t.Run("push before, alternate", func(t *testing.T) {
		eng := &fakeEngine{upgrades: []UpgradeNode{{Name: "a", Mode: "once"}, {Name: "b", Mode: "alternate"}}}
		ev := pushEvent("refs/heads/feature", c2)
		ev["before"] = c1
		code, err, stdout, _, html := upgradeRun(t, repo, "push", ev, "base", eng)
		if err != nil || code != ExitPass {
			t.Fatalf("exit %d, %v; want %d\n%s", code, err, ExitPass, stdout)
		}
		if len(eng.upgradedFrom) != 1 || eng.upgradedFrom[0] != c1 {
			t.Fatalf("engine upgraded from %q, want the push's before %s", eng.upgradedFrom, c1)
		}
		for _, want := range []string{
			"upgrade (a): data written by the previous commit " + c1[:7] + ", read by this push's build " + c2[:7],
			"upgrade and downgrade (b): data written by the previous commit " + c1[:7] + ", read by this push's build " + c2[:7] + ", and back at every restart",
		} {
			if !strings.Contains(stdout, want) || !strings.Contains(html, want) {
				t.Errorf("stdout or report.html lacks %q:\n%s", want, stdout)
			}
		}
	})

	t.Run("explicit revision", func(t *testing.T) {
		eng := &fakeEngine{upgrades: server}
		_, err, stdout, _, _ := upgradeRun(t, repo, "pull_request", prEventWithBase(head, c2), "main~1", eng)
		if err != nil || len(eng.upgradedFrom) != 1 || eng.upgradedFrom[0] != c1 {
			t.Fatalf("error %v, engine upgraded from %q; want main~1 resolved to %s\n%s", err, eng.upgradedFrom, c1, stdout)
		}
		if want := "data written by main~1 " + c1[:7]; !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	})

	// Negative control: without the input the engine is not asked and nothing says upgrade.
	t.Run("without the input", func(t *testing.T) {
		eng := &fakeEngine{bug: true, upgrades: server}
		code, err, _, comment, _ := upgradeRun(t, repo, "pull_request", prEventWithBase(head, c1), "", eng)
		if err != nil || code != ExitFailure || len(eng.upgradedFrom) != 0 || strings.Contains(comment, "upgrade") || strings.Contains(comment, "-upgrade-from") {
			t.Fatalf("exit %d, %v, engine upgraded from %q; want no upgrade anywhere:\n%s", code, err, eng.upgradedFrom, comment)
		}
	})

	for _, tc := range []struct {
		name, event string
		payload     map[string]any
		from        string
		upgrades    []UpgradeNode
		want        string
	}{
		{"base not hex", "pull_request", prEventWithBase(head, "main; rm -rf /"), "base", server,
			`input upgrade-from: base: the event's pull_request.base.sha "main; rm -rf /" is not a commit hash`},
		{"base short", "pull_request", prEventWithBase(head, c1[:12]), "base", server, "is not a commit hash"},
		{"base missing from the repository", "pull_request", prEventWithBase(head, strings.Repeat("e", 40)), "base", server,
			"input upgrade-from: base (" + strings.Repeat("e", 40) + ") is not a commit of the repository at " + repo},
		{"no base in the event", "pull_request", prEvent(7, head, "acme/store"), "base", server,
			"input upgrade-from: base: the pull_request event has no pull_request.base.sha"},
		{"new branch", "push", map[string]any{"ref": "refs/heads/x", "after": c2, "before": strings.Repeat("0", 40)}, "base", server,
			"this push created the branch"},
		{"schedule", "schedule", map[string]any{}, "base", server, "schedule has neither: name a revision"},
		{"missing revision", "pull_request", prEventWithBase(head, c1), "nosuchbranch", server,
			"input upgrade-from: nosuchbranch is not a commit of the repository at " + repo},
		{"config without upgrade", "pull_request", prEventWithBase(head, c1), "base", nil,
			`input upgrade-from: ` + filepath.Join(repo, "seedfall.json") + `: upgrade-from "` + c1 + `": no node has an "upgrade" option`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := &fakeEngine{bug: true, upgrades: tc.upgrades}
			code, err, stdout, comment, _ := upgradeRun(t, repo, tc.event, tc.payload, tc.from, eng)
			if err == nil || code != ExitError || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("exit %d, error %v; want exit %d and an error containing %q\n%s", code, err, ExitError, tc.want, stdout)
			}
			if len(eng.swept) != 0 || comment != "" {
				t.Errorf("swept %v and commented %q after the error: the run must stop first", eng.swept, comment)
			}
			if strings.Contains(tc.want, "is not a commit of the repository") && !strings.Contains(err.Error(), "fetch-depth: 0") {
				t.Errorf("error %v: want the shallow-checkout hint (fetch-depth: 0)", err)
			}
		})
	}
}

// TestUpgradeFromInputRefused: values git could take for an option, or that no log line
// could show, are refused as inputs, before any git command runs.
func TestUpgradeFromInputRefused(t *testing.T) {
	for _, v := range []string{"-n", "--output=/etc/passwd", "main\nmain", "a b", strings.Repeat("a", 300)} {
		_, err := ParseInputs([]string{"-upgrade-from", v}, nil, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "input upgrade-from: ") {
			t.Errorf("upgrade-from %q: error %v, want one naming the input", v, err)
		}
	}
	for _, v := range []string{"", "base", "main", "v1.2.0", "HEAD~1", "3f2a1c0"} {
		in, err := ParseInputs([]string{"-upgrade-from", v}, nil, nil)
		if err != nil || in.UpgradeFrom != v {
			t.Errorf("upgrade-from %q: %v, UpgradeFrom %q", v, err, in.UpgradeFrom)
		}
	}
	in, err := ParseInputs(nil, func(k string) string {
		if k == "INPUT_UPGRADE-FROM" {
			return "base"
		}
		return ""
	}, nil)
	if err != nil || in.UpgradeFrom != upgradeBase {
		t.Errorf("INPUT_UPGRADE-FROM=base: %v, UpgradeFrom %q", err, in.UpgradeFrom)
	}
}

// TestArtifactCarriesUpgradeAndShrunkFailure: the fork recipe's publisher posts what the
// sweep saw: the upgrade line and the minimal schedule's own failure survive the
// artifact, and a negative shrunk time is refused like any other.
func TestArtifactCarriesUpgradeAndShrunkFailure(t *testing.T) {
	d := &report.Data{
		Summary: report.Summary{Config: "seedfall.json", Seeds: "1-2", Total: 2, Passed: 1, Failed: 1, New: 1,
			Upgrade: "upgrade (server): data written by base 3f2a1c0, read by this PR's build 9e8d7c6"},
		Groups: []report.Group{{Signature: "sig-0123456789ab", Status: report.StatusNew, Kind: "always", Reason: "k0=v16",
			Seeds: []uint64{2}, AtNS: 3_573_913_455, ShrunkReason: "k0=v48", ShrunkAtNS: 11_399_799_676,
			Shrunk: []engine.Fault{{AtNS: 1, Kind: engine.FaultCrash, Node: "server"}}}},
	}
	a := newArtifact(7, strings.Repeat("a", 40), d, nil)
	data, err := json.Marshal(a)
	must(t, err)
	b, err := parseArtifact("publish.json", data)
	must(t, err)
	got, _ := b.data(failOnNew, strings.Repeat("a", 40), "")
	if got.Summary.Upgrade != d.Summary.Upgrade || got.Groups[0].ShrunkReason != "k0=v48" || got.Groups[0].ShrunkAtNS != 11_399_799_676 {
		t.Errorf("after the artifact: upgrade %q, shrunk %q at %d", got.Summary.Upgrade, got.Groups[0].ShrunkReason, got.Groups[0].ShrunkAtNS)
	}
	a.Groups[0].ShrunkAtNS = -1
	data, err = json.Marshal(a)
	must(t, err)
	if _, err := parseArtifact("publish.json", data); err == nil || !strings.Contains(err.Error(), "groups[0].shrunk_at_ns") {
		t.Errorf("a negative shrunk_at_ns: %v, want an error naming the field", err)
	}
}
