package engine_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// build turns the steps into a scenario; now is the virtual time of each step.
func buildScenario(path string, steps []*scStep) (*scenario, []time.Duration, error) {
	sc := &scenario{seed: 1, open: map[string]int{}}
	now := time.Duration(0)
	at := make([]time.Duration, len(steps))
	dur := func(st *scStep, s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, sc.errorf(path, st, "%q is not a duration", s)
		}
		return d, nil
	}
	nargs := func(st *scStep, n int, usage string) error {
		if len(st.args) != n {
			return sc.errorf(path, st, "want %s", usage)
		}
		return nil
	}
	for i, st := range steps {
		at[i] = now
		f := engine.Fault{AtNS: int64(now), Kind: engine.FaultKind(st.cmd)}
		switch st.cmd {
		case "node", "workload":
			if len(st.args) < 2 {
				return nil, nil, sc.errorf(path, st, "want NAME PKG ARGS...")
			}
			n := ftNode(st.args[0], st.args[1], st.args[2:]...)
			if st.cmd == "workload" {
				sc.workload = n
			} else {
				sc.nodes = append(sc.nodes, n)
			}
		case "seed":
			if err := nargs(st, 1, "seed N"); err != nil {
				return nil, nil, err
			}
			v, err := strconv.ParseUint(st.args[0], 10, 64)
			if err != nil {
				return nil, nil, sc.errorf(path, st, "%q is not a seed", st.args[0])
			}
			sc.seed = v
		case "faults":
			raw := strings.Join(st.args, " ")
			if !json.Valid([]byte(raw)) {
				return nil, nil, sc.errorf(path, st, "%s is not JSON", raw)
			}
			sc.faults = raw
		case "run-until":
			if err := nargs(st, 1, "run-until T"); err != nil {
				return nil, nil, err
			}
			d, err := dur(st, st.args[0])
			if err != nil {
				return nil, nil, err
			}
			if d <= now {
				return nil, nil, sc.errorf(path, st, "%s is not after %s", d, now)
			}
			now = d
			at[i] = now
			sc.horizon = now
		case "crash", "kill", "reset":
			if err := nargs(st, 1, st.cmd+" NODE"); err != nil {
				return nil, nil, err
			}
			f.Node = st.args[0]
			if st.cmd != "reset" {
				sc.open["crash "+f.Node] = len(sc.plan.Faults) // a kill restarts like a crash
			}
			sc.plan.Faults = append(sc.plan.Faults, f)
		case "restart":
			if err := nargs(st, 1, "restart NODE"); err != nil {
				return nil, nil, err
			}
			k, ok := sc.open["crash "+st.args[0]]
			if !ok || now == time.Duration(sc.plan.Faults[k].AtNS) {
				return nil, nil, sc.errorf(path, st, "%s did not crash or die before now", st.args[0])
			}
			sc.plan.Faults[k].RestartNS = int64(now) - sc.plan.Faults[k].AtNS
			delete(sc.open, "crash "+st.args[0])
		case "partition":
			if len(st.args) < 2 {
				return nil, nil, sc.errorf(path, st, "want A B... [one-way]")
			}
			f.Node, f.Peers = st.args[0], st.args[1:]
			if l := len(f.Peers); f.Peers[l-1] == "one-way" {
				f.OneWay, f.Peers = true, f.Peers[:l-1]
			}
			sc.open["partition "+f.Node] = len(sc.plan.Faults)
			sc.plan.Faults = append(sc.plan.Faults, f)
		case "heal":
			if err := nargs(st, 1, "heal A"); err != nil {
				return nil, nil, err
			}
			k, ok := sc.open["partition "+st.args[0]]
			if !ok || now == time.Duration(sc.plan.Faults[k].AtNS) {
				return nil, nil, sc.errorf(path, st, "%s is not partitioned before now", st.args[0])
			}
			sc.plan.Faults[k].DurationNS = int64(now) - sc.plan.Faults[k].AtNS
			delete(sc.open, "partition "+st.args[0])
		case "latency", "pause":
			usage := "latency NODE D for DUR"
			args := st.args
			if st.cmd == "pause" {
				usage, args = "pause NODE for DUR", append([]string{args[0], "0s"}, args[1:]...)
			}
			if len(args) != 4 || args[2] != "for" {
				return nil, nil, sc.errorf(path, st, "want %s", usage)
			}
			d, err := dur(st, args[1])
			if err != nil {
				return nil, nil, err
			}
			length, err := dur(st, args[3])
			if err != nil {
				return nil, nil, err
			}
			f.Node, f.LatencyNS, f.DurationNS = args[0], int64(d), int64(length)
			sc.plan.Faults = append(sc.plan.Faults, f)
		case "crash-op":
			usage := "crash-op NODE N [incarnation K] [restart-after DUR]"
			if len(st.args) != 2 && len(st.args) != 4 && len(st.args) != 6 {
				return nil, nil, sc.errorf(path, st, "want %s", usage)
			}
			f.Kind, f.Node, f.Incarnation = engine.FaultCrash, st.args[0], 1
			n, err := strconv.ParseInt(st.args[1], 10, 64)
			if err != nil || n < 1 {
				return nil, nil, sc.errorf(path, st, "%q is not a disk op number", st.args[1])
			}
			f.DiskOp = n
			for k := 2; k+1 < len(st.args); k += 2 {
				switch st.args[k] {
				case "incarnation":
					v, err := strconv.Atoi(st.args[k+1])
					if err != nil || v < 1 {
						return nil, nil, sc.errorf(path, st, "%q is not an incarnation", st.args[k+1])
					}
					f.Incarnation = v
				case "restart-after":
					d, err := dur(st, st.args[k+1])
					if err != nil {
						return nil, nil, err
					}
					f.RestartNS = int64(d)
				default:
					return nil, nil, sc.errorf(path, st, "want %s", usage)
				}
			}
			sc.plan.Faults = append(sc.plan.Faults, f)
		case "fsync_eio":
			if len(st.args) != 1 && (len(st.args) != 3 || st.args[1] != "op") {
				return nil, nil, sc.errorf(path, st, "want fsync_eio NODE [op N]")
			}
			f.Node = st.args[0]
			if len(st.args) == 3 {
				n, err := strconv.ParseInt(st.args[2], 10, 64)
				if err != nil || n < 1 {
					return nil, nil, sc.errorf(path, st, "%q is not a disk op number", st.args[2])
				}
				f.DiskOp, f.Incarnation = n, 1
			}
			sc.plan.Faults = append(sc.plan.Faults, f)
		case "clock_jump":
			if err := nargs(st, 2, "clock_jump NODE BY"); err != nil {
				return nil, nil, err
			}
			by, err := time.ParseDuration(st.args[1])
			if err != nil {
				return nil, nil, sc.errorf(path, st, "%q is not a duration", st.args[1])
			}
			f.Node, f.JumpNS = st.args[0], int64(by)
			sc.plan.Faults = append(sc.plan.Faults, f)
		case "clock_skew":
			if err := nargs(st, 2, "clock_skew NODE PPM"); err != nil {
				return nil, nil, err
			}
			ppm, err := strconv.ParseInt(st.args[1], 10, 64)
			if err != nil {
				return nil, nil, sc.errorf(path, st, "%q is not a number of ppm", st.args[1])
			}
			f.Node, f.SkewPPM = st.args[0], ppm
			sc.plan.Faults = append(sc.plan.Faults, f)
		case "strict_dirs":
			if err := nargs(st, 0, "strict_dirs"); err != nil {
				return nil, nil, err
			}
			sc.strict = true
		case "result":
		default:
			return nil, nil, sc.errorf(path, st, "not a step (want node, workload, seed, faults, strict_dirs, run-until, crash, crash-op, restart, partition, heal, latency, pause, reset, fsync_eio, clock_jump, clock_skew or result)")
		}
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
	prev := time.Duration(-1)
	next := 0
	for i, st := range steps {
		switch st.cmd {
		case "run-until":
			var out []string
			for ; next < len(r.Trace) && lineTime(t, r.Trace[next]) <= at[i]; next++ {
				if lineTime(t, r.Trace[next]) > prev {
					out = append(out, r.Trace[next])
				}
			}
			st.got = strings.Join(out, "\n")
			prev = at[i]
		case "result":
			out := []string{"verdict " + string(r.Verdict)}
			if r.Failure != nil {
				out = append(out, "failure "+r.Failure.Reason)
			}
			for _, f := range r.Faults {
				out = append(out, "fault "+f.String())
			}
			st.got = strings.Join(out, "\n")
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
