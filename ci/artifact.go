package ci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/report"
)

// The publish artifact: what a pull request's sweep (run with the pull request's
// read-only token) hands to the publisher (a workflow_run workflow with write
// permissions that never checks out or runs the pull request's code). The sweep writes
// it as artifactFile in the report directory; the sweep workflow uploads that file
// alone as an artifact, and `seedfall ci -publish DIR` reads it back.
//
// Everything in it was produced by code the pull request controls, so the publisher
// trusts none of it: the pull request and head commit come from the workflow_run event
// (the artifact's copies must agree, or nothing is posted), the file is capped at
// artifactLimit bytes and decoded strictly (unknown fields, a wrong version, counts
// that do not add up are refused), every string is checked (length, control
// characters, HTML, Markdown links, the comment marker), the conclusion is recomputed
// from the counts with the publisher's own fail-on, and the Markdown is rendered by
// the publisher with guest text in code spans.
const (
	artifactFile    = "publish.json"
	artifactVersion = 1
	// artifactLimit caps the artifact file: 1 MiB holds thousands of signatures.
	artifactLimit = 1 << 20
	// maxArtifactString caps each string in the artifact.
	maxArtifactString = 4096
	// maxArtifactGroups caps the signatures in the artifact.
	maxArtifactGroups = 2000
)

// artifact is the publish artifact's schema, version 1.
type artifact struct {
	Version    int                `json:"version"`
	PR         int                `json:"pr"`       // checked against the workflow_run event
	HeadSHA    string             `json:"head_sha"` // checked against the workflow_run event
	Summary    artifactSummary    `json:"summary"`
	Groups     []artifactGroup    `json:"groups"`
	Properties []artifactProperty `json:"properties"`

	file string // where readArtifact read it
}

// artifactSummary is report.Summary without what the publisher decides itself (the
// conclusion, the report URL).
type artifactSummary struct {
	Config        string `json:"config"`
	Seeds         string `json:"seeds"`
	Ref           string `json:"ref"`
	Total         int    `json:"total"`
	Passed        int    `json:"passed"`
	Failed        int    `json:"failed"`
	Liveness      int    `json:"liveness"`
	Horizon       int    `json:"horizon"`
	Watchdog      int    `json:"watchdog"`
	Errors        int    `json:"errors"`
	Checked       bool   `json:"checked"`
	Divergences   int    `json:"divergences"`
	New           int    `json:"new"`
	Known         int    `json:"known"`
	Fixed         int    `json:"fixed"`
	MutationScore string `json:"mutation_score"`
	MutationWas   string `json:"mutation_was"`
	Blind         int    `json:"blind"`
	// Upgrade is report.Summary.Upgrade: which build wrote and which read.
	Upgrade string `json:"upgrade,omitempty"`
	// Search is report.Summary.Search: the crash-state search beside the sweep.
	Search string `json:"search,omitempty"`
}

// artifactGroup is one signature: report.Group without the trace and the full fault
// list, with where it is annotated.
type artifactGroup struct {
	Signature    string         `json:"signature"`
	Status       string         `json:"status"`
	Kind         string         `json:"kind"`
	Reason       string         `json:"reason"`
	Seeds        []uint64       `json:"seeds"`
	FaultClasses []string       `json:"fault_classes"`
	Shrunk       []engine.Fault `json:"shrunk"`
	ShrinkNote   string         `json:"shrink_note"`
	Replay       string         `json:"replay"`
	FirstSeen    string         `json:"first_seen"`
	LastSeen     string         `json:"last_seen"`
	AtNS         int64          `json:"at_ns"`
	// ShrunkReason and ShrunkAtNS are the minimal schedule's own failure.
	ShrunkReason string    `json:"shrunk_reason,omitempty"`
	ShrunkAtNS   int64     `json:"shrunk_at_ns,omitempty"`
	Location     *location `json:"location,omitempty"`
	Frame        string    `json:"frame,omitempty"`
	// Search is report.Group.Search: where the crash-state search found it.
	Search string `json:"search,omitempty"`
}

// artifactProperty is one property's counts.
type artifactProperty struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Reached int    `json:"reached"`
	Held    int    `json:"held"`
}

// newArtifact captures what the publisher needs from a sweep.
func newArtifact(pr int, sha string, d *report.Data, places map[string]groupPlace) *artifact {
	s := d.Summary
	a := &artifact{Version: artifactVersion, PR: pr, HeadSHA: sha, Groups: []artifactGroup{}, Properties: []artifactProperty{},
		Summary: artifactSummary{
			Config: s.Config, Seeds: s.Seeds, Ref: s.Ref, Total: s.Total, Passed: s.Passed, Failed: s.Failed,
			Liveness: s.Liveness, Horizon: s.Horizon, Watchdog: s.Watchdog, Errors: s.Errors, Checked: s.Checked,
			Divergences: s.Divergences, New: s.New, Known: s.Known, Fixed: s.Fixed,
			MutationScore: s.MutationScore, MutationWas: s.MutationWas, Blind: s.Blind, Upgrade: s.Upgrade,
			Search: s.Search,
		}}
	for _, g := range d.Groups {
		ag := artifactGroup{
			Signature: g.Signature, Status: string(g.Status), Kind: g.Kind, Reason: g.Reason, Seeds: g.Seeds,
			FaultClasses: g.FaultClasses, Shrunk: g.Shrunk, ShrinkNote: g.ShrinkNote, Replay: g.Replay,
			FirstSeen: g.FirstSeen, LastSeen: g.LastSeen, AtNS: g.AtNS,
			ShrunkReason: g.ShrunkReason, ShrunkAtNS: g.ShrunkAtNS, Search: g.Search,
		}
		if p, ok := places[g.Signature]; ok {
			ag.Location, ag.Frame = p.Loc, p.Frame
		}
		a.Groups = append(a.Groups, ag)
	}
	for _, p := range d.Properties {
		a.Properties = append(a.Properties, artifactProperty{Name: p.Name, Kind: p.Kind, Reached: p.Reached, Held: p.Held})
	}
	return a
}

// writeArtifact writes a as artifactFile in dir.
func writeArtifact(dir string, a *artifact) error {
	data, err := json.MarshalIndent(a, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, artifactFile), append(data, '\n'), 0o644)
}

// artifactError is a refused artifact: the file and what is wrong with it.
type artifactError struct {
	File  string
	Field string // JSON path of the offending field, "" for the file as a whole
	Msg   string
}

func (e *artifactError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("artifact %s refused: %s; nothing was posted", e.File, e.Msg)
	}
	return fmt.Sprintf("artifact %s refused: field %s: %s; nothing was posted", e.File, e.Field, e.Msg)
}

// readArtifact reads and validates the publish artifact at p: artifactFile itself, or
// a directory (the downloaded artifact) holding it. It never reads more than
// artifactLimit+1 bytes, and refuses anything but a regular file.
func readArtifact(p string) (*artifact, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, &artifactError{File: p, Msg: "cannot read it: " + err.Error()}
	}
	if fi.IsDir() {
		p = filepath.Join(p, artifactFile)
		if fi, err = os.Lstat(p); err != nil {
			return nil, &artifactError{File: p, Msg: "cannot read it (did the sweep job upload " + artifactFile + "?): " + err.Error()}
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, &artifactError{File: p, Msg: "not a regular file (" + fi.Mode().Type().String() + ")"}
	}
	if fi.Size() > artifactLimit {
		return nil, &artifactError{File: p, Msg: fmt.Sprintf("%d bytes, more than the limit of %d", fi.Size(), artifactLimit)}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, &artifactError{File: p, Msg: "cannot read it: " + err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, artifactLimit+1))
	if err != nil {
		return nil, &artifactError{File: p, Msg: "cannot read it: " + err.Error()}
	}
	if len(data) > artifactLimit {
		return nil, &artifactError{File: p, Msg: fmt.Sprintf("more than the limit of %d bytes", artifactLimit)}
	}
	a, err := parseArtifact(p, data)
	if err != nil {
		return nil, err
	}
	a.file = p
	return a, nil
}

// parseArtifact decodes and validates an artifact's bytes; name is shown in errors.
func parseArtifact(name string, data []byte) (*artifact, error) {
	if !utf8.Valid(data) {
		return nil, &artifactError{File: name, Msg: "not UTF-8 text"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a artifact
	if err := dec.Decode(&a); err != nil {
		return nil, &artifactError{File: name, Msg: "not a seedfall publish artifact: " + err.Error()}
	}
	if dec.More() {
		return nil, &artifactError{File: name, Msg: "trailing data after the JSON object"}
	}
	if err := a.validate(); err != nil {
		if ae, ok := err.(*artifactError); ok {
			ae.File = name
			return nil, ae
		}
		return nil, &artifactError{File: name, Msg: err.Error()}
	}
	return &a, nil
}

var (
	reSHA       = regexp.MustCompile(`^[0-9a-f]{40}$`)
	reSignature = regexp.MustCompile(`^sig-[0-9a-f]{12}$`)
	reKind      = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)
	rePath      = regexp.MustCompile(`^[A-Za-z0-9_.@+~-]+(/[A-Za-z0-9_.@+~-]+)*$`)
	// reHTMLTag finds HTML tags and comments; Go's "<nil>" is not one.
	reHTMLTag = regexp.MustCompile(`<\s*/?\s*[A-Za-z!?][^<>]*>?`)
	reMDLink  = regexp.MustCompile(`\]\s*\(|!\[|\]\s*\[`)
)

func fieldErr(field, format string, args ...any) error {
	return &artifactError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// validate checks the artifact's version, numbers, enums and every string.
func (a *artifact) validate() error {
	if a.Version != artifactVersion {
		return fieldErr("version", "%d, want %d (sweep and publisher must run the same seedfall release)", a.Version, artifactVersion)
	}
	if a.PR <= 0 {
		return fieldErr("pr", "%d is not a pull request number", a.PR)
	}
	if !reSHA.MatchString(a.HeadSHA) {
		return fieldErr("head_sha", "%q is not a 40-digit commit SHA", clipText(a.HeadSHA))
	}
	if err := checkStrings(reflect.ValueOf(a).Elem(), ""); err != nil {
		return err
	}
	s := a.Summary
	for _, n := range []struct {
		name string
		v    int
	}{{"total", s.Total}, {"passed", s.Passed}, {"failed", s.Failed}, {"liveness", s.Liveness}, {"horizon", s.Horizon},
		{"watchdog", s.Watchdog}, {"errors", s.Errors}, {"divergences", s.Divergences}, {"new", s.New}, {"known", s.Known},
		{"fixed", s.Fixed}, {"blind", s.Blind}} {
		if n.v < 0 {
			return fieldErr("summary."+n.name, "%d is negative", n.v)
		}
	}
	if sum := s.Passed + s.Failed + s.Horizon + s.Watchdog + s.Errors; sum != s.Total {
		return fieldErr("summary.total", "%d, but passed+failed+horizon+watchdog+errors is %d", s.Total, sum)
	}
	if s.Liveness > s.Failed || s.Divergences > s.Total {
		return fieldErr("summary", "liveness (%d) exceeds failed (%d) or divergences (%d) exceed total (%d)", s.Liveness, s.Failed, s.Divergences, s.Total)
	}
	if len(a.Groups) > maxArtifactGroups {
		return fieldErr("groups", "%d signatures, more than %d", len(a.Groups), maxArtifactGroups)
	}
	count := map[string]int{}
	seen := map[string]bool{}
	for i, g := range a.Groups {
		f := fmt.Sprintf("groups[%d]", i)
		if !reSignature.MatchString(g.Signature) {
			return fieldErr(f+".signature", "%q is not a signature (sig- and 12 hex digits)", clipText(g.Signature))
		}
		if seen[g.Signature] {
			return fieldErr(f+".signature", "%s appears twice", g.Signature)
		}
		seen[g.Signature] = true
		switch g.Status {
		case string(statusNew), string(statusKnown), string(statusFixed):
			count[g.Status]++
		default:
			return fieldErr(f+".status", "%q is not new, known or fixed", clipText(g.Status))
		}
		if g.Kind != "" && !reKind.MatchString(g.Kind) {
			return fieldErr(f+".kind", "%q is not a failure kind", clipText(g.Kind))
		}
		if g.AtNS < 0 {
			return fieldErr(f+".at_ns", "%d is negative", g.AtNS)
		}
		if g.ShrunkAtNS < 0 {
			return fieldErr(f+".shrunk_at_ns", "%d is negative", g.ShrunkAtNS)
		}
		if l := g.Location; l != nil {
			if l.Line < 1 || l.Line > 10_000_000 {
				return fieldErr(f+".location.line", "%d is not a line number", l.Line)
			}
			if !rePath.MatchString(l.Path) || path.Clean(l.Path) != l.Path || strings.HasPrefix(l.Path, "..") || strings.Contains(l.Path, "/../") || strings.HasPrefix(l.Path, ".git/") {
				return fieldErr(f+".location.path", "%q is not a clean path inside the repository", clipText(l.Path))
			}
		}
	}
	if count["new"] != s.New || count["known"] != s.Known || count["fixed"] != s.Fixed {
		return fieldErr("summary", "counts %d new, %d known, %d fixed, but the groups hold %d, %d and %d", s.New, s.Known, s.Fixed, count["new"], count["known"], count["fixed"])
	}
	for i, p := range a.Properties {
		if p.Reached < 0 || p.Held < 0 || p.Held > p.Reached || p.Reached > s.Total {
			return fieldErr(fmt.Sprintf("properties[%d]", i), "counts reached %d, held %d do not fit %d seeds", p.Reached, p.Held, s.Total)
		}
	}
	return nil
}

// checkStrings checks every string reachable from v (field names as JSON paths).
func checkStrings(v reflect.Value, field string) error {
	switch v.Kind() {
	case reflect.String:
		return checkString(field, v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkStrings(v.Elem(), field)
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := checkStrings(v.Index(i), fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" {
				name = sf.Name
			}
			if field != "" {
				name = field + "." + name
			}
			if err := checkStrings(v.Field(i), name); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkString refuses what no string of a genuine sweep needs and what could change
// the comment it lands in: overlong text, control and bidirectional-override
// characters, HTML (tags, comments, the sticky comment's marker) and Markdown links or
// images. The rest (Go's "<nil>", "*T", "map[k:v]", backticks) is allowed, and shown in
// code spans.
func checkString(field, s string) error {
	if len(s) > maxArtifactString {
		return fieldErr(field, "%d bytes, more than %d", len(s), maxArtifactString)
	}
	if !utf8.ValidString(s) {
		return fieldErr(field, "not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			return fieldErr(field, "holds the control character U+%04X", r)
		}
	}
	low := strings.ToLower(s)
	if strings.Contains(low, strings.ToLower(CommentMarker)) || strings.Contains(low, "seedfall-report -->") {
		return fieldErr(field, "holds seedfall's comment marker %s", CommentMarker)
	}
	if strings.Contains(s, "<!--") || strings.Contains(s, "-->") {
		return fieldErr(field, "holds an HTML comment")
	}
	for _, m := range reHTMLTag.FindAllString(s, -1) {
		if m != "<nil>" {
			return fieldErr(field, "holds HTML markup %q", clipText(m))
		}
	}
	if m := reMDLink.FindString(s); m != "" {
		return fieldErr(field, "holds Markdown link or image syntax %q", m)
	}
	return nil
}

// clipText shortens untrusted text quoted in an error message.
func clipText(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// data rebuilds the report's data from a validated artifact: the conclusion from the
// counts under failOn, the report link from the event.
func (a *artifact) data(failOn, sha, reportURL string) (*report.Data, map[string]groupPlace) {
	s := a.Summary
	sum := report.Summary{
		Config: s.Config, Seeds: s.Seeds, Commit: sha, Ref: s.Ref, Event: "pull_request",
		Total: s.Total, Passed: s.Passed, Failed: s.Failed, Liveness: s.Liveness, Horizon: s.Horizon,
		Watchdog: s.Watchdog, Errors: s.Errors, Checked: s.Checked, Divergences: s.Divergences,
		New: s.New, Known: s.Known, Fixed: s.Fixed, ReportURL: reportURL,
		MutationScore: s.MutationScore, MutationWas: s.MutationWas, Blind: s.Blind, Upgrade: s.Upgrade,
		Search: s.Search,
	}
	sum.Conclusion = "success"
	if exitCode(failOn, sum) != ExitPass {
		sum.Conclusion = "failure"
	}
	d := &report.Data{Title: "seedfall: " + s.Config, Summary: sum}
	places := map[string]groupPlace{}
	for _, g := range a.Groups {
		d.Groups = append(d.Groups, report.Group{
			Signature: g.Signature, Status: report.Status(g.Status), Kind: g.Kind, Reason: g.Reason, Seeds: g.Seeds,
			FaultClasses: g.FaultClasses, Shrunk: g.Shrunk, ShrinkNote: g.ShrinkNote, Replay: g.Replay,
			FirstSeen: g.FirstSeen, LastSeen: g.LastSeen, AtNS: g.AtNS,
			ShrunkReason: g.ShrunkReason, ShrunkAtNS: g.ShrunkAtNS, Search: g.Search,
		})
		if g.Status != string(statusFixed) {
			places[g.Signature] = groupPlace{Loc: g.Location, Frame: g.Frame}
		}
	}
	for _, p := range a.Properties {
		d.Properties = append(d.Properties, report.Property{Name: p.Name, Kind: p.Kind, Reached: p.Reached, Held: p.Held})
	}
	return d, places
}
