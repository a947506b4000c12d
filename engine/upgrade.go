package engine

// Upgrades and downgrades across builds (the node option "upgrade").
//
// A node with an upgrade has two builds: the old one ("from": another package, or a
// git revision of the repository) and the new one (its "pkg"). Its first incarnation
// runs the old build; from a restart on (after a crash, or a fail-stop node's own
// exit) it runs the new build over the disk the old one left. "alternate" switches
// back and forth at every restart, so downgrades are tested too.
//
// The build is a property of an incarnation. A crash that restarts a node records in
// the plan (Fault.Build) which build the restart runs, so a saved plan replays the
// same switches, and shrink can try a restart without its upgrade (and keeps the
// switches the failure needs). A plan without Build (written by hand, or by an older
// seedfall) follows the mode. Restarts that are no fault (fail-stop exits) follow the
// mode too. The start line of every incarnation of such a node names its build
// ("server#2 start (build 3f2a1c0)"): a short hash of the wasm module. Nodes without
// an upgrade trace exactly as before.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/internal/build"
	"github.com/seedfall/seedfall/engine/internal/goloc"
)

// UpgradeConfig is a node's other build and when it runs.
type UpgradeConfig struct {
	// From is the old build: a package path relative to the config's directory
	// ("./v1"; a directory with its own go.mod is built as a module of its own, so an
	// old release of a dependency can be pinned there), or "git:REV", a git revision of the repository the config is in
	// ("git:main", "git:HEAD~1", a commit hash), built from a `git archive` of that
	// revision with the node's tags, net_overlay and patches (the patch files are the
	// revision's).
	From string `json:"from"`
	// Mode is "once" (the default: old build first, the new one from the first
	// restart on) or "alternate" (old, new, old, ...: every restart switches).
	Mode string `json:"mode,omitempty"`
}

// Upgrade modes.
const (
	UpgradeOnce      = "once"
	UpgradeAlternate = "alternate"
)

// Builds of an upgrading node, as a plan records them (Fault.Build).
const (
	BuildOld = "old"
	BuildNew = "new"
)

// gitPrefix marks an upgrade's From as a git revision.
const gitPrefix = "git:"

func (u *UpgradeConfig) validate(field string) error {
	switch u.Mode {
	case "", UpgradeOnce, UpgradeAlternate:
	default:
		return fmt.Errorf("field %s.mode: %q is not an upgrade mode (want \"once\" or \"alternate\")", field, u.Mode)
	}
	switch {
	case u.From == "":
		return fmt.Errorf("field %s.from: the old build is required: a package (\"./v1\") or a git revision (\"git:main\")", field)
	case strings.HasPrefix(u.From, gitPrefix):
		rev := strings.TrimPrefix(u.From, gitPrefix)
		if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, " \t\n") {
			return fmt.Errorf("field %s.from: %q does not name a git revision (want e.g. \"git:main\" or \"git:3f2a1c0\")", field, u.From)
		}
	case !strings.HasPrefix(u.From, "./") && !strings.HasPrefix(u.From, "../"):
		return fmt.Errorf("field %s.from: %q is neither a package relative to the config (\"./v1\") nor a git revision (\"git:main\")", field, u.From)
	}
	return nil
}

// buildFor says which build incarnation k (1-based) of a node with upgrade u runs when
// no plan says otherwise.
func (u *UpgradeConfig) buildFor(k int) string {
	switch {
	case k <= 1:
		return BuildOld
	case u.Mode == UpgradeAlternate && k%2 == 1:
		return BuildOld
	}
	return BuildNew
}

// nodeBuild is one compiled build of a node.
type nodeBuild struct {
	module wazero.CompiledModule
	alloc  experimental.MemoryAllocator
	loc    *goloc.Table
	label  string // short hash of the module, for the start line
}

// upgradeNodes returns the indexes (AllNodes order) of the nodes with an upgrade.
func upgradeNodes(cfg *Config) []int {
	var out []int
	for i, n := range cfg.AllNodes() {
		if n.Upgrade != nil {
			out = append(out, i)
		}
	}
	return out
}

// buildOld builds the old build of node n: the package From, or node n's package at
// git revision From.
func buildOld(ctx context.Context, cfg *Config, n NodeConfig) (string, error) {
	spec := buildSpec(cfg, n)
	field := "upgrade.from of node " + n.Name
	if rev, ok := strings.CutPrefix(n.Upgrade.From, gitPrefix); ok {
		dir, err := revisionDir(ctx, cfg.Dir, rev)
		if err != nil {
			return "", fmt.Errorf("%s: %s: %w", cfg.Path, field, err)
		}
		spec.Dir = dir
	} else if dir := filepath.Join(cfg.Dir, n.Upgrade.From); fileExists(filepath.Join(dir, "go.mod")) {
		// A module of its own (the old release of a dependency needs its own go.mod):
		// build its main package there.
		spec.Dir, spec.Pkg = dir, "."
	} else {
		spec.Pkg = n.Upgrade.From
	}
	// A separate overlay directory: the old build's patched files are not the new one's.
	spec.ConfigPath = cfg.Path + "#upgrade-from=" + n.Upgrade.From
	p, err := build.Node(ctx, spec)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", cfg.Path, field, err)
	}
	return p, nil
}

// checkRevision checks that the git revision of node n's old build, if it has one,
// exists (and extracts it).
func checkRevision(ctx context.Context, cfg *Config, n NodeConfig) error {
	rev, ok := strings.CutPrefix(n.Upgrade.From, gitPrefix)
	if !ok {
		return nil
	}
	if _, err := revisionDir(ctx, cfg.Dir, rev); err != nil {
		return fmt.Errorf("%s: upgrade.from of node %s: %w", cfg.Path, n.Name, err)
	}
	return nil
}

// revisionDir extracts git revision rev of the repository that holds dir into
// seedfall's cache (once per commit) and returns dir's counterpart in it.
func revisionDir(ctx context.Context, dir, rev string) (string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("the config is not in a git repository: %w", err)
	}
	sha, err := git("rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("no commit %q in %s: %w", rev, top, err)
	}
	rel, err := filepath.Rel(evalSymlinks(top), evalSymlinks(dir))
	if err != nil {
		return "", err
	}
	root := filepath.Join(build.CacheDir(), "revisions", sha)
	if _, err := os.Stat(root); err != nil {
		if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
			return "", err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(root), sha+".tmp-*")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", sha)
		archive.Dir = top
		untar := exec.CommandContext(ctx, "tar", "-x", "-C", tmp)
		pipe, err := archive.StdoutPipe()
		if err != nil {
			return "", err
		}
		untar.Stdin = pipe
		var aerr, uerr strings.Builder
		archive.Stderr, untar.Stderr = &aerr, &uerr
		if err := untar.Start(); err != nil {
			return "", fmt.Errorf("tar: %w", err)
		}
		if err := archive.Run(); err != nil {
			untar.Wait()
			return "", fmt.Errorf("git archive %s: %v: %s", sha, err, strings.TrimSpace(aerr.String()))
		}
		if err := untar.Wait(); err != nil {
			return "", fmt.Errorf("extract git archive %s: %v: %s", sha, err, strings.TrimSpace(uerr.String()))
		}
		// Another process may have extracted it meanwhile; both copies are the same.
		if err := os.Rename(tmp, root); err != nil && !errors.Is(err, os.ErrExist) {
			if _, serr := os.Stat(root); serr != nil {
				return "", err
			}
		}
	}
	out := filepath.Join(root, rel)
	if _, err := os.Stat(out); err != nil {
		return "", fmt.Errorf("the config's directory %s does not exist at revision %s", rel, rev)
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func evalSymlinks(p string) string {
	if q, err := filepath.EvalSymlinks(p); err == nil {
		return q
	}
	return p
}

// restartBuild decides which build the restart after crash f of node n runs: the
// plan's, else the mode's for the next incarnation. "" for a node without upgrade.
func (w *world) restartBuild(n *node, f Fault) string {
	if n.cfg.Upgrade == nil || f.RestartNS <= 0 {
		return ""
	}
	if f.Build == BuildOld || f.Build == BuildNew {
		return f.Build
	}
	return n.cfg.Upgrade.buildFor(n.lives + 1)
}

// selectBuild puts the build incarnation k of n runs in place before it starts and
// returns its label ("" for a node without upgrade). next is the build a crash asked
// for, "" to follow the mode.
func (n *node) selectBuild(k int, next string) string {
	if n.cfg.Upgrade == nil {
		return ""
	}
	if next == "" {
		next = n.cfg.Upgrade.buildFor(k)
	}
	b := n.builds[1]
	if next == BuildOld {
		b = n.builds[0]
	}
	n.module, n.alloc, n.loc = b.module, b.alloc, b.loc
	return b.label
}

// setUpgradeFrom (engineapi.SetUpgradeFrom) makes rev, a git revision of the
// repository the config is in, the old build of every node with an "upgrade" option,
// keeping each node's mode: the Action's input upgrade-from and the -upgrade-from flag
// of replay and run, which check a change against the data its base revision writes. It returns the names of those nodes, in
// config order. A config without any node with an upgrade is an error: which nodes
// should change builds is the config's choice, not the revision's.
func (c *Config) setUpgradeFrom(rev string) ([]string, error) {
	var names []string
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Upgrade == nil {
			continue
		}
		u := *n.Upgrade
		u.From = gitPrefix + strings.TrimPrefix(rev, gitPrefix)
		if err := u.validate(fmt.Sprintf("nodes[%d].upgrade", i)); err != nil {
			return nil, fmt.Errorf("%s: upgrade-from %q: %w", c.Path, rev, err)
		}
		n.Upgrade = &u
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: upgrade-from %q: no node has an \"upgrade\" option, so no node could start on that revision's build; add \"upgrade\": {\"from\": \"git:main\"} to the node whose data must survive the upgrade (docs/faults.md)", c.Path, rev)
	}
	return names, nil
}
