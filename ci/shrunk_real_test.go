package ci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/githubtest"
)

// simEngine is the Engine over a real engine.Sim in this process, as cmd/seedfall's
// adapter is over worker processes: real guests, real traces, real shrinking.
type simEngine struct{ s *engine.Sim }

func (e simEngine) Sweep(ctx context.Context, _ string, seeds []uint64) ([]engine.Result, error) {
	out := make([]engine.Result, len(seeds))
	for i, seed := range seeds {
		r := e.s.Run(ctx, seed, engine.RunOptions{Trace: true})
		r.Trace = r.Trace[max(0, len(r.Trace)-40):]
		out[i] = *r
	}
	return out, nil
}

func (e simEngine) Shrink(ctx context.Context, _ string, r engine.Result, budget time.Duration) (Shrunk, error) {
	res, err := e.s.Shrink(ctx, r.Seed, engine.ShrinkOptions{Budget: budget})
	if err != nil {
		return Shrunk{}, err
	}
	out := Shrunk{Faults: res.Plan.Faults, Note: fmt.Sprintf("%d → %d faults in %d runs", res.Before, res.After, res.Runs)}
	if res.Minimal != nil {
		out.Failure = res.Minimal.Failure
	}
	return out, nil
}

func (simEngine) Mutate(context.Context, string, []uint64) (*Mutation, error) {
	return nil, errors.New("not in this test")
}

func (simEngine) UpgradeFrom(context.Context, string, string) ([]UpgradeNode, error) {
	return nil, errors.New("not in this test")
}

func (simEngine) Crashes(context.Context, string, uint64, string, int) (*CrashSearch, error) {
	return nil, errors.New("not in this test")
}

// chromiumPath is where Debian's chromium package puts the browser (.ci/run installs it).
const chromiumPath = "/usr/bin/chromium"

// TestShrunkFailureInRealRun (issue 35, point 3): a CI-mode run of kvlog's buggy config
// on seed 2 (a real wasm guest, shrink budget > 0). The seed's own faults fail at one
// time with one value, the minimal plan at another with another (3.57s k0=v16 against
// 11.40s k0=v48 when this was written): the comment and the HTML report show both, each
// with its own time and reason. The HTML, opened in headless Chromium 900 px wide, opens
// its trace excerpt at the failure, and no Copy button covers its command.
func TestShrunkFailureInRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kvlog for wasip1 and shrinks a seed")
	}
	cfg, err := engine.LoadConfig(filepath.Join("..", "examples", "kvlog", "seedfall.json"))
	must(t, err)
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	must(t, err)
	defer s.Close()

	gh := githubtest.New(t)
	dir := t.TempDir()
	in, err := ParseInputs([]string{"-c", "examples/kvlog/seedfall.json", "-seeds", "2", "-token", "t0ken", "-shrink-budget", "3m", "-out", filepath.Join(dir, "out")}, nil, nil)
	must(t, err)
	evPath := filepath.Join(dir, "event.json")
	must(t, os.WriteFile(evPath, []byte(`{"number": 7, "pull_request": {"number": 7, "head": {"sha": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "repo": {"full_name": "acme/store"}}}, "repository": {"full_name": "acme/store", "default_branch": "main"}}`), 0o644))
	env := Env{
		EventName: "pull_request", EventPath: evPath, Repository: "acme/store", Actions: true,
		SHA: "ffffffffffffffffffffffffffffffffffffffff", Ref: "refs/pull/7/merge",
		APIURL: gh.URL(), ServerURL: "https://github.example", RunID: 5,
		OutputPath: filepath.Join(dir, "output"), SummaryPath: filepath.Join(dir, "summary.md"),
		HTTPClient: gh.Client(),
	}
	eng := &recordingEngine{simEngine: simEngine{s}}
	var stdout strings.Builder
	code, err := Run(context.Background(), in, env, eng, &stdout)
	if err != nil || code != ExitFailure {
		t.Fatalf("exit %d, %v; want %d (kvlog seed 2 loses an acknowledged write)\n%s", code, err, ExitFailure, stdout.String())
	}
	if eng.orig == nil || eng.shrunk.Failure == nil || len(eng.shrunk.Faults) == 0 {
		t.Fatalf("no shrink with a failure: original %+v, shrunk %+v", eng.orig, eng.shrunk)
	}
	o, m := eng.orig, eng.shrunk.Failure
	t.Logf("seed's own faults: %s %s; minimal plan: %s %s", time.Duration(o.AtNS), o.Reason, time.Duration(m.AtNS), m.Reason)
	if o.AtNS == m.AtNS && o.Reason == m.Reason {
		t.Fatalf("the minimal plan fails exactly as the seed's own faults (%s, %s): this seed no longer shows the difference the report must carry", time.Duration(o.AtNS), o.Reason)
	}

	cs := gh.MarkerComments(7, CommentMarker)
	if len(cs) != 1 {
		t.Fatalf("%d sticky comments, want 1", len(cs))
	}
	comment := strings.ReplaceAll(cs[0].Body, `\`, "") // as GitHub renders it
	html, err := os.ReadFile(filepath.Join(dir, "out", ReportHTML))
	must(t, err)
	at := func(ns int64) string { return time.Duration(ns).String() }
	for _, want := range []string{
		fmt.Sprintf("the seed's own faults fail at `%s`: `%s`", at(o.AtNS), o.Reason),
		fmt.Sprintf("the minimal schedule fails at `%s`: `%s`", at(m.AtNS), m.Reason),
	} {
		if !strings.Contains(comment, want) {
			t.Errorf("the comment lacks %q:\n%s", want, comment)
		}
	}
	row := func(class, when, reason string) *regexp.Regexp {
		return regexp.MustCompile(`<tr class="` + class + `"><td>[^<]*</td><td><code>` + regexp.QuoteMeta(when) + `</code></td><td>` + regexp.QuoteMeta(htmlEscape(reason)) + `</td></tr>`)
	}
	for _, re := range []*regexp.Regexp{row("original", at(o.AtNS), o.Reason), row("minimal", at(m.AtNS), m.Reason)} {
		if !re.Match(html) {
			t.Errorf("report.html has no row matching %s", re)
		}
	}
	// Negative control of the assertions: each row carries its own run's values, so
	// where the runs differ the other run's value must not be in the row.
	if o.AtNS != m.AtNS && row("minimal", at(o.AtNS), m.Reason).Match(html) {
		t.Error("the minimal plan's row shows the seed's own time")
	}
	if o.Reason != m.Reason && row("minimal", at(m.AtNS), o.Reason).Match(html) {
		t.Error("the minimal plan's row shows the seed's own reason")
	}

	checkReportInChromium(t, filepath.Join(dir, "out", ReportHTML), o.Reason)
}

// recordingEngine keeps what the flow shrank and what it found.
type recordingEngine struct {
	simEngine
	orig   *engine.Failure
	shrunk Shrunk
}

func (e *recordingEngine) Shrink(ctx context.Context, path string, r engine.Result, budget time.Duration) (Shrunk, error) {
	res, err := e.simEngine.Shrink(ctx, path, r, budget)
	e.orig, e.shrunk = r.Failure, res
	return res, err
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// checkReportInChromium opens a report in headless Chromium with a 900 px wide window:
// every trace excerpt opens scrolled to its end, and the failure's own line (holding
// failureText) is inside its visible box; every replay command block has a visible Copy
// button, and neither the command's box nor the command's visible text overlaps it.
func checkReportInChromium(t *testing.T, page, failureText string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Logf("no %s: the browser half of the test is skipped (install it with apt-get install chromium)", chromiumPath)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "chromium-profile")),
		chromedp.WindowSize(900, 900),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("open the report: %v", err)
	}
	if ready, err := chromedp.Run(bctx, chromedp.Poll[string](`document.documentElement.getAttribute("data-ready")`, chromedp.WithPollingTimeout(10*time.Second))); err != nil || ready != "1" {
		t.Fatalf("the report's script did not run (data-ready = %q, %v)", ready, err)
	}
	width, err := chromedp.Run(bctx, chromedp.Evaluate[int](`window.innerWidth`))
	if err != nil || width > 900 {
		t.Fatalf("viewport %d px wide, want 900 at most (%v)", width, err)
	}
	type layout struct {
		Traces, AtEnd, FailureVisible int
		Blocks, Buttons               int
		Problems                      []string
	}
	l, err := chromedp.Run(bctx, chromedp.Evaluate[layout](`(function (failure) {
		var out = {Traces: 0, AtEnd: 0, FailureVisible: 0, Blocks: 0, Buttons: 0, Problems: []};
		var traces = document.querySelectorAll("pre.trace");
		for (var i = 0; i < traces.length; i++) {
			var p = traces[i], r = p.getBoundingClientRect();
			out.Traces++;
			if (p.scrollTop + p.clientHeight >= p.scrollHeight - 1) { out.AtEnd++; }
			var text = p.firstChild, at = text ? text.textContent.lastIndexOf(failure) : -1;
			if (at >= 0) {
				var range = document.createRange();
				range.setStart(text, at);
				range.setEnd(text, at + 1);
				var f = range.getBoundingClientRect();
				if (f.top >= r.top && f.bottom <= r.bottom) { out.FailureVisible++; }
			}
		}
		var blocks = document.querySelectorAll("div.replay");
		for (var j = 0; j < blocks.length; j++) {
			var blk = blocks[j], code = blk.querySelector("code"), buttons = blk.querySelectorAll("button.copy");
			out.Blocks++;
			if (!code || buttons.length !== 1) { out.Problems.push("block " + j + ": " + buttons.length + " buttons"); continue; }
			var b = buttons[0], br = b.getBoundingClientRect(), cr = code.getBoundingClientRect();
			if (b.hidden || br.width === 0 || br.height === 0) { out.Problems.push("block " + j + ": the button is not visible"); continue; }
			out.Buttons++;
			if (b.getAttribute("data-target") !== code.id) { out.Problems.push("block " + j + ": the button copies " + b.getAttribute("data-target") + ", not " + code.id); }
			if (br.right > window.innerWidth) { out.Problems.push("block " + j + ": the button ends past the viewport"); }
			var over = function (a) { return a.left < br.right && br.left < a.right && a.top < br.bottom && br.top < a.bottom; };
			if (over(cr)) { out.Problems.push("block " + j + ": the button overlaps the command's box"); }
			// The command's text, clipped to the command's box (the rest scrolls).
			var tr = document.createRange();
			tr.selectNodeContents(code);
			var rects = tr.getClientRects();
			for (var k = 0; k < rects.length; k++) {
				var q = rects[k];
				var vis = {left: Math.max(q.left, cr.left), right: Math.min(q.right, cr.right), top: Math.max(q.top, cr.top), bottom: Math.min(q.bottom, cr.bottom)};
				if (vis.left < vis.right && vis.top < vis.bottom && over(vis)) { out.Problems.push("block " + j + ": the button covers the command's text"); }
			}
			if (rects.length === 0 || rects[0].left < cr.left - 0.5) { out.Problems.push("block " + j + ": the command's first character is not in view"); }
		}
		return out;
	})(`+jsQuote(failureText)+`)`))
	if err != nil {
		t.Fatal(err)
	}
	if l.Traces == 0 || l.AtEnd != l.Traces || l.FailureVisible != l.Traces {
		t.Errorf("trace excerpts: %d, %d open at their end, %d show the failure line (%q) in view; want all", l.Traces, l.AtEnd, l.FailureVisible, failureText)
	}
	if l.Blocks == 0 || l.Buttons != l.Blocks || len(l.Problems) > 0 {
		t.Errorf("at %d px: %d replay blocks, %d visible Copy buttons; problems: %q", width, l.Blocks, l.Buttons, l.Problems)
	}
}

func jsQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029 || r == '<':
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
