package ci

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// UpgradeNode is a node of the config that changes builds at a restart (its "upgrade"
// option), as Engine.UpgradeFrom reports it.
type UpgradeNode struct {
	Name string
	Mode string // "once" or "alternate"
}

// upgrade is what input upgrade-from resolved to for this run.
type upgrade struct {
	label  string // how the comment names the old build: "base", "the previous commit", "main"
	commit string // its full commit hash
	nodes  []UpgradeNode
}

// checkRevisionName refuses what git could take for an option or that a log line
// could not show, before any git command sees it.
func checkRevisionName(rev string) error {
	switch {
	case rev == "":
		return errors.New("empty revision")
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("%q starts with '-' (want base, a branch, a tag or a commit hash)", rev)
	case len(rev) > 255:
		return fmt.Errorf("a revision of %d bytes is too long (want base, a branch, a tag or a commit hash)", len(rev))
	}
	for _, c := range rev {
		if c <= ' ' || c == 0x7f {
			return fmt.Errorf("%q holds a space or control character (want base, a branch, a tag or a commit hash)", rev)
		}
	}
	return nil
}

// isCommitHash reports whether s is a full SHA-1 or SHA-256 commit hash in lowercase hex.
func isCommitHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// upgradeRevision says which revision input upgrade-from names for this event, and how
// the comment names it.
func (r *runner) upgradeRevision() (rev, label string, err error) {
	if r.in.UpgradeFrom != upgradeBase {
		return strings.TrimPrefix(r.in.UpgradeFrom, "git:"), r.in.UpgradeFrom, nil
	}
	var field string
	switch r.ev.Name {
	case "pull_request", "pull_request_target":
		field, label = "pull_request.base.sha", "base"
	case "push":
		field, label = "before", "the previous commit"
	default:
		ev := r.ev.Name
		if ev == "" {
			ev = "a local run"
		}
		return "", "", fmt.Errorf("input upgrade-from: base is the pull request's base commit or the commit before a push, and %s has neither: name a revision (e.g. upgrade-from: main)", ev)
	}
	switch b := r.ev.Base; {
	case b == "":
		return "", "", fmt.Errorf("input upgrade-from: base: the %s event has no %s", r.ev.Name, field)
	case strings.Trim(b, "0") == "" && r.ev.Name == "push":
		return "", "", fmt.Errorf("input upgrade-from: base: this push created the branch (%s is all zeros), so there is no previous commit: name a revision (e.g. upgrade-from: main)", field)
	case !isCommitHash(b):
		return "", "", fmt.Errorf("input upgrade-from: base: the event's %s %q is not a commit hash (40 or 64 lowercase hex digits)", field, clipRunes(b, 80))
	}
	return r.ev.Base, label, nil
}

// resolveUpgrade resolves input upgrade-from to a commit of the repository the config
// is in and hands it to the engine. Every problem is an error naming the input: a run
// asked to check an upgrade must not quietly check something else.
func (r *runner) resolveUpgrade(ctx context.Context) (*upgrade, error) {
	rev, label, err := r.upgradeRevision()
	if err != nil {
		return nil, err
	}
	if err := checkRevisionName(rev); err != nil {
		return nil, fmt.Errorf("input upgrade-from: %w", err)
	}
	dir := r.in.home()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		why := strings.TrimSpace(stderr.String())
		if why == "" {
			why = "no such commit"
		}
		what := label
		if label != rev {
			what += " (" + clipRunes(rev, 80) + ")"
		}
		return nil, fmt.Errorf("input upgrade-from: %s is not a commit of the repository at %s: %s; a shallow checkout lacks it: check out with actions/checkout's fetch-depth: 0", what, dir, why)
	}
	commit := strings.TrimSpace(string(out))
	nodes, err := r.eng.UpgradeFrom(ctx, r.in.Config, commit)
	if err != nil {
		return nil, fmt.Errorf("input upgrade-from: %w", err)
	}
	return &upgrade{label: label, commit: commit, nodes: nodes}, nil
}

// line says which build wrote and which read, for the comment and the report:
// "upgrade (server): data written by base 3f2a1c0, read by this PR's build 9e8d7c6".
func (u *upgrade) line(ev event) string {
	reader := "this build"
	switch {
	case ev.PR != 0:
		reader = "this PR's build"
	case ev.Name == "push":
		reader = "this push's build"
	}
	if ev.SHA != "" {
		reader += " " + shortSHA(ev.SHA)
	}
	old := u.label + " " + shortSHA(u.commit)
	if u.label == shortSHA(u.commit) || u.label == u.commit {
		old = shortSHA(u.commit)
	}
	return UpgradeLine(old, reader, u.nodes)
}

// UpgradeLine says which build (old) wrote the data of the upgrading nodes and which
// (reader) read it: "upgrade (server): data written by base 3f2a1c0, read by this
// PR's build 9e8d7c6", with a second part for the nodes that go back and forth
// (mode alternate). The Action's comment and report show it, and results files record
// it (engine.Provenance.Upgrade) so that seedfall report and merge keep it.
func UpgradeLine(old, reader string, nodes []UpgradeNode) string {
	var once, alt []string
	for _, n := range nodes {
		if n.Mode == "alternate" {
			alt = append(alt, n.Name)
		} else {
			once = append(once, n.Name)
		}
	}
	var parts []string
	if len(once) > 0 {
		parts = append(parts, fmt.Sprintf("upgrade (%s): data written by %s, read by %s", strings.Join(once, ", "), old, reader))
	}
	if len(alt) > 0 {
		parts = append(parts, fmt.Sprintf("upgrade and downgrade (%s): data written by %s, read by %s, and back at every restart", strings.Join(alt, ", "), old, reader))
	}
	return strings.Join(parts, "; ")
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// setUpgradeLine records line and the old build's revision in the provenance of each
// result (copied, so that a provenance the results share is not changed under another
// reader).
func setUpgradeLine(results []engine.Result, line, rev string) {
	for i := range results {
		p := engine.Provenance{}
		if results[i].Provenance != nil {
			p = *results[i].Provenance
		}
		p.Upgrade, p.UpgradeFrom = line, rev
		results[i].Provenance = &p
	}
}

// recordedUpgrade is the upgrade line that a saved sweep's results recorded: "" when
// none did, an error naming the file when they disagree (results of two sweeps).
func recordedUpgrade(in string, results []engine.Result) (line, rev string, err error) {
	first := uint64(0)
	for i, r := range results {
		u, v := "", ""
		if r.Provenance != nil {
			u, v = r.Provenance.Upgrade, r.Provenance.UpgradeFrom
		}
		if i == 0 {
			line, rev, first = u, v, r.Seed
			continue
		}
		if u != line || v != rev {
			return "", "", fmt.Errorf("%s: seeds %d and %d record different upgrades (%q, %q): results of two sweeps", in, first, r.Seed, line, u)
		}
	}
	return line, rev, nil
}
