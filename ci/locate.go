package ci

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/report"
)

// location is a line of a file of the repository, as annotations point at it: Path is
// relative to the workspace (the repository's root), with forward slashes.
type location struct {
	Path string `json:"path"`
	Line int    `json:"line"`
}

// String renders "path:line".
func (l location) String() string { return l.Path + ":" + strconv.Itoa(l.Line) }

// guestFrame matches a guest source position as the engine prints it in trace lines
// ("... at kvlog/kvstore/kvstore.go:179") and as panics print it in reasons: the last
// three elements of the file's path (its module path under -trimpath) and a line.
var guestFrame = regexp.MustCompile(`(?:^|[\s(])((?:[A-Za-z0-9_.@+~-]+/)*[A-Za-z0-9_.@+~-]+\.go):([0-9]{1,7})\b`)

// failingNode matches the node incarnation a reason starts with ("client#1: ...").
var failingNode = regexp.MustCompile(`^([A-Za-z0-9_.-]+#[0-9]+)[: ]`)

// maxIndexedFiles bounds the walk of the module that maps guest paths to files.
const maxIndexedFiles = 100_000

// locator maps the guest's source positions to files of the repository. The guest's
// paths are module paths (or absolute build paths) shortened to their last three
// elements; the locator reads the module path from the go.mod that holds the config's
// packages, indexes the module's .go files by the same short form, and maps a position
// only when exactly one file of the module has it. Positions in dependencies (the
// module cache, the standard library) and ambiguous ones stay unmapped: their text
// stays in the annotation's message.
type locator struct {
	workspace string              // absolute
	index     map[string][]string // short path → workspace-relative paths
}

// newLocator indexes the module holding config (a path as the engine opens it:
// relative to the current directory, which is the workspace in a container action). It returns a locator that maps nothing, and the reason, when there is no
// go.mod above the config or the module is outside the workspace.
func newLocator(workspace, config string) (*locator, error) {
	l := &locator{index: map[string][]string{}}
	if workspace == "" {
		workspace = "."
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return l, err
	}
	l.workspace = ws
	cfg, err := filepath.Abs(config)
	if err != nil {
		return l, err
	}
	root, modPath, err := findModule(filepath.Dir(cfg))
	if err != nil {
		return l, err
	}
	if rel, err := filepath.Rel(ws, root); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return l, errors.New("the module " + modPath + " at " + root + " is outside the workspace " + ws)
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts are not the repository's files
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || !d.Type().IsRegular() {
			return nil
		}
		if n++; n > maxIndexedFiles {
			return filepath.SkipAll
		}
		inMod, _ := filepath.Rel(root, p)
		inWS, _ := filepath.Rel(ws, p)
		key := shortFile(modPath + "/" + filepath.ToSlash(inMod))
		l.index[key] = append(l.index[key], filepath.ToSlash(inWS))
		// Without -trimpath the guest's paths are absolute build paths.
		if abs := shortFile(filepath.ToSlash(p)); abs != key {
			l.index[abs] = append(l.index[abs], filepath.ToSlash(inWS))
		}
		return nil
	})
	return l, err
}

// findModule walks up from dir to the nearest go.mod and returns its directory and
// module path.
func findModule(dir string) (root, modPath string, err error) {
	for d := dir; ; {
		f, err := os.Open(filepath.Join(d, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
					mp := strings.Trim(strings.TrimSpace(strings.SplitN(strings.TrimSpace(rest), "//", 2)[0]), `"`)
					if mp != "" {
						return d, mp, nil
					}
				}
			}
			return "", "", errors.New(filepath.Join(d, "go.mod") + ": no module line")
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", errors.New("no go.mod above " + dir)
		}
		d = parent
	}
}

// shortFile keeps the last three elements of a slash path, as the engine's trace does.
func shortFile(p string) string {
	n := 0
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			n++
			if n == 3 {
				return p[i+1:]
			}
		}
	}
	return p
}

// lookup maps one guest position to a repository file, when exactly one matches.
func (l *locator) lookup(file string, line int) (location, bool) {
	if l == nil || line <= 0 {
		return location{}, false
	}
	c := l.index[shortFile(path.Clean(file))]
	if len(c) == 1 {
		return location{Path: c[0], Line: line}, true
	}
	return location{}, false
}

// frames returns the guest positions in s, in order.
func frames(s string) [][2]string {
	var out [][2]string
	for _, m := range guestFrame.FindAllStringSubmatch(s, -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

// locate picks where a failing signature is annotated: the first position of the
// repository named in its reason (a panic's frame), else the call site of the last disk
// operation in the trace excerpt that is a file of the repository (the write or sync the
// lost data went through), else the failing node's last position in the repository,
// else the trace's last one. frame is the guest position it found first, mapped or not
// (a dependency's line stays in the message); both are empty when the group carries no
// positions at all.
func (l *locator) locate(g report.Group) (loc *location, frame string) {
	try := func(s string) *location {
		for _, f := range frames(s) {
			if frame == "" {
				frame = f[0] + ":" + f[1]
			}
			n, _ := strconv.Atoi(f[1])
			if m, ok := l.lookup(f[0], n); ok {
				return &m
			}
		}
		return nil
	}
	if m := try(g.Reason); m != nil {
		return m, frame
	}
	node := ""
	if m := failingNode.FindStringSubmatch(g.Reason); m != nil {
		node = m[1]
	}
	pass := []func(string) bool{
		func(s string) bool { return strings.Contains(s, " disk #") },
		func(s string) bool { return node != "" && strings.Contains(s, " "+node+" ") },
		func(string) bool { return true },
	}
	for _, want := range pass {
		for i := len(g.Trace) - 1; i >= 0; i-- {
			if want(g.Trace[i]) {
				if m := try(g.Trace[i]); m != nil {
					return m, frame
				}
			}
		}
	}
	return nil, frame
}

// locations locates every failing (new or known) group of d, by signature.
func (l *locator) locations(d *report.Data) map[string]groupPlace {
	out := map[string]groupPlace{}
	for _, g := range d.Groups {
		if g.Status != statusNew && g.Status != statusKnown {
			continue
		}
		loc, frame := l.locate(g)
		out[g.Signature] = groupPlace{Loc: loc, Frame: frame}
	}
	return out
}

// groupPlace is where a signature is annotated: Loc in the repository (nil when none
// was found), Frame the guest position as the trace printed it.
type groupPlace struct {
	Loc   *location
	Frame string
}
