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

	"github.com/seedfall/seedfall/engine"
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
		if len(g.shrunk) == 0 || g.status != statusNew {
			continue
		}
		fd := filepath.Join(dir, FaultsDir)
		planPath := filepath.Join(fd, g.sig+".json")
		plan := engine.FaultPlan{Seed: g.rep().Seed, Faults: g.shrunk, Provenance: g.rep().Provenance.ForPlan(planPath)}
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

// publish writes the job summary and annotations, then the PR comment and commit status.
// Nothing here fails the run: a read-only token gets a notice, other API errors a warning.
func (r *runner) publish(ctx context.Context, d *report.Data) {
	if r.env.SummaryPath != "" {
		var buf bytes.Buffer
		if err := report.Markdown(&buf, d, SummaryLimit); err != nil {
			r.action.Warningf("seedfall: job summary: %v", err)
		} else if err := appendFile(r.env.SummaryPath, buf.Bytes()); err != nil {
			r.action.Warningf("seedfall: job summary %s: %v", r.env.SummaryPath, err)
		}
	}
	r.annotate(d)

	if r.client == nil || r.ev.SHA == "" {
		return
	}
	if r.in.Token == "" {
		r.action.Noticef("seedfall: no token: skipped the PR comment and commit status; the job summary and annotations carry the report")
		return
	}
	var skipped []string
	if r.ev.PR != 0 && r.in.Comment {
		var buf bytes.Buffer
		buf.WriteString(CommentMarker + "\n")
		err := report.Markdown(&buf, d, CommentLimit-len(CommentMarker)-1)
		if err == nil {
			var created bool
			created, err = upsertComment(ctx, r.client, r.ev.Owner, r.ev.Repo, r.ev.PR, buf.String())
			if err == nil {
				verb := "updated"
				if created {
					verb = "created"
				}
				r.printf("seedfall ci: PR #%d comment %s", r.ev.PR, verb)
			}
		}
		switch {
		case readOnly(err):
			skipped = append(skipped, "the PR comment")
		case err != nil:
			r.action.Warningf("seedfall: PR comment: %v", err)
		}
	}
	s := d.Summary
	desc := fmt.Sprintf("%d new, %d known, %d fixed; %d/%d seeds passed", s.New, s.Known, s.Fixed, s.Passed, s.Total)
	err := setStatus(ctx, r.client, r.ev.Owner, r.ev.Repo, r.ev.SHA, s.Conclusion, desc, s.ReportURL)
	switch {
	case readOnly(err):
		skipped = append(skipped, "the commit status")
	case err != nil:
		r.action.Warningf("seedfall: %v", err)
	}
	if len(skipped) > 0 {
		why := "the token is read-only"
		if r.ev.Fork {
			why = "the token of a fork pull request is read-only"
		}
		r.action.Noticef("seedfall: %s: skipped %s; the job summary and annotations carry the report", why, strings.Join(skipped, " and "))
	}
}

// annotate prints an error annotation per new signature, at most MaxAnnotations, and a
// line counting the rest.
func (r *runner) annotate(d *report.Data) {
	var news []report.Group
	for _, g := range d.Groups {
		if g.Status == statusNew {
			news = append(news, g)
		}
	}
	for i, g := range news {
		if i == MaxAnnotations {
			r.action.WithFieldsMap(map[string]string{"title": "seedfall new failure"}).
				Errorf("%d more new failure signatures; see the report", len(news)-MaxAnnotations)
			break
		}
		r.action.WithFieldsMap(map[string]string{"title": "seedfall new failure"}).
			Errorf("%s: %s (seeds %s); replay: %s", g.Signature, g.Reason, seedList(g.Seeds, 10), g.Replay)
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
