package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
	"github.com/seedfall/seedfall/templates"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// pageTemplate is parsed once; a broken embedded template is a build defect.
var pageTemplate = template.Must(template.New("report.html.tmpl").ParseFS(templates.FS, "report.html.tmpl"))

// markdownToHTML renders the Markdown summary into the report. Raw HTML stays off (no
// html.WithUnsafe): goldmark then omits raw HTML and drops javascript: links, and the
// Markdown renderer already fences all guest text, so guest text reaches the page only
// as escaped text.
var markdownToHTML = goldmark.New(goldmark.WithExtensions(extension.Table))

// HTML writes the triage report as one self-contained HTML file: style and script are
// inline, and nothing is fetched from anywhere. A Content-Security-Policy allows only
// the report's own script (by hash), so even a guest string that slipped through as
// markup could not run.
//
// The report shows the counts, one card per signature (new first, then known, then
// fixed) with its seeds, minimal fault schedule, a per-node timeline of the faults,
// the failure, the trace excerpt and a replay command with a copy button; then the
// properties, the durability mutations, and the pull-request comment as posted.
func HTML(w io.Writer, d *Data) error {
	css, err := templates.FS.ReadFile("report.css")
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	js, err := templates.FS.ReadFile("report.js")
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	sum := sha256.Sum256(js)
	v := page{
		Title: d.title(),
		// The style sheet and the script are our own embedded files, not guest text.
		CSS: template.CSS(css),
		JS:  template.JS(js),
		CSP: "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-" +
			base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'",
		S:           d.Summary,
		Determinism: determinismLine(d.Summary),
		DetClass:    "off",
		Mutants:     d.Mutants,
		Coverage:    d.Coverage,
	}
	if d.Summary.Checked {
		v.DetClass = "ok"
		if d.Summary.Divergences > 0 {
			v.DetClass = "bad"
		}
	}
	if v.SummaryHTML, err = renderMarkdown(mdCounts(d)); err != nil {
		return err
	}
	var comment bytes.Buffer
	if err := Markdown(&comment, d, CommentLimit); err != nil {
		comment.Reset()
		if err := Markdown(&comment, d, 0); err != nil {
			return err
		}
	}
	if v.CommentHTML, err = renderMarkdown(comment.String()); err != nil {
		return err
	}
	for _, p := range sortedProperties(d.Properties) {
		r := propRow{Name: p.Name, Kind: p.Kind, Reached: p.Reached, Held: p.Held, Verdict: p.verdict()}
		r.Class = "FAIL"
		if r.Verdict == "ok" {
			r.Class = "ok"
		}
		v.Properties = append(v.Properties, r)
	}
	for i, g := range orderedGroups(d.Groups) {
		v.Cards = append(v.Cards, newCard(i+1, g))
	}
	for _, m := range d.Mutants {
		if m.Killed {
			v.Killed++
		}
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, v); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// renderMarkdown renders our Markdown with goldmark. The result is trusted as HTML
// only because goldmark runs without raw HTML and every guest string in our
// Markdown sits in a code span or a fenced block.
func renderMarkdown(md string) (template.HTML, error) {
	var b bytes.Buffer
	if err := markdownToHTML.Convert([]byte(md), &b); err != nil {
		return "", fmt.Errorf("html report: render markdown: %w", err)
	}
	out := b.String()
	if low := strings.ToLower(out); strings.Contains(low, "<script") || strings.Contains(low, "<iframe") ||
		strings.Contains(low, "href=\"javascript:") {
		// Cannot happen with raw HTML off; if goldmark ever changes that, show the
		// source as text rather than trust it.
		return template.HTML("<pre>" + template.HTMLEscapeString(md) + "</pre>"), nil
	}
	return template.HTML(out), nil
}

// page is what report.html.tmpl renders.
type page struct {
	Title       string
	CSS         template.CSS
	JS          template.JS
	CSP         string
	S           Summary
	Determinism string
	DetClass    string
	SummaryHTML template.HTML
	CommentHTML template.HTML
	Cards       []card
	Properties  []propRow
	Mutants     []Mutant
	Killed      int
	Coverage    *coverage.Report
}

// propRow is one row of the property table.
type propRow struct {
	Name, Kind     string
	Reached, Held  int
	Verdict, Class string
}

// card is one signature.
type card struct {
	N      int
	ID     string
	G      Group
	Status string // CSS class and badge text
	Seeds  string
	At     string
	// ShrunkAt is when the minimal schedule's own run fails ("" when unknown).
	ShrunkAt string
	Shrunk   []string
	// Before are the representative seed's faults up to the failure, one line each as
	// the command line prints them (the timeline shows them only in tooltips).
	Before   []string
	Timeline *timeline
	Trace    string
	ReplayID string
}

func newCard(n int, g Group) card {
	c := card{
		N:        n,
		ID:       fmt.Sprintf("card-%d", n),
		G:        g,
		Status:   cssClass(statusLabel(g.Status)),
		Seeds:    formatSeeds(g.Seeds, 0),
		At:       fmtNS(g.AtNS),
		Timeline: newTimeline(g),
		ReplayID: fmt.Sprintf("replay-%d", n),
	}
	for _, f := range g.Shrunk {
		c.Shrunk = append(c.Shrunk, f.String())
	}
	if g.ShrunkReason != "" && len(g.Shrunk) > 0 {
		c.ShrunkAt = fmtNS(g.ShrunkAtNS)
	}
	c.Before = faultsBeforeLines(g)
	if len(g.Trace) > 0 {
		lines := make([]string, len(g.Trace))
		for i, l := range g.Trace {
			lines[i] = printable(l)
		}
		c.Trace = strings.Join(lines, "\n")
	}
	return c
}

// timeline places a run's faults on one lane per node, by virtual time.
type timeline struct {
	Lanes    []lane
	Ticks    []tick
	FailLeft string // percent; empty when the failure time is unknown
	FailAt   string
	Legend   []string
	HasKept  bool
}

type lane struct {
	Node  string
	Marks []mark
}

type mark struct {
	Left, Width string // percent of the run
	Class       string // fault class, for the colour
	Point       bool   // an instant, drawn as a dot
	Kept        bool   // in the minimal schedule
	Title       string
}

type tick struct {
	Left, Label, Class string
}

// newTimeline lays out the representative seed's faults, or the minimal schedule when
// the full one is not known. It returns nil when there is nothing to draw.
func newTimeline(g Group) *timeline {
	faults := g.Faults
	if len(faults) == 0 {
		faults = g.Shrunk
	}
	if len(faults) == 0 {
		return nil
	}
	end := g.AtNS
	for _, f := range faults {
		end = max(end, f.AtNS+max(f.Span(), 0))
	}
	if end <= 0 {
		end = 1
	}
	total := float64(end) * 1.04
	pct := func(ns float64) string {
		return strconv.FormatFloat(math.Max(0, math.Min(100, ns/total*100)), 'f', 3, 64)
	}

	kept := map[string]bool{}
	for _, f := range g.Shrunk {
		kept[faultKey(f)] = true
	}
	// A fault whose state holds (a crash without a restart time, a clock skew) lasts
	// until the node's next fault of its kind (for a crash: something restarted the
	// node) or the end of the run.
	until := make([]float64, len(faults))
	for i, f := range faults {
		until[i] = total
		for _, h := range faults[i+1:] {
			if h.Node == f.Node && h.Kind == f.Kind && h.AtNS > f.AtNS {
				until[i] = float64(h.AtNS)
				break
			}
		}
	}
	byNode := map[string][]mark{}
	hasKept := false
	classes := map[string]bool{}
	for i, f := range faults {
		cls := f.Class()
		classes[cls] = true
		m := mark{Left: pct(float64(f.AtNS)), Class: cls, Kept: kept[faultKey(f)] && len(g.Faults) > 0, Title: oneLine(f.String())}
		if m.Kept {
			m.Title += " · kept by shrink"
			hasKept = true
		}
		switch span := f.Span(); {
		case span > 0:
			m.Width = pct(float64(span))
		case span < 0:
			m.Width = pct(until[i] - float64(f.AtNS))
		default:
			m.Point = true
		}
		node := oneLine(f.Node)
		byNode[node] = append(byNode[node], m)
	}
	t := &timeline{HasKept: hasKept}
	nodes := make([]string, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		t.Lanes = append(t.Lanes, lane{Node: n, Marks: byNode[n]})
	}
	for c := range classes {
		t.Legend = append(t.Legend, c)
	}
	sort.Strings(t.Legend)
	if g.AtNS > 0 {
		t.FailLeft = pct(float64(g.AtNS))
		t.FailAt = fmtNS(g.AtNS)
	}
	step := niceStep(total / 5)
	for i := int64(0); float64(i*step) <= total; i++ {
		tk := tick{Left: pct(float64(i * step)), Label: fmtNS(i * step)}
		if i == 0 {
			tk.Class = "first"
		} else if float64((i+1)*step) > total && float64(i*step)/total > 0.93 {
			tk.Class = "last"
		}
		t.Ticks = append(t.Ticks, tk)
	}
	return t
}

// faultKey identifies a fault across the full and the shrunk schedule.
func faultKey(f engine.Fault) string {
	return fmt.Sprintf("%d|%s|%s", f.AtNS, f.Kind, f.Node)
}

// niceStep rounds a duration up to 1, 2 or 5 times a power of ten nanoseconds.
func niceStep(ns float64) int64 {
	step := int64(1)
	for {
		for _, m := range []int64{1, 2, 5} {
			if float64(step*m) >= ns {
				return step * m
			}
		}
		if step > math.MaxInt64/100 {
			return step
		}
		step *= 10
	}
}

// cssClass keeps the letters, digits, '-' and '_' of s.
func cssClass(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, s)
}

// faultsBeforeLines are g's faults at or before its failure (all of them when the
// failure time is unknown), one line each, guest text made one-line.
func faultsBeforeLines(g Group) []string {
	var out []string
	for _, f := range g.Faults {
		if g.AtNS > 0 && f.AtNS > g.AtNS {
			continue
		}
		out = append(out, oneLine(f.String()))
	}
	return out
}
