package ci

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docTemplate returns the YAML block that follows the line naming file in
// docs/action.md ("`.github/workflows/seedfall.yml`:").
func docTemplate(t *testing.T, doc, file string) string {
	t.Helper()
	i := strings.Index(doc, "`"+file+"`:\n\n```yaml\n")
	if i < 0 {
		t.Fatalf("docs/action.md: no template for %s (a line \"`%s`:\" and a yaml block)", file, file)
	}
	rest := doc[i+len("`"+file+"`:\n\n```yaml\n"):]
	end := strings.Index(rest, "\n```\n")
	if end < 0 {
		t.Fatalf("docs/action.md: the %s template is not closed", file)
	}
	return rest[:end+1]
}

// code drops comment lines and blank lines.
func code(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestWorkflowTemplates: the two-workflow recipe's templates in docs/action.md are
// actionlint-clean, the repository's own workflows are those templates (with the action
// from this checkout or main, and the kvlog example), the sweep's pull-request job holds
// no write permission and uploads publish.json, and the publisher never checks out.
func TestWorkflowTemplates(t *testing.T) {
	root := repoRoot(t)
	docB, err := os.ReadFile(filepath.Join(root, "docs", "action.md"))
	must(t, err)
	doc := string(docB)
	sweep := docTemplate(t, doc, ".github/workflows/seedfall.yml")
	pub := docTemplate(t, doc, ".github/workflows/seedfall-publish.yml")

	own := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", name))
		must(t, err)
		return string(b)
	}
	r := strings.NewReplacer("uses: seedfall/seedfall@v1", "uses: ./", "config: seedfall.json", "config: examples/kvlog/seedfall.fixed.json", "seeds: 1-500", "seeds: 1-100")
	if got, want := code(own("seedfall.yml")), code(r.Replace(sweep)); got != want {
		t.Errorf(".github/workflows/seedfall.yml is not the docs' template:\n%s\nwant:\n%s", got, want)
	}
	if got, want := code(own("seedfall-publish.yml")), code(strings.ReplaceAll(pub, "seedfall/seedfall@v1", "seedfall/seedfall@main")); got != want {
		t.Errorf(".github/workflows/seedfall-publish.yml is not the docs' template:\n%s\nwant:\n%s", got, want)
	}

	prJob := sweep[strings.Index(sweep, "  pull-request:"):]
	if regexp.MustCompile(`: write`).MatchString(prJob) || !strings.Contains(prJob, "path: seedfall-report/"+artifactFile) || !strings.Contains(prJob, "name: seedfall-publish") {
		t.Errorf("the pull request job must hold no write permission and upload %s as seedfall-publish:\n%s", artifactFile, prJob)
	}
	if strings.Contains(code(pub), "actions/checkout") || !strings.Contains(pub, "publish: seedfall-publish") || !strings.Contains(pub, "run-id: ${{ github.event.workflow_run.id }}") {
		t.Errorf("the publisher must not check out, and must publish the triggering run's artifact:\n%s", pub)
	}
	for _, p := range []string{"checks: write", "pull-requests: write", "actions: read"} {
		if !strings.Contains(pub, p) {
			t.Errorf("the publisher lacks %s", p)
		}
	}

	// The templates as a user's repository holds them.
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	wf := filepath.Join(dir, ".github", "workflows")
	must(t, os.MkdirAll(wf, 0o755))
	must(t, os.WriteFile(filepath.Join(wf, "seedfall.yml"), []byte(sweep), 0o644))
	must(t, os.WriteFile(filepath.Join(wf, "seedfall-publish.yml"), []byte(pub), 0o644))
	if out, err := actionlint(t, dir, filepath.Join(wf, "seedfall.yml"), filepath.Join(wf, "seedfall-publish.yml")); err != nil {
		t.Errorf("actionlint on the docs' templates: %v\n%s", err, out)
	}
}

// TestReleaseWorkflow: the release workflow builds both platforms for ghcr.io on a
// version tag, and its rewrite of action.yml (a sed of the one "  image: Dockerfile"
// line) finds its line.
func TestReleaseWorkflow(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	must(t, err)
	rel := string(b)
	for _, want := range []string{`tags: ["v*.*.*"]`, "platforms: linux/amd64,linux/arm64", "registry: ghcr.io", "push: true", "packages: write",
		`sed -i "s|^  image: Dockerfile\$|  image: docker://${IMAGE}:${version}|" action.yml`} {
		if !strings.Contains(rel, want) {
			t.Errorf("release.yml lacks %q", want)
		}
	}
	a, err := os.ReadFile(filepath.Join(root, "action.yml"))
	must(t, err)
	if n := len(regexp.MustCompile(`(?m)^  image: Dockerfile$`).FindAllString(string(a), -1)); n != 1 {
		t.Errorf("action.yml has %d lines \"  image: Dockerfile\", want 1 (main builds the Dockerfile; the release rewrites that line)", n)
	}
}
