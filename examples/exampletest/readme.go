package exampletest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The quoted outputs of the examples' READMEs and docs/findings.md are checked against
// what the commands print now (issue 63): each finding's own replay line
// (docs/findings.md, "**Replay**: `cd examples/X && seedfall replay …`") must fail as the
// finding says, print no warning, and print every line its example's README quotes under
// the same command (FindingReplays, run by the example's package under
// examples/modules); with SEEDFALL_READMECHECK=1 every `$ seedfall …` command of every
// example's README too (ReadmeCommands). A quoted line that is no longer printed fails
// with the README, its line, and the command's last lines. The outputs were recorded with
// go1.26: under another release only the exit codes and warnings are checked.

// RecordedWith is the Go release the quoted outputs were recorded with.
const RecordedWith = "go1.26"

// FindingsFile is docs/findings.md of this repository.
func FindingsFile(t testing.TB) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "docs", "findings.md")
}

// FindingReplays runs the replay line of every finding of docs/findings.md whose example
// is examples/<example>: each must exit 1, print no warning (under the release the
// outputs were recorded with), and print every line the example's README quotes under
// the same command. It fails when docs/findings.md has no replay line for the example.
func FindingReplays(t *testing.T, example string) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var mine []ReplayLine
	for _, c := range ParseFindingReplays(t, FindingsFile(t)) {
		if c.Example == example {
			mine = append(mine, c)
		}
	}
	if len(mine) == 0 {
		t.Fatalf("docs/findings.md has no replay line in examples/%s", example)
	}
	dir := filepath.Join(root, "examples", example)
	for _, c := range mine {
		t.Run(strings.Join(c.Args[1:], " "), func(t *testing.T) {
			code, out := RunIn(t, dir, c.Args...)
			if code != 1 {
				t.Errorf("docs/findings.md:%d: `%s` exited %d, want 1 (the finding's failure):\n%s", c.Line, c.Text, code, tailLines(out, 15))
			}
			if warn := warnings(out); warn != "" && goSeries() == RecordedWith {
				t.Errorf("docs/findings.md:%d: `%s` warns:\n%s", c.Line, c.Text, warn)
			}
			checkQuoted(t, filepath.Join(dir, "README.md"), strings.Join(c.Args, " "), out)
		})
	}
}

// ReadmeCommands runs every `$ seedfall …` command readme quotes, in its directory, and
// checks the lines quoted after each.
func ReadmeCommands(t *testing.T, readme string) {
	t.Helper()
	ReadmeCommandsIn(t, readme, filepath.Dir(readme))
}

// ReadmeCommandsIn is ReadmeCommands for a file whose commands run in dir (the
// repository's README and docs/, whose commands name examples/… from the root).
func ReadmeCommandsIn(t *testing.T, readme, dir string) {
	t.Helper()
	for _, q := range quotedCommands(t, readme) {
		t.Run(fmt.Sprint(q.line), func(t *testing.T) {
			args := beforePipe(splitCommand(q.cmd))
			keepOutputs(t, dir, args)
			_, out := RunIn(t, dir, args[1:]...)
			checkLines(t, readme, q, out)
		})
	}
}

// A ReplayLine is a finding's replay command.
type ReplayLine struct {
	Line    int
	Text    string   // as docs/findings.md has it
	Example string   // examples/X: X
	Args    []string // seedfall's arguments
}

var replayRE = regexp.MustCompile("\\*\\*Replay\\*\\*: `cd examples/([^ ]+) && (seedfall replay [^`]+)`")

// ParseFindingReplays reads the replay lines of the findings file at path.
func ParseFindingReplays(t testing.TB, path string) []ReplayLine {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A replay line may wrap: the command runs to its closing backquote.
	text := string(data)
	var out []ReplayLine
	for _, m := range replayRE.FindAllStringSubmatchIndex(text, -1) {
		cmd := strings.Join(strings.Fields(text[m[4]:m[5]]), " ")
		out = append(out, ReplayLine{
			Line:    strings.Count(text[:m[0]], "\n") + 1,
			Text:    "cd examples/" + text[m[2]:m[3]] + " && " + cmd,
			Example: text[m[2]:m[3]],
			Args:    splitCommand(cmd)[1:],
		})
	}
	return out
}

// quoted is a command a README quotes in a code block, and the lines after it.
type quoted struct {
	line   int // of the command
	cmd    string
	output []string
	lines  []int
}

func quotedCommands(t testing.TB, readme string) []quoted {
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var out []quoted
	in := false
	var cur *quoted
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in
			cur = nil
		case !in:
		case strings.HasPrefix(l, "$ "):
			cur = nil
			if strings.HasPrefix(l, "$ seedfall ") {
				out = append(out, quoted{line: n, cmd: l[2:]})
				cur = &out[len(out)-1]
			}
		case cur != nil:
			cur.output = append(cur.output, l)
			cur.lines = append(cur.lines, n)
		}
	}
	return out
}

// checkQuoted compares out with what readme quotes under cmd, if it quotes it.
func checkQuoted(t *testing.T, readme, cmd string, out string) {
	t.Helper()
	if _, err := os.Stat(readme); err != nil {
		return
	}
	for _, q := range quotedCommands(t, readme) {
		if q.cmd == "seedfall "+cmd {
			checkLines(t, readme, q, out)
		}
	}
}

func checkLines(t *testing.T, readme string, q quoted, out string) {
	t.Helper()
	if goSeries() != RecordedWith {
		t.Logf("%s:%d: quoted with %s, running %s: lines not compared", readme, q.line, RecordedWith, runtime.Version())
		return
	}
	have := map[string]bool{}
	var printed []string
	for _, l := range strings.Split(out, "\n") {
		have[normLine(l)] = true
		printed = append(printed, normLine(l))
	}
	var miss []string
	for i, l := range q.output {
		s := strings.TrimSpace(l)
		if s == "" || s == "..." || s == "…" || strings.Contains(l, "(…)") || have[normLine(l)] || elided(normLine(l), printed) {
			continue
		}
		miss = append(miss, fmt.Sprintf("%s:%d: %s", readme, q.lines[i], l))
	}
	if len(miss) > 0 {
		t.Errorf("`%s` (%s:%d) no longer prints what the README quotes:\n%s\nit printed now (last lines):\n%s",
			q.cmd, readme, q.line, strings.Join(miss, "\n"), tailLines(out, 15))
	}
}

// elided reports whether a quoted line that leaves parts out ("FAIL seed 7 … server#2
// crashed") matches a printed line: its pieces in order.
func elided(quoted string, printed []string) bool {
	pieces := strings.Split(strings.ReplaceAll(quoted, "...", "…"), "…")
	if len(pieces) < 2 {
		return false
	}
	for _, l := range printed {
		rest, ok := l, true
		for _, p := range pieces {
			p = strings.TrimSpace(p)
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}

var (
	wallRE  = regexp.MustCompile(`\s+\(\d+ s\)\s*$`)
	inRE    = regexp.MustCompile(`in \d+(\.\d{1,3})?(ms|s|m\d+(\.\d{1,3})?s|h\d+m\d+(\.\d{1,3})?s)\b`)
	timesRE = regexp.MustCompile(`\b(\d+m\d+(\.\d{1,3})?s|\d+\.\d{1,3}s)\b`)
	rateRE  = regexp.MustCompile(`\b\d+(\.\d+)? (seeds|states|runs|futures)/s\b`)
	etaRE   = regexp.MustCompile(`\bETA \S+`)
	builtRE = regexp.MustCompile(`^built in D \(\d+ go build, \d+ unchanged\)`)
	// a row of seedfall test's table of tests: its last column is the wall time
	testRowRE = regexp.MustCompile(`^(Test\S*\s+\S+\s+\d+\s+\d+\s+\d+)\s+\S+$`)
)

// normLine leaves out what changes from run to run of the same seed: wall times, which
// seedfall prints with at most three decimals ("300 seeds in 38.8s", "shrunk 5 -> 1
// faults in 21 runs, 3.1s"), rates and progress estimates ("20.1 states/s, ETA 0s"), and
// how many builds the cache spared ("built in 0.20s (0 go build, 2 unchanged)"). Virtual times keep their nanoseconds ("FAIL seed 4 at
// t=5.271726159s", "crash server, restart at 3.54432185s") and are compared exactly: a
// quoted trace time that moved is a quote that no longer holds.
func normLine(s string) string {
	s = wallRE.ReplaceAllString(s, "")
	s = inRE.ReplaceAllString(s, "in D")
	s = timesRE.ReplaceAllString(s, "D")
	s = rateRE.ReplaceAllString(s, "R ${2}/s")
	s = etaRE.ReplaceAllString(s, "ETA E")
	s = strings.TrimSpace(s)
	// How many builds ran depends on the cache, not on the command.
	s = testRowRE.ReplaceAllString(s, "$1 D")
	return builtRE.ReplaceAllString(s, "built in D (B)")
}

func warnings(out string) string {
	var w []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ": warning: ") {
			w = append(w, l)
		}
	}
	return strings.Join(w, "\n")
}

// splitCommand splits a shell command line of words and '…' quotes; a word starting with
// "#" outside quotes starts a comment, which the shell drops (README lines such as
// "$ seedfall run … -q     # 1-300: FAIL 289 of 300").
func splitCommand(s string) []string {
	if i := commentStart(s); i >= 0 {
		s = s[:i]
	}
	var out []string
	var cur strings.Builder
	inQuote, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			inQuote, any = !inQuote, true
		case r == ' ' && !inQuote:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// beforePipe drops a shell pipeline's later commands (a README's "$ seedfall replay …
// | grep 'start (build'"): seedfall runs alone, and since the check asks only that each
// quoted line be printed, a filter after it changes nothing the check compares.
func beforePipe(args []string) []string {
	if i := slices.Index(args, "|"); i >= 0 {
		return args[:i]
	}
	return args
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func goSeries() string {
	parts := strings.SplitN(runtime.Version(), ".", 3)
	if len(parts) < 2 {
		return runtime.Version()
	}
	return parts[0] + "." + parts[1]
}

// commentStart is the index of an unquoted " #" that starts a shell comment in s, or -1.
func commentStart(s string) int {
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			in = !in
		case !in && s[i] == '#' && i > 0 && s[i-1] == ' ':
			return i
		}
	}
	return -1
}

// keepOutputs restores, after the test, the files a quoted command writes with -o, -out
// or -save (a README's `seedfall shrink -o plans/seed8.shrunk.json` rewrites the plan
// the repository keeps): the check must not edit the checkout.
//
// What a command makes next to the config without being told where (`seedfall crashes`'s
// <config>.seed-N.crashes directory, `seedfall shrink`'s <config>.seed-N.faults.json) is
// removed too: any entry of dir that was not there before.
func keepOutputs(t *testing.T, dir string, args []string) {
	dirs := []string{dir} // and the config's, where those go
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-c" {
			p := args[i+1]
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if d := filepath.Dir(p); d != filepath.Clean(dir) {
				dirs = append(dirs, d)
			}
		}
	}
	for _, d := range dirs {
		before := map[string]bool{}
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			before[e.Name()] = true
		}
		t.Cleanup(func() {
			after, _ := os.ReadDir(d)
			for _, e := range after {
				if !before[e.Name()] {
					os.RemoveAll(filepath.Join(d, e.Name()))
				}
			}
		})
	}
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-o", "-out", "-save":
		default:
			continue
		}
		p := args[i+1]
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); os.IsNotExist(err) {
			t.Cleanup(func() { os.RemoveAll(p) }) // made by the command: not the checkout's
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue // a directory the command writes into: left as it is
		}
		t.Cleanup(func() { os.WriteFile(p, data, 0o644) })
	}
}
