package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/ci"
	"github.com/seedfall/seedfall/internal/cachedir"
	"github.com/seedfall/seedfall/internal/githubtest"
)

// upgradeCIServer prints what earlier incarnations left in /data/log and appends its
// own version. Its first incarnation exits (a fail-stop restart follows); version v2
// cannot read v1's record and exits with code 2.
const upgradeCIServer = `package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	old, _ := os.ReadFile("/data/log")
	fmt.Printf("server %s found %q\n", version, old)
	if version == "v2" && strings.Contains(string(old), "v1;") {
		fmt.Println("server v2 cannot read format v1")
		os.Exit(2)
	}
	os.MkdirAll("/data", 0o755)
	f, err := os.OpenFile("/data/log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		panic(err)
	}
	f.WriteString(version + ";")
	if err := f.Sync(); err != nil {
		panic(err)
	}
	if len(old) == 0 {
		os.Exit(1)
	}
	for {
		time.Sleep(time.Second)
	}
}
`

// TestCIUpgradeFromBase (issue 28, point 2): the real `seedfall ci` on a pull request
// of a temporary git repository whose base commit's server writes a format the head's
// server cannot read. The config's own upgrade (from the head itself) passes; with
// upgrade-from: base the first incarnation runs the base commit's build, built from a
// git archive of the event's base SHA, and the restart on this PR's build fails. The
// comment and the report say which build wrote and which read, and the printed replay
// command reproduces the failure.
func TestCIUpgradeFromBase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds guests for wasip1")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("go.mod", "module example.com/up\n\ngo 1.21\n")
	write("server/main.go", upgradeCIServer)
	write("server/version.go", "package main\n\nconst version = \"v1\"\n")
	write("client/main.go", "package main\n\nimport \"time\"\n\nfunc main() { time.Sleep(3 * time.Second) }\n")
	write("sim/seedfall.json", `{
  "nodes": [{"name": "server", "pkg": "../server", "on_exit": "restart", "max_restarts": 1,
             "upgrade": {"from": "git:HEAD"}}],
  "workload": {"name": "client", "pkg": "../client"},
  "faults": {"max_faults": 0}
}`)
	git("add", "-A")
	git("commit", "-q", "-m", "v1")
	base := git("rev-parse", "HEAD")
	write("server/version.go", "package main\n\nconst version = \"v2\"\n")
	git("commit", "-q", "-am", "v2: format 2")
	head := git("rev-parse", "HEAD")
	t.Cleanup(func() {
		for _, c := range []string{base, head} {
			os.RemoveAll(filepath.Join(cachedir.Dir(), "revisions", c))
		}
	})
	config := filepath.Join(repo, "sim", "seedfall.json")

	var actionOut string // the out directory of the last sweep
	sweep := func(step string, extra ...string) (code int, stdout, stderr, comment, html string) {
		t.Helper()
		gh := githubtest.New(t)
		dir := t.TempDir()
		ev := ciPREvent(head)
		ev["pull_request"].(map[string]any)["base"] = map[string]any{"ref": "main", "sha": base, "repo": map[string]any{"full_name": ciRepo}}
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		evPath := filepath.Join(dir, "event.json")
		if err := os.WriteFile(evPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{
			"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": evPath,
			"GITHUB_REPOSITORY": ciRepo, "GITHUB_API_URL": gh.URL(), "GITHUB_SERVER_URL": "https://github.example",
			"GITHUB_OUTPUT": "", "GITHUB_STEP_SUMMARY": "", "GITHUB_TOKEN": "fake-token",
			"GITHUB_SHA": head, "GITHUB_REF": "refs/pull/7/merge", "GITHUB_RUN_ID": "9", "GITHUB_WORKSPACE": repo,
		} {
			t.Setenv(k, v)
		}
		out := filepath.Join(dir, "out")
		actionOut = out
		args := append([]string{"ci", "-c", config, "-seeds", "1-2", "-shrink-budget", "0s", "-out", out}, extra...)
		code, stdout, stderr = runCLI(t, args...)
		if cs := gh.MarkerComments(ciPR, ci.CommentMarker); len(cs) == 1 {
			comment = strings.ReplaceAll(cs[0].Body, `\`, "") // as GitHub renders it
		}
		b, _ := os.ReadFile(filepath.Join(out, ci.ReportHTML))
		return code, stdout, stderr, comment, string(b)
	}

	// Negative control: the config's own upgrade is from the head itself, which reads
	// its own format.
	if code, stdout, stderr, comment, _ := sweep("without upgrade-from"); code != exitPass || strings.Contains(comment, "upgrade (") {
		t.Fatalf("without upgrade-from: exit %d, want %d and no upgrade line\nstdout:\n%s\nstderr:\n%s\ncomment:\n%s", code, exitPass, stdout, tail(stderr, 2000), comment)
	}

	code, stdout, stderr, comment, html := sweep("upgrade-from base", "-upgrade-from", "base")
	if code != exitFail {
		t.Fatalf("upgrade-from base: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, stdout, tail(stderr, 3000))
	}
	if !strings.Contains(stderr, "building server's old build (git:"+base+")") {
		t.Errorf("the old build was not built from the base commit %s:\n%s", base, tail(stderr, 2000))
	}
	want := fmt.Sprintf("upgrade (server): data written by base %s, read by this PR's build %s", base[:7], head[:7])
	for name, text := range map[string]string{"stdout": stdout, "comment": comment, "report.html": html} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", name, want, text)
		}
	}
	m := regexp.MustCompile(`seedfall replay -c (\S+) -seed (\d+) -upgrade-from ([0-9a-f]{40})`).FindStringSubmatch(comment)
	if m == nil || m[3] != base {
		t.Fatalf("the comment has no replay command naming the base commit %s:\n%s", base, comment)
	}
	// The printed command, run as printed, reproduces the failure on the two builds.
	rcode, rout, rerr := runCLI(t, "replay", "-c", m[1], "-seed", m[2], "-upgrade-from", m[3])
	if rcode != exitFail || !strings.Contains(rout, "server v2 cannot read format v1") || !strings.Contains(rout, "-upgrade-from "+base) {
		t.Errorf("replay as printed: exit %d, want %d with v2 failing on v1's data and the flag in its own replay line\nstdout:\n%s\nstderr:\n%s", rcode, exitFail, tail(rout, 3000), tail(rerr, 1000))
	}
	// Without the flag the same replay runs the config's own builds and passes.
	if rcode, rout, _ := runCLI(t, "replay", "-c", m[1], "-seed", m[2], "-q"); rcode != exitPass {
		t.Errorf("replay without -upgrade-from: exit %d, want %d\n%s", rcode, exitPass, tail(rout, 2000))
	}
	// Every command that runs the config takes the flag (issue 49): run and shrink
	// fail on the two builds and print replay commands that keep it; cause explains the
	// failing seed; crashes probes the run on the two builds. Without it, run passes.
	flag := "-upgrade-from " + base
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "-c", m[1], "-seeds", m[2], "-q", "-workers", "1"}, []string{"server v2 cannot read format v1", "seedfall replay -c " + m[1] + " -seed " + m[2] + " " + flag}},
		{[]string{"shrink", "-c", m[1], "-seed", m[2], "-o", filepath.Join(t.TempDir(), "plan.json")}, []string{"server v2 cannot read format v1", flag}},
		{[]string{"cause", "-c", m[1], "-seed", m[2]}, []string{"server v2 cannot read format v1"}},
		{[]string{"crashes", "-c", m[1], "-seed", m[2], "-ops", "1-2", "-out", t.TempDir()}, []string{"node server", "note: the seed's own run is fail without these crashes"}},
	} {
		code, out, errOut := runCLI(t, append(c.args, "-upgrade-from", base)...)
		if code == exitUsage {
			t.Errorf("%s -upgrade-from: exit %d (usage or error)\nstdout:\n%s\nstderr:\n%s", c.args[0], code, tail(out, 2000), tail(errOut, 2000))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s -upgrade-from: output lacks %q\n%s", c.args[0], w, tail(out, 3000))
			}
		}
	}
	if code, out, _ := runCLI(t, "run", "-c", m[1], "-seeds", m[2], "-q", "-workers", "1"); code != exitPass {
		t.Errorf("run without -upgrade-from: exit %d, want %d\n%s", code, exitPass, tail(out, 2000))
	}
	if _, out, _ := runCLI(t, "crashes", "-c", m[1], "-seed", m[2], "-ops", "1-2", "-out", t.TempDir()); strings.Contains(out, "own run is fail") {
		t.Errorf("crashes without -upgrade-from: the seed's own run fails\n%s", tail(out, 2000))
	}

	// The upgrade line survives a results file (issue 49): seedfall report renders it
	// from run -out's results and from the Action's results.jsonl, and merge keeps it;
	// results of two sweeps with different upgrades are refused.
	dir := t.TempDir()
	res := func(name string, args ...string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if code, out, errOut := runCLI(t, append([]string{"run", "-c", m[1], "-q", "-workers", "1", "-out", p}, args...)...); code == exitUsage {
			t.Fatalf("run -out %s: exit %d\n%s\n%s", name, code, out, errOut)
		}
		return p
	}
	one, two := res("one.jsonl", "-seeds", "1", "-upgrade-from", base), res("two.jsonl", "-seeds", "2", "-upgrade-from", base)
	plain := res("plain.jsonl", "-seeds", "2")
	merged := filepath.Join(dir, "merged.jsonl")
	if code, out, errOut := runCLI(t, "merge", "-o", merged, one, two); code != exitPass {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	line := "upgrade (server): data written by " + base + ", read by this build"
	for _, in := range []string{one, merged, filepath.Join(actionOut, ci.ResultsJSONL)} {
		if _, err := os.Stat(in); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		rdir := t.TempDir()
		runCLI(t, "report", "-in", in, "-out", rdir)
		md, err := os.ReadFile(filepath.Join(rdir, ci.ReportMarkdown))
		want := line
		if strings.HasSuffix(in, ci.ResultsJSONL) {
			want = fmt.Sprintf("upgrade (server): data written by base %s, read by this PR's build %s", base[:7], head[:7])
		}
		if err != nil || !strings.Contains(strings.ReplaceAll(string(md), `\`, ""), want) {
			t.Errorf("report of %s lacks %q (%v):\n%s", in, want, err, md)
		}
		if !strings.Contains(string(md), "-upgrade-from "+base) {
			t.Errorf("report of %s: its replay commands lack -upgrade-from %s:\n%s", in, base, md)
		}
	}
	mixed := filepath.Join(dir, "mixed.jsonl")
	runCLI(t, "merge", "-o", mixed, one, plain)
	if code, out, errOut := runCLI(t, "report", "-in", mixed, "-out", t.TempDir()); code == exitPass || !strings.Contains(out+errOut, "record different upgrades") {
		t.Errorf("report of results with and without the upgrade: exit %d, want an error naming it\n%s\n%s", code, out, errOut)
	}
}
