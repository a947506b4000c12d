package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/report"
)

// writeFiles writes report.html, report.md, junit.xml, results.jsonl and the shrunk
// plans into dir.
func writeFiles(dir string, d *report.Data, results []engine.Result, groups []*group) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report directory: %w", err)
	}
	render := []struct {
		name string
		fn   func(io.Writer) error
	}{
		{ReportHTML, func(w io.Writer) error { return report.HTML(w, d) }},
		{ReportMarkdown, func(w io.Writer) error { return report.Markdown(w, d, 0) }},
		{JUnitXML, func(w io.Writer) error { return report.JUnit(w, d) }},
		{ResultsJSONL, func(w io.Writer) error { return WriteResults(w, results) }},
	}
	for _, f := range render {
		var buf bytes.Buffer
		if err := f.fn(&buf); err != nil {
			return fmt.Errorf("render %s: %w", f.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	for _, g := range groups {
		if len(g.shrunk) == 0 || g.status != statusNew && !g.searchOnly() {
			continue
		}
		fd := filepath.Join(dir, faultsDir)
		planPath := filepath.Join(fd, g.sig+".json")
		plan := engine.FaultPlan{Seed: g.rep().Seed, Faults: g.shrunk, Swarm: g.rep().Swarm, Provenance: engineapi.ForPlan(g.rep().Provenance, planPath)}
		data, err := json.MarshalIndent(plan, "", "  ")
		if err != nil {
			return err
		}
		if err := os.MkdirAll(fd, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(fd, g.sig+".json"), append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("write shrunk plan: %w", err)
		}
	}
	return nil
}

// publish writes the job summary, the annotations and the publish artifact, then the
// PR comment and the check run (the commit status when the token may not create check
// runs). Nothing here fails the run: a read-only token gets a notice, other API errors
// a warning.
func (r *runner) publish(ctx context.Context, d *report.Data) {
	if r.env.SummaryPath != "" {
		var buf bytes.Buffer
		if err := report.Markdown(&buf, d, summaryLimit); err != nil {
			r.action.Warningf("seedfall: job summary: %v", err)
		} else if err := appendFile(r.env.SummaryPath, buf.Bytes()); err != nil {
			r.action.Warningf("seedfall: job summary %s: %v", r.env.SummaryPath, err)
		}
	}
	loc, err := newLocator(r.env.Workspace, r.in.anchor())
	places := loc.locations(d)
	if err != nil && len(places) > 0 {
		r.printf("seedfall ci: annotations carry no file positions: %v", err)
	}
	r.annotate(d, places)
	if err := writeArtifact(r.in.Out, newArtifact(r.ev.PR, r.ev.SHA, d, places)); err != nil {
		r.action.Warningf("seedfall: publish artifact: %v", err)
	}

	if r.client == nil || r.ev.SHA == "" {
		return
	}
	if r.in.Token == "" {
		r.action.Noticef("seedfall: no token: skipped the PR comment and the check run; the job summary and annotations carry the report")
		return
	}
	pr := 0
	if r.in.Comment {
		pr = r.ev.PR
	}
	skipped := r.post(ctx, d, places, pr, r.ev.SHA)
	if len(skipped) > 0 {
		why := "the token is read-only"
		if r.ev.Fork {
			why = "the token of a fork pull request is read-only"
		}
		r.action.Noticef("seedfall: %s: skipped %s; the job summary and annotations carry the report (for fork pull requests, see the two-workflow recipe in docs/action.md)", why, strings.Join(skipped, " and "))
	}
}

// post upserts the sticky comment on pull request pr (none when 0) and creates the
// check run on sha, falling back to the commit status when the token may not create
// check runs. It returns what a read-only token made it skip.
func (r *runner) post(ctx context.Context, d *report.Data, places map[string]groupPlace, pr int, sha string) (skipped []string) {
	var body bytes.Buffer
	mdErr := report.Markdown(&body, d, commentLimit-len(CommentMarker)-1)
	if mdErr != nil {
		r.action.Warningf("seedfall: PR comment and check summary: %v", mdErr)
	}
	if pr != 0 && mdErr == nil {
		created, err := upsertComment(ctx, r.client, r.ev.Owner, r.ev.Repo, pr, CommentMarker+"\n"+body.String())
		switch {
		case err == nil:
			verb := "updated"
			if created {
				verb = "created"
			}
			r.printf("seedfall ci: PR #%d comment %s", pr, verb)
		case readOnly(err):
			skipped = append(skipped, "the PR comment")
		default:
			r.action.Warningf("seedfall: PR comment: %v", err)
		}
	}
	s := d.Summary
	desc := fmt.Sprintf("%d new, %d known, %d fixed; %d/%d seeds passed", s.New, s.Known, s.Fixed, s.Passed, s.Total)
	ann := checkAnnotations(d, places)
	id, err := createCheckRun(ctx, r.client, r.ev.Owner, r.ev.Repo, sha, s.Conclusion, desc, body.String(), s.ReportURL, ann)
	switch {
	case err == nil:
		r.printf("seedfall ci: check run %s %d on %s: %s, %d annotations", checkName, id, shortSHA(sha), s.Conclusion, len(ann))
		return skipped
	case readOnly(err):
		r.printf("seedfall ci: the token may not create check runs (checks: write); setting the commit status instead")
	default:
		r.action.Warningf("seedfall: %v; setting the commit status instead", err)
	}
	err = setStatus(ctx, r.client, r.ev.Owner, r.ev.Repo, sha, s.Conclusion, desc, s.ReportURL)
	switch {
	case readOnly(err):
		skipped = append(skipped, "the commit status")
	case err != nil:
		r.action.Warningf("seedfall: %v", err)
	}
	return skipped
}

// checkAnnotations are the check run's annotations: one per failing signature that
// has a place in the repository, new ones as failures and known ones as warnings.
func checkAnnotations(d *report.Data, places map[string]groupPlace) []*github.CheckRunAnnotation {
	var out []*github.CheckRunAnnotation
	for _, g := range d.Groups {
		p, ok := places[g.Signature]
		if !ok || p.Loc == nil || (g.Status != statusNew && g.Status != statusKnown) {
			continue
		}
		level := "failure"
		if g.Status == statusKnown {
			level = "warning"
		}
		out = append(out, &github.CheckRunAnnotation{
			Path: github.String(p.Loc.Path), StartLine: github.Int(p.Loc.Line), EndLine: github.Int(p.Loc.Line),
			AnnotationLevel: github.String(level),
			Title:           github.String(fmt.Sprintf("seedfall %s failure %s", g.Status, g.Signature)),
			Message:         github.String(annotationMessage(g, p)),
		})
	}
	return out
}

// annotationMessage is the text of a signature's annotation: the reason, the seeds, the
// guest position when it is not a file of the repository, and the replay command.
func annotationMessage(g report.Group, p groupPlace) string {
	var found []string
	if len(g.Seeds) > 0 {
		found = append(found, "seeds "+seedList(g.Seeds, 10))
	}
	if g.Search != "" {
		found = append(found, g.Search)
	}
	msg := fmt.Sprintf("%s: %s (%s)", g.Signature, g.Reason, strings.Join(found, "; "))
	if p.Frame != "" && (p.Loc == nil || !strings.HasSuffix(p.Loc.String(), p.Frame)) {
		msg += "; guest frame " + p.Frame
	}
	if g.Replay != "" {
		msg += "; replay: " + g.Replay
	}
	return msg
}

// annotate prints an error annotation per new signature, at most maxAnnotations, and a
// line counting the rest. A signature with a place in the repository is annotated at
// its file and line, so GitHub shows it on the pull request's diff without a token.
func (r *runner) annotate(d *report.Data, places map[string]groupPlace) {
	var news []report.Group
	for _, g := range d.Groups {
		if g.Status == statusNew {
			news = append(news, g)
		}
	}
	for i, g := range news {
		if i == maxAnnotations {
			r.action.WithFieldsMap(map[string]string{"title": "seedfall new failure"}).
				Errorf("%d more new failure signatures; see the report", len(news)-maxAnnotations)
			break
		}
		fields := map[string]string{"title": "seedfall new failure"}
		p := places[g.Signature]
		if p.Loc != nil {
			fields["file"], fields["line"] = p.Loc.Path, fmt.Sprint(p.Loc.Line)
		}
		r.action.WithFieldsMap(fields).Errorf("%s", annotationMessage(g, p))
	}
}

func seedList(seeds []uint64, max int) string {
	var parts []string
	for i, s := range seeds {
		if i == max {
			parts = append(parts, fmt.Sprintf("… %d more", len(seeds)-max))
			break
		}
		parts = append(parts, fmt.Sprint(s))
	}
	return strings.Join(parts, ", ")
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// setOutputs writes the step outputs. go-githubactions panics when the file cannot be
// written; that becomes an error here.
func (r *runner) setOutputs(d *report.Data) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("write outputs to GITHUB_OUTPUT %s: %v", r.env.OutputPath, p)
		}
	}()
	s := d.Summary
	r.action.SetOutput("new", fmt.Sprint(s.New))
	r.action.SetOutput("known", fmt.Sprint(s.Known))
	r.action.SetOutput("fixed", fmt.Sprint(s.Fixed))
	r.action.SetOutput("report", filepath.Join(r.in.Out, ReportHTML))
	r.action.SetOutput("conclusion", s.Conclusion)
	return nil
}
