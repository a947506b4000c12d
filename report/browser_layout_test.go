package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestHTMLTraceAndCopyAt900 opens in a real headless Chromium, 900 px wide, a report
// whose trace excerpt is longer than its box and whose replay command is longer than
// the line: the excerpt must open scrolled to its end (the failure), and the Copy
// button must sit beside the command, never over it.
func TestHTMLTraceAndCopyAt900(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no %s: install it with `apt-get update && apt-get install -y chromium` to run the browser test", chromiumPath)
	}
	d := fixture()
	var trace []string
	for i := 0; i < 200; i++ {
		trace = append(trace, fmt.Sprintf("%d.%03ds server#1 | write /data/kv.log @%d+64", i/10, i%10*100, i*64))
	}
	trace = append(trace, "20.100s client#1 | THE FAILURE LINE")
	d.Groups[0].Trace = trace
	// Every command longer than the line, as replay commands with absolute paths and
	// -upgrade-from are.
	for i := range d.Groups {
		if d.Groups[i].Replay != "" {
			d.Groups[i].Replay = fmt.Sprintf("seedfall replay -c /home/someone/projects/a-long-path/to/the/system/seedfall.json -seed %d -upgrade-from 3f2a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f -faults /home/someone/projects/a-long-path/seedfall-report/faults/sig-0a1b2c3d4e5f.json", 123456+i)
		}
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var html bytes.Buffer
	if err := HTML(&html, d); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	bctx := headless(t, dir, 900, 900)
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

	// The excerpt opens at its end: the failure line is inside the visible box.
	type box struct {
		ScrollTop, ScrollHeight, ClientHeight float64
		LastVisible                           bool
	}
	tr, err := chromedp.Run(bctx, chromedp.Evaluate[box](`(function () {
		var p = null, all = document.querySelectorAll("pre.trace");
		for (var i = 0; i < all.length; i++) {
			if (all[i].textContent.indexOf("THE FAILURE LINE") >= 0) { p = all[i]; }
		}
		var r = p.getBoundingClientRect();
		var range = document.createRange();
		var text = p.firstChild;
		var at = text.textContent.lastIndexOf("THE FAILURE LINE");
		range.setStart(text, at);
		range.setEnd(text, at + 3);
		var l = range.getBoundingClientRect();
		return {ScrollTop: p.scrollTop, ScrollHeight: p.scrollHeight, ClientHeight: p.clientHeight,
			LastVisible: l.top >= r.top && l.bottom <= r.bottom};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if tr.ScrollHeight <= tr.ClientHeight {
		t.Fatalf("the trace box is not scrollable (%+v): the fixture is too short to test", tr)
	}
	if !tr.LastVisible || tr.ScrollTop+tr.ClientHeight < tr.ScrollHeight-1 {
		t.Errorf("the trace excerpt does not open at the failure: %+v", tr)
	}

	// Every replay command block has one visible Copy button, beside its command: the
	// button overlaps neither the command's box nor any of the command's text in view
	// (a long command scrolls inside its box), and the command starts in view.
	type blocks struct {
		Blocks, Buttons int
		Problems        []string
	}
	rs, err := chromedp.Run(bctx, chromedp.Evaluate[blocks](`(function () {
		var out = {Blocks: 0, Buttons: 0, Problems: []};
		var all = document.querySelectorAll("div.replay");
		for (var j = 0; j < all.length; j++) {
			var blk = all[j], code = blk.querySelector("code"), bs = blk.querySelectorAll("button.copy");
			out.Blocks++;
			if (!code || bs.length !== 1) { out.Problems.push("block " + j + ": " + bs.length + " buttons"); continue; }
			var b = bs[0], br = b.getBoundingClientRect(), cr = code.getBoundingClientRect();
			if (b.hidden || br.width === 0 || br.height === 0) { out.Problems.push("block " + j + ": the button is not visible"); continue; }
			out.Buttons++;
			if (br.right > window.innerWidth) { out.Problems.push("block " + j + ": the button ends past the viewport"); }
			var over = function (a) { return a.left < br.right && br.left < a.right && a.top < br.bottom && br.top < a.bottom; };
			if (over(cr) || cr.right > br.left + 0.5) { out.Problems.push("block " + j + ": the button overlaps the command's box"); }
			var tr = document.createRange();
			tr.selectNodeContents(code);
			var rects = tr.getClientRects();
			for (var k = 0; k < rects.length; k++) {
				var q = rects[k];
				var vis = {left: Math.max(q.left, cr.left), right: Math.min(q.right, cr.right), top: Math.max(q.top, cr.top), bottom: Math.min(q.bottom, cr.bottom)};
				if (vis.left < vis.right && vis.top < vis.bottom && over(vis)) { out.Problems.push("block " + j + ": the button covers the command's text"); }
			}
			if (rects.length === 0 || rects[0].left < cr.left - 0.5) { out.Problems.push("block " + j + ": the command's first character is not in view"); }
			if (code.scrollWidth > code.clientWidth + 1 && getComputedStyle(code).overflowX === "visible") { out.Problems.push("block " + j + ": a long command overflows its box"); }
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	replays := 0
	for _, g := range d.Groups {
		if g.Replay != "" {
			replays++
		}
	}
	if rs.Blocks != replays || rs.Buttons != replays || len(rs.Problems) > 0 {
		t.Errorf("at %d px: %d replay blocks and %d visible Copy buttons for %d replay commands; problems: %q", width, rs.Blocks, rs.Buttons, replays, rs.Problems)
	}
	png1, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, png1, filepath.Join(t.TempDir(), "report-900.png"))
}
