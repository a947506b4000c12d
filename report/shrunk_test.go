package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestShrunkFailureBesideOriginal: a shrunk group shows the minimal schedule's own
// failure beside the seed's, in the Markdown and the HTML, each with its own time and
// reason; one line when they are the same; nothing without a shrunk schedule. The
// upgrade line of the summary appears in both too.
func TestShrunkFailureBesideOriginal(t *testing.T) {
	render := func(d *Data) (md, html string) {
		t.Helper()
		var m, h bytes.Buffer
		if err := Markdown(&m, d, CommentLimit); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&h, d); err != nil {
			t.Fatal(err)
		}
		return m.String(), h.String()
	}
	d := fixture()
	g := &d.Groups[0]
	if len(g.Shrunk) == 0 {
		t.Fatal("the fixture's first group has no shrunk schedule")
	}
	g.Reason, g.AtNS = "client#1: acknowledged write lost: k0=v16", 3_573_913_455
	g.ShrunkReason, g.ShrunkAtNS = "client#1: acknowledged write lost: k0=v48", 11_399_799_676
	d.Summary.Upgrade = "upgrade (server): data written by base 3f2a1c0, read by this PR's build 9e8d7c6"
	md, html := render(d)
	for _, want := range []string{
		"- the seed's own faults fail at `3.573913455s`: `client#1: acknowledged write lost: k0=v16`",
		"- the minimal schedule fails at `11.399799676s`: `client#1: acknowledged write lost: k0=v48`",
		"upgrade \\(server\\)\\: data written by base 3f2a1c0, read by this PR's build 9e8d7c6",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{
		`<tr class="original"><td>the seed's own faults</td><td><code>3.573913455s</code></td><td>client#1: acknowledged write lost: k0=v16</td></tr>`,
		`<tr class="minimal"><td>the minimal schedule</td><td><code>11.399799676s</code></td><td>client#1: acknowledged write lost: k0=v48</td></tr>`,
		`<p class="upgrade" id="upgrade">upgrade (server): data written by base 3f2a1c0, read by this PR&#39;s build 9e8d7c6</p>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}

	g.ShrunkReason, g.ShrunkAtNS = g.Reason, g.AtNS
	md, _ = render(d)
	if !strings.Contains(md, "- the minimal schedule fails the same way, at `3.573913455s`") || strings.Contains(md, "the seed's own faults fail at") {
		t.Errorf("the same failure: want one line saying so:\n%s", md)
	}

	g.Shrunk = nil // not shrunk: nothing to compare
	md, html = render(d)
	if strings.Contains(md, "minimal schedule fails") || strings.Contains(html, `class="grid shrunk-failure"`) {
		t.Errorf("a group without a shrunk schedule shows a minimal schedule's failure")
	}
}
