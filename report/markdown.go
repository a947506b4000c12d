package report

import (
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
)

// Limits on how much of one signature the Markdown shows; the HTML report shows all.
const (
	mdMaxSeeds  = 20  // seed items (single seeds or ranges)
	mdMaxFaults = 12  // faults of the minimal schedule
	mdMaxReason = 400 // bytes of the failure reason
	mdMaxFault  = 200 // bytes of one fault line
)

// Markdown writes the summary posted as the sticky pull-request comment and the job
// summary: the counts, then one section per signature (new first, then known, then
// fixed) with its seeds, minimal fault schedule and replay command, then the
// properties and the durability mutations.
//
// The output is smaller than limit bytes. When the signatures do not all fit, the
// last ones are left out and a line says how many, with a link to the full report
// (Summary.ReportURL); the properties are dropped before any signature is. A limit of
// zero or less means no limit. Markdown returns an error only when not even the
// counts fit, or when w fails.
//
// Guest text (reasons, fault lines, replay commands) is always inside code spans or
// fenced code blocks, so it cannot become HTML, a link or an @-mention.
func Markdown(w io.Writer, d *Data, limit int) error {
	header := mdHeader(d)
	groups := orderedGroups(d.Groups)
	chunks := make([]string, len(groups))
	total := len(header)
	for i, g := range groups {
		chunks[i] = mdGroup(g)
		total += len(chunks[i])
	}
	tail := mdTail(d)
	total += len(tail)

	if limit <= 0 || total < limit {
		_, err := io.WriteString(w, header+strings.Join(chunks, "")+tail)
		return err
	}

	// Too long: keep the header, then as many signatures as fit, then a note; keep the
	// properties only when that does not cost a signature.
	fit := func(tail string) (string, int) {
		noteMax := len(mdMoreNote(len(chunks), d.Summary.ReportURL))
		used := len(header) + len(tail) + noteMax
		if used >= limit {
			return "", -1
		}
		var b strings.Builder
		b.WriteString(header)
		k := 0
		for k < len(chunks) && used+len(chunks[k]) < limit {
			b.WriteString(chunks[k])
			used += len(chunks[k])
			k++
		}
		b.WriteString(mdMoreNote(len(chunks)-k, d.Summary.ReportURL))
		b.WriteString(tail)
		return b.String(), k
	}
	out, k := fit(tail)
	if tail != "" && (k < 0 || k < len(chunks)) {
		short := mdTailOmitted(d)
		if out2, k2 := fit(short); k2 > k || k < 0 {
			out, k = out2, k2
		}
	}
	if k < 0 {
		return fmt.Errorf("markdown report: the summary alone needs %d bytes, more than the limit of %d", len(header)+len(mdMoreNote(len(chunks), d.Summary.ReportURL)), limit)
	}
	_, err := io.WriteString(w, out)
	return err
}

// mdHeader renders the title line, the counts table and the run's facts.
func mdHeader(d *Data) string {
	icon := map[string]string{"success": "✅", "failure": "❌", "neutral": "➖"}[d.Summary.Conclusion]
	if icon != "" {
		icon += " "
	}
	return fmt.Sprintf("## %s%s\n\n", icon, mdText(clip(oneLine(d.title()), 200))) + mdCounts(d)
}

// mdCounts renders the counts table and the run's facts: the header without its title.
func mdCounts(d *Data) string {
	s := d.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "**%d of %d seeds passed** · %s · %d new, %d known, %d fixed\n\n",
		s.Passed, s.Total, plural(s.New+s.Known, "failing signature"), s.New, s.Known, s.Fixed)
	b.WriteString("| seeds | passed | failed | never finished | time horizon | watchdog | errors |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d |\n\n", s.Total, s.Passed, s.Failed, s.Liveness, s.Horizon, s.Watchdog, s.Errors)

	if len(s.Tests) > 0 {
		b.WriteString("| test | seeds | passed | failed | new | known |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|\n")
		for _, t := range s.Tests {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", codeSpan(clip(t.Name, 100)), t.Seeds, t.Passed, t.Failed, t.New, t.Known)
		}
		b.WriteString("\n")
	}
	var facts []string
	for _, f := range []struct{ name, value string }{
		{"config", s.Config}, {"seeds", s.Seeds}, {"commit", s.Commit}, {"ref", s.Ref}, {"event", s.Event},
	} {
		if f.value != "" {
			facts = append(facts, f.name+" "+codeSpan(clip(f.value, 200)))
		}
	}
	if len(facts) > 0 {
		b.WriteString(strings.Join(facts, " · ") + "\n\n")
	}
	if s.Upgrade != "" {
		b.WriteString("**" + mdText(clip(oneLine(s.Upgrade), 400)) + "**\n\n")
	}
	if s.Search != "" {
		b.WriteString(mdText(clip(oneLine(s.Search), 400)) + "\n\n")
	}
	line := []string{mdText(determinismLine(s))}
	if s.MutationScore != "" {
		m := "mutation score " + codeSpan(clip(s.MutationScore, 40))
		if s.MutationWas != "" && s.MutationWas != s.MutationScore {
			m += " (was " + codeSpan(clip(s.MutationWas, 40)) + ")"
		}
		if s.Blind > 0 {
			m += fmt.Sprintf(" · **%d %s killed before %s now: the checks went blind**", s.Blind, pluralWord(s.Blind, "mutant"), map[bool]string{true: "survives", false: "survive"}[s.Blind == 1])
		}
		line = append(line, m)
	}
	if link := mdLink("full report", s.ReportURL); link != "" {
		line = append(line, link)
	}
	b.WriteString(strings.Join(line, " · ") + "\n")
	return b.String()
}

// mdGroup renders one signature.
func mdGroup(g Group) string {
	var b strings.Builder
	found := plural(len(g.Seeds), "seed")
	if len(g.Seeds) == 0 && g.Search != "" {
		found = "crash-state search"
	}
	fmt.Fprintf(&b, "\n### %s %s · %s", strings.ToUpper(statusLabel(g.Status)), codeSpan(g.Signature), found)
	if g.Kind != "" {
		fmt.Fprintf(&b, " · %s", codeSpan(clip(g.Kind, 60)))
	}
	b.WriteString("\n\n")
	if g.Reason != "" {
		fmt.Fprintf(&b, "%s\n\n", codeSpan(clip(oneLine(g.Reason), mdMaxReason)))
	}
	seeds := formatSeeds(g.Seeds, mdMaxSeeds)
	switch {
	case g.Status == StatusFixed:
		fmt.Fprintf(&b, "- no longer fails; the baseline had it on %s %s\n", pluralWord(len(g.Seeds), "seed"), seeds)
	case len(g.Seeds) > 0:
		fmt.Fprintf(&b, "- failed at %s on %s %s\n", codeSpan(fmtNS(g.AtNS)), pluralWord(len(g.Seeds), "seed"), seeds)
	}
	if g.Search != "" {
		fmt.Fprintf(&b, "- found by the %s\n", mdText(clip(oneLine(g.Search), 400)))
	}
	if len(g.FaultClasses) > 0 {
		cls := make([]string, len(g.FaultClasses))
		for i, c := range g.FaultClasses {
			cls[i] = codeSpan(clip(c, 40))
		}
		fmt.Fprintf(&b, "- faults before the failure: %s\n", strings.Join(cls, ", "))
	}
	var seen []string
	if g.FirstSeen != "" {
		seen = append(seen, "first seen "+codeSpan(clip(g.FirstSeen, 60)))
	}
	if g.LastSeen != "" {
		seen = append(seen, "last seen "+codeSpan(clip(g.LastSeen, 60)))
	}
	if len(seen) > 0 {
		fmt.Fprintf(&b, "- %s\n", strings.Join(seen, " · "))
	}
	note := ""
	if g.ShrinkNote != "" {
		note = " " + codeSpan(clip(oneLine(g.ShrinkNote), 120))
	}
	switch {
	case len(g.Shrunk) > 0:
		fmt.Fprintf(&b, "- minimal fault schedule%s:\n", note)
		for i, f := range g.Shrunk {
			if i == mdMaxFaults {
				fmt.Fprintf(&b, "  - … %d more in the full report\n", len(g.Shrunk)-i)
				break
			}
			fmt.Fprintf(&b, "  %d. %s\n", i+1, codeSpan(clip(oneLine(f.String()), mdMaxFault)))
		}
	case note != "":
		fmt.Fprintf(&b, "- fault schedule:%s\n", note)
	}
	if len(g.Shrunk) > 0 && g.ShrunkReason != "" {
		// The minimal schedule fails with the same signature, but often at another time
		// and with other values: show both, so that a replay is not a surprise.
		if g.ShrunkAtNS == g.AtNS && g.ShrunkReason == g.Reason {
			fmt.Fprintf(&b, "- the minimal schedule fails the same way, at %s\n", codeSpan(fmtNS(g.ShrunkAtNS)))
		} else {
			fmt.Fprintf(&b, "- the seed's own faults fail at %s: %s\n", codeSpan(fmtNS(g.AtNS)), codeSpan(clip(oneLine(g.Reason), mdMaxReason)))
			fmt.Fprintf(&b, "- the minimal schedule fails at %s: %s\n", codeSpan(fmtNS(g.ShrunkAtNS)), codeSpan(clip(oneLine(g.ShrunkReason), mdMaxReason)))
		}
	}
	if g.Replay != "" {
		fmt.Fprintf(&b, "\n%s", fenced("sh", []string{clip(oneLine(g.Replay), 1000)}))
	}
	return b.String()
}

// mdMoreNote says how many signatures were left out; empty for none.
func mdMoreNote(n int, reportURL string) string {
	if n <= 0 {
		return ""
	}
	where := "the full report"
	if link := mdLink("full report", reportURL); link != "" {
		where = "the " + link
	}
	return fmt.Sprintf("\n… %d more %s, see %s.\n", n, pluralWord(n, "signature"), where)
}

// mdTail renders the properties and the durability mutations.
func mdTail(d *Data) string {
	var b strings.Builder
	if len(d.Properties) > 0 {
		var t strings.Builder
		PropertyTable(&t, d.Properties)
		b.WriteString("\n#### Properties\n\n")
		b.WriteString(fenced("text", strings.Split(strings.TrimSuffix(t.String(), "\n"), "\n")))
	}
	if len(d.Mutants) > 0 {
		killed := 0
		var survived []Mutant
		for _, m := range d.Mutants {
			switch {
			case m.Killed:
				killed++
			case m.Outcome != "n/a":
				survived = append(survived, m)
			}
		}
		sort.SliceStable(survived, func(i, j int) bool { return survived[i].Blind && !survived[j].Blind })
		score := d.Summary.MutationScore
		if score == "" {
			score = fmt.Sprintf("%d/%d", killed, len(d.Mutants))
		}
		fmt.Fprintf(&b, "\n#### Durability mutations: %s killed\n\n", codeSpan(clip(score, 40)))
		if len(survived) == 0 {
			b.WriteString("Every mutation was caught: the checks can see these bug classes.\n")
		} else {
			b.WriteString("A surviving mutation means the checks are blind to that bug class:\n\n")
			for _, m := range survived {
				verb := "survived"
				switch {
				case m.Blind:
					verb = "**went blind** (killed before, survives now)"
				case m.Outcome == "unknown":
					verb = "unknown"
				}
				fmt.Fprintf(&b, "- ❌ %s: %s", verb, codeSpan(clip(oneLine(m.Name), 120)))
				if m.Site != "" {
					fmt.Fprintf(&b, " at %s", codeSpan(clip(oneLine(m.Site), 120)))
				}
				if m.Outcome == "unknown" && m.Reason != "" {
					fmt.Fprintf(&b, " — %s", mdText(clip(oneLine(m.Reason), 200)))
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// mdTailOmitted replaces the tail when it does not fit.
func mdTailOmitted(d *Data) string {
	if len(d.Properties) == 0 && len(d.Mutants) == 0 {
		return ""
	}
	return "\nProperties and durability mutations: see the full report.\n"
}

// pluralWord returns word or word+"s".
func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// mdText escapes text for Markdown prose: every ASCII punctuation character gets a
// backslash, so nothing in it is markup.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune("\\`*_{}[]()<>#+-.!|~&:@", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codeSpan puts s on one line inside a code span whose fence is longer than any run
// of backticks in s, so s shows literally, whatever it holds.
func codeSpan(s string) string {
	s = oneLine(s)
	if strings.TrimSpace(s) == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if s[0] == '`' || s[len(s)-1] == '`' || (s[0] == ' ' && s[len(s)-1] == ' ') {
		s = " " + s + " "
	}
	return fence + s + fence
}

// fenced renders lines as a fenced code block whose fence is longer than any run of
// backticks in them, so no line can close it.
func fenced(info string, lines []string) string {
	run := 0
	for i, l := range lines {
		lines[i] = printable(l)
		run = max(run, longestRun(lines[i], '`'))
	}
	fence := strings.Repeat("`", max(3, run+1))
	return fence + info + "\n" + strings.Join(lines, "\n") + "\n" + fence + "\n"
}

// printable replaces control characters other than tab with spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// mdLink renders a link to an http(s) URL, or "" when u is empty or not one.
func mdLink(text, u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if u == "" || err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	// url.URL.String percent-encodes spaces and quotes; parentheses and angle brackets
	// are encoded too so the destination cannot end early.
	dest := strings.NewReplacer("(", "%28", ")", "%29", "<", "%3C", ">", "%3E", " ", "%20").Replace(p.String())
	return "[" + mdText(text) + "](" + dest + ")"
}
