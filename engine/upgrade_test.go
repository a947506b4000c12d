package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cachedir"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// upgradeServer is the server of the temporary repository: it prints what earlier
// incarnations left in /data/log, appends its own version and fsyncs, then idles.
const upgradeServer = `package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	old, _ := os.ReadFile("/data/log")
	fmt.Printf("server %s found %q\n", version, old)
	os.MkdirAll("/data", 0o755)
	f, err := os.OpenFile("/data/log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		panic(err)
	}
	f.WriteString(version + ";")
	if err := f.Sync(); err != nil {
		panic(err)
	}
	if os.Getenv("EXIT_FIRST") != "" && len(old) == 0 {
		os.Exit(1) // a fail-stop node's own exit: a plain restart, no crash
	}
	for {
		time.Sleep(time.Second)
	}
}
`

// TestUpgradeFromGitRevision commits two versions of a server to a temporary git
// repository and upgrades the node from the first commit (built from a git archive of
// that revision) to the working tree: the first incarnation runs v1, the restart after
// a crash runs v2 over the disk v1 wrote, and each start line names its build.
func TestUpgradeFromGitRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds guests for wasip1")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
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
	git("init", "-q")
	write("go.mod", "module example.com/up\n\ngo 1.21\n")
	write("server/main.go", upgradeServer)
	write("server/version.go", "package main\n\nconst version = \"v1\"\n")
	write("client/main.go", "package main\n\nimport \"time\"\n\nfunc main() { time.Sleep(2 * time.Second) }\n")
	write("sim/seedfall.json", `{
  "nodes": [{"name": "server", "pkg": "../server", "upgrade": {"from": "git:HEAD~1"}}],
  "workload": {"name": "client", "pkg": "../client"},
  "faults": {"max_faults": 0}
}`)
	git("add", "-A")
	git("commit", "-q", "-m", "v1")
	write("server/version.go", "package main\n\nconst version = \"v2\"\n")
	git("commit", "-q", "-am", "v2")

	// The revision is extracted into the cache once per commit; this one is the test's.
	sha, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD~1").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(cachedir.Dir(), "revisions", strings.TrimSpace(string(sha)))) })
	cfg, err := engine.LoadConfig(filepath.Join(repo, "sim", "seedfall.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := len(engineapi.WasmPaths(s)); n != 3 {
		t.Fatalf("%d modules, want server, client and the server's old build", n)
	}
	plan := &engine.FaultPlan{Seed: 1, Faults: []engine.Fault{
		{AtNS: int64(500 * time.Millisecond), Kind: engine.FaultCrash, Node: "server", RestartNS: int64(100 * time.Millisecond)},
		{AtNS: int64(time.Second), Kind: engine.FaultCrash, Node: "server", RestartNS: int64(100 * time.Millisecond)},
	}}
	r := s.Run(context.Background(), 1, engine.RunOptions{Plan: plan, Trace: true})
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("verdict %s %+v, want pass", r.Verdict, r.Failure)
	}
	text := strings.Join(r.Trace, "\n")
	starts := regexp.MustCompile(`server#\d start \(build ([0-9a-f]{7})\)`).FindAllStringSubmatch(text, -1)
	if len(starts) != 3 || starts[0][1] == starts[1][1] || starts[1][1] != starts[2][1] {
		t.Fatalf("start lines %q, want three, the first on another build than the next two\n%s", starts, text)
	}
	for _, want := range []string{
		`server#1 | server v1 found ""`,
		`server#2 | server v2 found "v1;"`,
		`server#3 | server v2 found "v1;v2;"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("trace lacks %q:\n%s", want, text)
		}
	}
	// The applied crashes record the build of each restart, and replay the same run.
	for i, f := range r.Faults {
		if f.Build != engine.BuildNew {
			t.Errorf("fault %d: build %q, want %q", i, f.Build, engine.BuildNew)
		}
	}
	if again := s.Run(context.Background(), 1, engine.RunOptions{Plan: &engine.FaultPlan{Seed: 1, Faults: r.Faults}}); again.TraceHash != r.TraceHash {
		t.Errorf("replay of the recorded plan: trace %s, want %s", again.TraceHash, r.TraceHash)
	}
	// A plan that says so restarts on the old build: the switch is the plan's.
	old := append([]engine.Fault(nil), r.Faults...)
	old[0].Build = engine.BuildOld
	r2 := s.Run(context.Background(), 1, engine.RunOptions{Plan: &engine.FaultPlan{Seed: 1, Faults: old}, Trace: true})
	if text := strings.Join(r2.Trace, "\n"); !strings.Contains(text, `server#2 | server v1 found "v1;"`) {
		t.Errorf("restart on the old build: trace lacks v1's second start:\n%s", text)
	}

	// A fail-stop node's own exit is a plain restart: it upgrades too, with no fault.
	write("sim/failstop.json", `{
  "nodes": [{"name": "server", "pkg": "../server", "env": {"EXIT_FIRST": "1"}, "on_exit": "restart",
             "upgrade": {"from": "git:HEAD~1"}}],
  "workload": {"name": "client", "pkg": "../client"},
  "faults": {"max_faults": 0}
}`)
	cfg, err = engine.LoadConfig(filepath.Join(repo, "sim", "failstop.json"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	r3 := fs.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if text := strings.Join(r3.Trace, "\n"); r3.Verdict != engine.VerdictPass || len(r3.Faults) != 0 ||
		!strings.Contains(text, "(fail-stop): restart at") || !strings.Contains(text, `server#2 | server v2 found "v1;"`) {
		t.Errorf("fail-stop restart: verdict %s, faults %v; want a pass with v2 reading v1's write after v1's own exit:\n%s", r3.Verdict, r3.Faults, text)
	}
}

// TestUpgradeConfigErrors checks that a bad upgrade option names the field.
func TestUpgradeConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, upgrade, want string }{
		{"no from", `{}`, `field nodes[0].upgrade.from: the old build is required`},
		{"bad mode", `{"from": "./v1", "mode": "twice"}`, `field nodes[0].upgrade.mode: "twice" is not an upgrade mode`},
		{"not a path", `{"from": "v1"}`, `field nodes[0].upgrade.from: "v1" is neither a package`},
		{"empty rev", `{"from": "git:"}`, `field nodes[0].upgrade.from: "git:" does not name a git revision`},
		{"option rev", `{"from": "git:--all"}`, `does not name a git revision`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.ParseConfig([]byte(`{"nodes": [{"name": "server", "pkg": "./v2", "upgrade": ` + tc.upgrade + `}], "workload": {"pkg": "./client"}}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	_, err := engine.ParseConfig([]byte(`{"nodes": [{"name": "server", "pkg": "./v2"}], "workload": {"pkg": "./client", "upgrade": {"from": "./v1"}}}`))
	if err == nil || !strings.Contains(err.Error(), "field workload.upgrade") {
		t.Fatalf("workload upgrade: error %v, want one naming field workload.upgrade", err)
	}
	// A revision that does not exist is an error of the file and field, not a panic.
	dir := t.TempDir()
	p := filepath.Join(dir, "seedfall.json")
	os.WriteFile(p, []byte(`{"nodes": [{"name": "server", "pkg": "./v2", "upgrade": {"from": "git:nosuchrev"}}], "workload": {"pkg": "./client"}}`), 0o644)
	cfg, err := engine.LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		return
	}
	_, err = engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "upgrade.from of node server: the config is not in a git repository") {
		t.Fatalf("prepare outside a repository: error %v, want one naming %s and upgrade.from", err, p)
	}
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Skipf("git init: %v: %s", err, out)
	}
	_, err = engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `upgrade.from of node server: no commit "nosuchrev"`) {
		t.Fatalf("prepare with a missing revision: error %v, want one naming %s, upgrade.from and the revision", err, p)
	}
}
