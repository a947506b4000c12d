package examples_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// The quoted outputs of the examples' READMEs and docs/findings.md are checked against
// what the commands print now (issue 63): by default each finding's own replay line
// (docs/findings.md, "**Replay**: `cd examples/X && seedfall replay …`"), which must
// fail as the finding says, print no warning, and print every line its example's README
// quotes under the same command; with SEEDFALL_READMECHECK=1 every `$ seedfall …`
// command of every example's README too. A quoted line that is no longer printed fails
// with the README, its line, and the command's last lines. The outputs were recorded
// with go1.26: under another release only the exit codes and warnings are checked.

// recordedWith is the Go release the quoted outputs were recorded with.
const recordedWith = "go1.26"

// TestFindingReplays runs the replay line of every finding of docs/findings.md.
func TestFindingReplays(t *testing.T) {
	cmds := findingReplays(t, filepath.Join("..", "docs", "findings.md"))
	if len(cmds) < 20 {
		t.Fatalf("found %d replay lines in docs/findings.md: the parser lost them", len(cmds))
	}
	for _, c := range cmds {
		t.Run(c.dir+" "+strings.Join(c.args[1:], " "), func(t *testing.T) {
			code, out := seedfall(t, c.dir, c.args...)
			if code != 1 {
				t.Errorf("docs/findings.md:%d: `%s` exited %d, want 1 (the finding's failure):\n%s", c.line, c.text, code, tailLines(out, 15))
			}
			if warn := warnings(out); warn != "" && goSeries() == recordedWith {
				t.Errorf("docs/findings.md:%d: `%s` warns:\n%s", c.line, c.text, warn)
			}
			checkQuoted(t, filepath.Join(c.dir, "README.md"), strings.Join(c.args, " "), out)
		})
	}
}

// TestReadmeCommands runs every `$ seedfall …` command the examples' READMEs quote.
func TestReadmeCommands(t *testing.T) {
	if os.Getenv("SEEDFALL_READMECHECK") != "1" {
		t.Skip("SEEDFALL_READMECHECK=1 re-runs every command the examples' READMEs quote (hours of sweeps)")
	}
	readmes, err := filepath.Glob("*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, readme := range readmes {
		for _, q := range quotedCommands(t, readme) {
			t.Run(readme+":"+fmt.Sprint(q.line), func(t *testing.T) {
				args := splitCommand(q.cmd)
				_, out := seedfall(t, filepath.Dir(readme), args[1:]...)
				checkLines(t, readme, q, out)
			})
		}
	}
}

// replayLine is a finding's replay command.
type replayLine struct {
	line int
	text string   // as docs/findings.md has it
	dir  string   // examples/X, relative to this package: X
	args []string // seedfall's arguments
}

var replayRE = regexp.MustCompile("\\*\\*Replay\\*\\*: `cd examples/([^ ]+) && (seedfall replay [^`]+)`")

func findingReplays(t *testing.T, path string) []replayLine {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A replay line may wrap: the command runs to its closing backquote.
	text := string(data)
	var out []replayLine
	for _, m := range replayRE.FindAllStringSubmatchIndex(text, -1) {
		cmd := strings.Join(strings.Fields(text[m[4]:m[5]]), " ")
		out = append(out, replayLine{
			line: strings.Count(text[:m[0]], "\n") + 1,
			text: "cd examples/" + text[m[2]:m[3]] + " && " + cmd,
			dir:  text[m[2]:m[3]],
			args: splitCommand(cmd)[1:],
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

func quotedCommands(t *testing.T, readme string) []quoted {
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
	if goSeries() != recordedWith {
		t.Logf("%s:%d: quoted with %s, running %s: lines not compared", readme, q.line, recordedWith, runtime.Version())
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
	pieces := strings.Split(quoted, "…")
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
	inRE    = regexp.MustCompile(`in \d+(\.\d+)?(ms|s|m\d+(\.\d+)?s|h\d+m\d+(\.\d+)?s)`)
	timesRE = regexp.MustCompile(`\d+m\d+(\.\d+)?s|\d+\.\d+s`)
)

// normLine leaves out what changes from run to run of the same seed: wall times.
func normLine(s string) string {
	s = wallRE.ReplaceAllString(s, "")
	s = inRE.ReplaceAllString(s, "in D")
	s = timesRE.ReplaceAllString(s, "D")
	return strings.TrimSpace(s)
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

// splitCommand splits a shell command line of words and '…' quotes.
func splitCommand(s string) []string {
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

// seedfall runs this repository's seedfall with args in examples/dir.
func seedfall(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	return exampletest.RunIn(t, dir, args...)
}

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
