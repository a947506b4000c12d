package engine_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// Scenario tests, in the style of etcd-io/raft's datadriven tests: each file under
// testdata/scenarios is a list of steps, each followed by "----" and what the step
// printed, then a blank line. The steps describe one run of real fault guests
// (testdata/faults): the nodes, then, in the order of virtual time, the faults and the
// moments to look at the trace:
//
//	node NAME PKG ARGS...       a node of the system (a fault guest: ./net, ./disk, ...)
//	workload NAME PKG ARGS...   the workload; the run ends when it exits
//	seed N                      the run's seed (default 1)
//	faults JSON                 the config's "faults" object (latency, jitter, ...)
//	run-until T                 prints the trace lines after the previous run-until, up
//	                            to virtual time T; the steps after it happen at T
//	crash NODE                  crashes NODE (idle, a power loss) now; it stays down until
//	kill NODE                   kills NODE's process (a process death) now; down until
//	restart NODE                restarts it now (after a crash or a kill)
//	partition A B... [one-way]  cuts A from B... now (both ways unless one-way), until
//	heal A                      heals A's partition now
//	latency NODE D for DUR      adds D to every link of NODE for DUR
//	pause NODE for DUR          does not schedule NODE for DUR
//	reset NODE                  resets NODE's connections now
//	crash-op NODE N [incarnation K] [restart-after DUR]
//	                            crashes NODE during its disk op #N (of incarnation K,
//	                            default 1), restarting it DUR later (default never)
//	fsync_eio NODE [op N]       fails NODE's next fsync now with EIO (or its disk op #N)
//	clock_jump NODE BY          jumps NODE's wall clock by BY now (may be negative)
//	clock_skew NODE PPM         makes NODE's clocks drift by PPM from now on
//	strict_dirs                 the config's strict_dirs: namespace changes are durable
//	                            only once their directory is synced
//	result                      prints the verdict, the failure and the faults that fired
//
// Each step is one entry of scCommands, the dispatch table below, and its handler is in
// scenario_cmd_NAME_test.go (NAME with "-" as "_"); a new step is one entry and one file.
// The steps become a fault plan, replayed exactly, and a horizon (the last run-until);
// the world runs once and each run-until shows its slice of the trace. Regenerate the
// expected output with
//
//	go test ./engine -run TestScenarios -update
//
// and read the diff: the test fails on any difference.

var update = flag.Bool("update", false, "rewrite the expected output of testdata/scenarios")

// scStep is one step of a scenario file and what it printed.
type scStep struct {
	line     int    // of the command, 1-based
	comment  string // the comment lines before it, verbatim
	cmd      string
	args     []string
	expected string
	got      string
}

// parseScenario reads a scenario file.
func parseScenario(path string) ([]*scStep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var steps []*scStep
	var comment []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == "":
			if len(comment) > 0 {
				comment = append(comment, "")
			}
			continue
		case strings.HasPrefix(l, "#"):
			comment = append(comment, l)
			continue
		}
		f := strings.Fields(l)
		st := &scStep{line: i + 1, comment: strings.Join(comment, "\n"), cmd: f[0], args: f[1:]}
		comment = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return nil, fmt.Errorf("%s:%d: %q is not followed by a \"----\" line", path, i+1, l)
		}
		i += 2
		var out []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			out = append(out, lines[i])
		}
		st.expected = strings.Join(out, "\n")
		steps = append(steps, st)
	}
	return steps, nil
}

// formatScenario renders steps with their new output.
func formatScenario(steps []*scStep) string {
	var b strings.Builder
	for _, st := range steps {
		if st.comment != "" {
			b.WriteString(strings.TrimRight(st.comment, "\n") + "\n")
		}
		b.WriteString(strings.Join(append([]string{st.cmd}, st.args...), " ") + "\n----\n")
		if st.got != "" {
			b.WriteString(st.got + "\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// scenario is what the steps of a file describe: a config, a plan and the moments.
type scenario struct {
	nodes    []string
	workload string
	faults   string
	seed     uint64
	plan     engine.FaultPlan
	horizon  time.Duration
	open     map[string]int // node -> index in plan of its crash or partition still open
	strict   bool           // the config's strict_dirs
}

func (sc *scenario) errorf(path string, st *scStep, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", path, st.line, st.cmd, fmt.Sprintf(format, args...))
}

// scBuild is a scenario being built from its steps: the handlers of
// scenario_cmd_*_test.go read and change it.
type scBuild struct {
	sc   *scenario
	path string
	now  time.Duration // the virtual time of the step
}

func (b *scBuild) errorf(st *scStep, format string, args ...any) error {
	return b.sc.errorf(b.path, st, format, args...)
}

// dur parses a non-negative duration argument.
func (b *scBuild) dur(st *scStep, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, b.errorf(st, "%q is not a duration", s)
	}
	return d, nil
}

// nargs checks the step has n arguments.
func (b *scBuild) nargs(st *scStep, n int, usage string) error {
	if len(st.args) != n {
		return b.errorf(st, "want %s", usage)
	}
	return nil
}

// add adds a fault to the plan.
func (b *scBuild) add(f engine.Fault) { b.sc.plan.Faults = append(b.sc.plan.Faults, f) }

// scRun is a scenario's run being printed, step by step.
type scRun struct {
	t    *testing.T
	r    *engine.Result
	prev time.Duration // the virtual time the last run-until printed up to
	next int           // the first trace line not printed yet
}

// scCommand is one step of the scenario language. build reads the step into the
// scenario; f is a fault of the step's name at the step's time, for the handlers that
// add one. print, if set, is what the step prints from the run (at: the step's time).
type scCommand struct {
	name  string
	build func(b *scBuild, st *scStep, f engine.Fault) error
	print func(run *scRun, st *scStep, at time.Duration) string
}

// scCommands is the dispatch table of the steps, in the order an error lists them; each
// handler is in scenario_cmd_NAME_test.go.
var scCommands = []scCommand{
	{name: "node", build: scNode},
	{name: "workload", build: scWorkload},
	{name: "seed", build: scSeed},
	{name: "faults", build: scFaults},
	{name: "strict_dirs", build: scStrictDirs},
	{name: "run-until", build: scRunUntil, print: scPrintRunUntil},
	{name: "crash", build: scCrash},
	{name: "kill", build: scKill},
	{name: "crash-op", build: scCrashOp},
	{name: "restart", build: scRestart},
	{name: "partition", build: scPartition},
	{name: "heal", build: scHeal},
	{name: "latency", build: scLatency},
	{name: "pause", build: scPause},
	{name: "reset", build: scReset},
	{name: "fsync_eio", build: scFsyncEIO},
	{name: "clock_jump", build: scClockJump},
	{name: "clock_skew", build: scClockSkew},
	{name: "result", build: scResult, print: scPrintResult},
}

// scCommandOf returns the step's command, or nil.
func scCommandOf(name string) *scCommand {
	for i := range scCommands {
		if scCommands[i].name == name {
			return &scCommands[i]
		}
	}
	return nil
}

// scCommandList is "a, b, ... or z": the steps an error names.
func scCommandList() string {
	names := make([]string, len(scCommands))
	for i, c := range scCommands {
		names[i] = c.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// build turns the steps into a scenario; at is the virtual time of each step.
func buildScenario(path string, steps []*scStep) (*scenario, []time.Duration, error) {
	sc := &scenario{seed: 1, open: map[string]int{}}
	b := &scBuild{sc: sc, path: path}
	at := make([]time.Duration, len(steps))
	for i, st := range steps {
		c := scCommandOf(st.cmd)
		if c == nil {
			return nil, nil, sc.errorf(path, st, "not a step (want %s)", scCommandList())
		}
		f := engine.Fault{AtNS: int64(b.now), Kind: engine.FaultKind(st.cmd)}
		if err := c.build(b, st, f); err != nil {
			return nil, nil, err
		}
		at[i] = b.now // after it: a run-until's time is the one it runs to
	}
	names := map[string]bool{}
	for _, n := range append([]string{sc.workload}, sc.nodes...) {
		var v struct{ Name string }
		json.Unmarshal([]byte(n), &v)
		names[v.Name] = true
	}
	for i, f := range sc.plan.Faults {
		for _, n := range append([]string{f.Node}, f.Peers...) {
			if !names[n] {
				return nil, nil, fmt.Errorf("%s: fault %d (%s) names %q, which is not a node", path, i+1, f.Kind, n)
			}
		}
	}
	for k, i := range sc.open {
		if strings.HasPrefix(k, "partition ") {
			return nil, nil, fmt.Errorf("%s: the %s at %s is never healed", path, k, time.Duration(sc.plan.Faults[i].AtNS).String())
		}
	}
	if sc.workload == "" || sc.horizon == 0 {
		return nil, nil, fmt.Errorf("%s: a scenario needs a workload and a run-until", path)
	}
	return sc, at, nil
}

// lineTime is the virtual time a trace line starts with.
func lineTime(t *testing.T, line string) time.Duration {
	f := strings.Fields(line)
	if len(f) == 0 {
		t.Fatalf("an empty trace line")
	}
	d, err := time.ParseDuration(f[0])
	if err != nil {
		t.Fatalf("trace line without a time: %q", line)
	}
	return d
}

// runScenario runs the scenario of path once and fills in each step's output.
func runScenario(t *testing.T, path string, steps []*scStep) {
	sc, at, err := buildScenario(path, steps)
	if err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf(`"horizon":%q`, sc.horizon.String())
	if sc.faults != "" {
		extra += `,"faults":` + sc.faults
	}
	if sc.strict {
		extra += `,"strict_dirs":true`
	}
	cfg := ftConfig(sc.workload, "", sc.nodes...)
	cfg = strings.Replace(cfg, `"horizon":"30s"`, extra, 1)
	s := ftSim(t, cfg)
	r := ftRun(t, s, sc.seed, &sc.plan)
	run := &scRun{t: t, r: r, prev: -1}
	for i, st := range steps {
		if c := scCommandOf(st.cmd); c != nil && c.print != nil {
			st.got = c.print(run, st, at[i])
		}
	}
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/scenarios")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			steps, err := parseScenario(path)
			if err != nil {
				t.Fatal(err)
			}
			runScenario(t, path, steps)
			if *update {
				if err := os.WriteFile(path, []byte(formatScenario(steps)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, st := range steps {
				if st.got != st.expected {
					t.Errorf("%s:%d: %s %s:\n got:\n%s\n want:\n%s", path, st.line, st.cmd, strings.Join(st.args, " "),
						indent(st.got), indent(st.expected))
				}
			}
		})
	}
}

// Every step of the table has its handler file and every handler file a step: the
// table and the files cannot drift apart.
func TestScenarioCommandFiles(t *testing.T) {
	files, err := filepath.Glob("scenario_cmd_*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
	}
	for _, c := range scCommands {
		f := "scenario_cmd_" + strings.ReplaceAll(c.name, "-", "_") + "_test.go"
		if !have[f] {
			t.Errorf("step %s has no handler file %s", c.name, f)
		}
		delete(have, f)
	}
	for f := range have {
		t.Errorf("%s is the handler file of no step in scCommands", f)
	}
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// The negative control: the expected output is the run's, not anything the driver would
// print regardless. Without its crash and restart, crash_restart's trace differs.
func TestScenarioDetectsDifference(t *testing.T) {
	path := "testdata/scenarios/crash_restart.txt"
	steps, err := parseScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []*scStep
	for _, st := range steps {
		if st.cmd != "crash" && st.cmd != "restart" {
			kept = append(kept, st)
		}
	}
	if len(kept) != len(steps)-2 {
		t.Fatalf("%s has no crash and restart step", path)
	}
	runScenario(t, path, kept)
	differ := 0
	for _, st := range kept {
		if st.got != st.expected {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("the run without the crash printed what the file expects with it")
	}
}

// A malformed scenario is an error naming the file, the line and the step.
func TestScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"workload c ./net\n----\n\nfly c\n----\n", "x.txt:4: fly: not a step"},
		{"workload c ./net\n", `x.txt:1: "workload c ./net" is not followed by a "----" line`},
		{"workload c ./net\n----\n\nrun-until 1s\n----\n\nrun-until 1s\n----\n", "x.txt:7: run-until: 1s is not after 1s"},
		{"workload c ./net\n----\n\npartition c s\n----\n\nrun-until 1s\n----\n", `fault 1 (partition) names "s", which is not a node`},
		{"workload c ./net\n----\n\nnode s ./net\n----\n\npartition c s\n----\n\nrun-until 1s\n----\n", "the partition c at 0s is never healed"},
		{"workload c ./net\n----\n\nrestart c\n----\n\nrun-until 1s\n----\n", "x.txt:4: restart: c did not crash or die before now"},
	} {
		path := filepath.Join(t.TempDir(), "x.txt")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		steps, err := parseScenario(path)
		if err == nil {
			_, _, err = buildScenario(path, steps)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
}
