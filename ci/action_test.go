package ci

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

const actionlintPkg = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"

// repoRoot is the module root, one level above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	must(t, err)
	return root
}

// actionlint runs actionlint v1.7.12 through `go run pkg@version`, which fetches it into
// the module cache without touching go.mod. The test is skipped when it cannot be
// fetched (no network and not cached).
func actionlint(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("actionlint: skipped in -short mode")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("actionlint: no go command on PATH")
	}
	run := func(dir string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", append([]string{"run", actionlintPkg, "-color=false"}, args...)...)
		cmd.Dir = dir
		// The module's GOFLAGS (e.g. -modfile, -mod) do not apply to pkg@version.
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(t.TempDir(), "-version"); err != nil {
		t.Skipf("actionlint %s is not available (needs the Go module proxy or a warm module cache): %v\n%s", actionlintPkg, err, out)
	}
	return run(dir, args...)
}

// TestActionlint lints every workflow with actionlint. ci.yml uses the action from this
// checkout (uses: ./), so actionlint also checks action.yml: its metadata, the inputs
// the workflow passes and the outputs it reads. A negative control shows it would catch
// an unknown input or output.
func TestActionlint(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	must(t, err)
	if len(files) < 3 {
		t.Fatalf("want ci.yml, seedfall.yml and seedfall-deep.yml, found %v", files)
	}
	if out, err := actionlint(t, root, files...); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}

	neg := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(neg, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(neg, ".github", "workflows"), 0o755))
	for _, f := range []string{"action.yml", "Dockerfile"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(neg, f), b, 0o644))
	}
	bad := filepath.Join(neg, ".github", "workflows", "bad.yml")
	must(t, os.WriteFile(bad, []byte(`on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - id: s
        uses: ./
        with:
          seed: 1-5
      - run: echo ${{ steps.s.outputs.failures }}
`), 0o644))
	out, err := actionlint(t, neg, bad)
	if err == nil || !strings.Contains(out, `input "seed" is not defined`) || !strings.Contains(out, `property "failures" is not defined`) {
		t.Errorf("actionlint missed an unknown input and output (err %v):\n%s", err, out)
	}

	// The recipe of docs/action.md for input upgrade-from lints clean against action.yml.
	good := filepath.Join(neg, ".github", "workflows", "upgrade.yml")
	must(t, os.WriteFile(good, []byte(`on: [pull_request, push]
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: ./
        with:
          upgrade-from: base
`), 0o644))
	if out, err := actionlint(t, neg, good); err != nil {
		t.Errorf("actionlint on a workflow with upgrade-from: %v\n%s", err, out)
	}
}

// actionMeta is what the line-based reader takes from action.yml.
type actionMeta struct {
	top     map[string]string            // top-level scalar keys
	inputs  []string                     // in file order
	fields  map[string]map[string]string // input → field → value
	outputs []string
	runs    map[string]string
}

// readActionYML reads the subset of YAML action.yml uses: top-level keys, and under
// inputs/outputs/runs two-space-indented names with four-space-indented scalar fields
// (folded ">-" values are joined).
func readActionYML(t *testing.T, path string) actionMeta {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	m := actionMeta{top: map[string]string{}, fields: map[string]map[string]string{}, runs: map[string]string{}}
	key := regexp.MustCompile(`^( *)([A-Za-z][\w-]*):(?: (.*))?$`)
	var section, item, field string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		g := key.FindStringSubmatch(line)
		if g == nil {
			if section == "inputs" && field != "" && strings.HasPrefix(line, "      ") {
				m.fields[item][field] = strings.TrimSpace(m.fields[item][field] + " " + strings.TrimSpace(line))
				continue
			}
			t.Fatalf("%s:%d: unexpected line %q", path, n, line)
		}
		indent, k, v := len(g[1]), g[2], unquote(g[3])
		switch indent {
		case 0:
			section, item, field = k, "", ""
			m.top[k] = v
		case 2:
			item, field = k, ""
			switch section {
			case "inputs":
				m.inputs = append(m.inputs, k)
				m.fields[k] = map[string]string{}
			case "outputs":
				m.outputs = append(m.outputs, k)
			case "runs":
				m.runs[k] = v
			}
		case 4:
			if section == "inputs" {
				field = k
				if v == ">-" {
					v = ""
				}
				m.fields[item][k] = v
			}
		default:
			t.Fatalf("%s:%d: unexpected indentation", path, n)
		}
	}
	must(t, sc.Err())
	return m
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// TestActionMetadata: action.yml's inputs are exactly Inputs' (inputNames, same order),
// each with a description and a default that `seedfall ci` accepts and that matches the
// flag's default (except baseline and token, which only make sense on GitHub); the
// outputs are the ones Run sets; it is a Docker action built from the Dockerfile.
func TestActionMetadata(t *testing.T) {
	root := repoRoot(t)
	m := readActionYML(t, filepath.Join(root, "action.yml"))
	if !reflect.DeepEqual(m.inputs, inputNames) {
		t.Errorf("action.yml inputs %v, want %v", m.inputs, inputNames)
	}
	env := map[string]string{}
	for _, name := range m.inputs {
		f := m.fields[name]
		if f["description"] == "" {
			t.Errorf("input %s: no description", name)
		}
		if _, ok := f["default"]; !ok {
			t.Errorf("input %s: no default", name)
		}
		if f["required"] != "false" {
			t.Errorf("input %s: required %q, want false (every input has a default)", name, f["required"])
		}
		env["INPUT_"+strings.ToUpper(name)] = f["default"]
	}
	if got := m.fields["token"]["default"]; got != "${{ github.token }}" {
		t.Errorf("token default %q", got)
	}
	if got := m.fields["baseline"]["default"]; got != "branch:seedfall-baseline" {
		t.Errorf("baseline default %q", got)
	}
	fromAction, err := ParseInputs(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("seedfall ci rejects action.yml's defaults: %v", err)
	}
	fromFlags, err := ParseInputs(nil, nil, io.Discard)
	must(t, err)
	fromAction.Baseline, fromAction.Token = "", ""
	if !reflect.DeepEqual(fromAction, fromFlags) {
		t.Errorf("action.yml defaults %+v differ from the flags' %+v", fromAction, fromFlags)
	}
	if want := []string{"new", "known", "fixed", "report", "conclusion"}; !reflect.DeepEqual(m.outputs, want) {
		t.Errorf("outputs %v, want %v", m.outputs, want)
	}
	if m.runs["using"] != "docker" || m.runs["image"] != "Dockerfile" {
		t.Errorf("runs %v, want using: docker, image: Dockerfile", m.runs)
	}
	if m.top["name"] == "" || m.top["description"] == "" {
		t.Error("action.yml needs a name and a description")
	}

	// The docs list every input and output.
	doc, err := os.ReadFile(filepath.Join(root, "docs", "action.md"))
	must(t, err)
	for _, name := range append(append([]string(nil), inputNames...), m.outputs...) {
		if !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("docs/action.md: no table row for %s", name)
		}
	}
}

// dockerInstructions is every Dockerfile instruction.
var dockerInstructions = map[string]bool{
	"FROM": true, "RUN": true, "CMD": true, "LABEL": true, "EXPOSE": true, "ENV": true, "ADD": true,
	"COPY": true, "ENTRYPOINT": true, "VOLUME": true, "USER": true, "WORKDIR": true, "ARG": true,
	"ONBUILD": true, "STOPSIGNAL": true, "HEALTHCHECK": true, "SHELL": true, "MAINTAINER": true,
}

type dockerInstr struct {
	line      int
	cmd, args string
}

// parseDockerfile splits a Dockerfile into instructions: comments and blank lines
// dropped, backslash continuations joined.
func parseDockerfile(t *testing.T, path string) []dockerInstr {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	var out []dockerInstr
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(string(data), "\n") {
		trim := strings.TrimSpace(line)
		if cur.Len() == 0 && (trim == "" || strings.HasPrefix(trim, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		} else if strings.HasPrefix(trim, "#") {
			continue // a comment inside a continuation
		}
		cont := strings.HasSuffix(trim, "\\")
		cur.WriteString(strings.TrimSuffix(trim, "\\"))
		if cont {
			cur.WriteString(" ")
			continue
		}
		cmd, args, _ := strings.Cut(cur.String(), " ")
		if !dockerInstructions[strings.ToUpper(cmd)] {
			t.Errorf("%s:%d: unknown instruction %q", path, start, cmd)
		}
		if cmd != strings.ToUpper(cmd) {
			t.Errorf("%s:%d: write instructions in upper case (%q)", path, start, cmd)
		}
		out = append(out, dockerInstr{start, strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Errorf("%s: ends inside a continuation", path)
	}
	return out
}

// TestDockerfile: a base of the newest Go release seedfall supports (go1.27; a
// repository that pins another with a toolchain line gets it fetched, ci.GoToolchain),
// the binary built from ./cmd/seedfall, the wasip1 standard library warmed, and an
// exec-form entrypoint `seedfall ci`.
func TestDockerfile(t *testing.T) {
	path := filepath.Join(repoRoot(t), "Dockerfile")
	ins := parseDockerfile(t, path)
	var first *dockerInstr
	for i := range ins {
		if ins[i].cmd != "ARG" {
			first = &ins[i]
			break
		}
	}
	if first == nil || first.cmd != "FROM" || first.args != "golang:1.27-bookworm" {
		t.Fatalf("first instruction %+v, want FROM golang:1.27-bookworm", first)
	}
	var runs []string
	var entry []dockerInstr
	for _, in := range ins {
		switch in.cmd {
		case "RUN":
			runs = append(runs, in.args)
		case "ENTRYPOINT":
			entry = append(entry, in)
		case "FROM":
			if in.line != first.line {
				t.Errorf("%s:%d: a second FROM; the action's image is one stage", path, in.line)
			}
		}
	}
	all := strings.Join(runs, "\n")
	if !regexp.MustCompile(`go build [^\n]*-o /usr/local/bin/seedfall \./cmd/seedfall`).MatchString(all) {
		t.Errorf("no RUN builds ./cmd/seedfall into /usr/local/bin/seedfall:\n%s", all)
	}
	if !strings.Contains(all, "GOOS=wasip1 GOARCH=wasm go build std") {
		t.Errorf("no RUN warms the wasip1 standard library:\n%s", all)
	}
	if len(entry) != 1 {
		t.Fatalf("%d ENTRYPOINT instructions, want 1", len(entry))
	}
	var argv []string
	if err := json.Unmarshal([]byte(entry[0].args), &argv); err != nil {
		t.Fatalf("%s:%d: ENTRYPOINT is not in exec (JSON) form: %v", path, entry[0].line, err)
	}
	if !reflect.DeepEqual(argv, []string{"seedfall", "ci"}) {
		t.Errorf("ENTRYPOINT %q, want [\"seedfall\", \"ci\"]", argv)
	}
}
