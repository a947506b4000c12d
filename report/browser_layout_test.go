package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	d.Groups[0].Replay = "seedfall replay -c /home/someone/projects/a-long-path/to/the/system/seedfall.json -seed 123456 -faults /home/someone/projects/a-long-path/seedfall-report/faults/sig-0a1b2c3d4e5f.json"
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var html bytes.Buffer
	if err := HTML(&html, d); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
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
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")),
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

	// Every Copy button sits beside its command: their boxes do not overlap, and the
	// command's box ends before the button starts.
	type rects struct {
		N                                            int
		CodeLeft, CodeRight, ButtonLeft, ButtonRight float64
		Visible                                      bool
		Overlap                                      string
	}
	rs, err := chromedp.Run(bctx, chromedp.Evaluate[rects](`(function () {
		var out = {N: 0, Overlap: ""};
		var buttons = document.querySelectorAll("button.copy");
		for (var i = 0; i < buttons.length; i++) {
			var b = buttons[i], c = document.getElementById(b.getAttribute("data-target"));
			var br = b.getBoundingClientRect(), cr = c.getBoundingClientRect();
			out.N++;
			if (i === 0) {
				out.CodeLeft = cr.left; out.CodeRight = cr.right; out.ButtonLeft = br.left; out.ButtonRight = br.right;
				out.Visible = br.width > 0 && br.height > 0 && !b.hidden;
			}
			var overlap = cr.left < br.right && br.left < cr.right && cr.top < br.bottom && br.top < cr.bottom;
			if (overlap || cr.right > br.left + 0.5 || br.right > window.innerWidth) {
				out.Overlap += b.getAttribute("data-target") + " ";
			}
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if rs.N == 0 || !rs.Visible {
		t.Fatalf("no visible Copy button: %+v", rs)
	}
	if strings.TrimSpace(rs.Overlap) != "" {
		t.Errorf("at %d px the Copy button covers the command of %s: %+v", width, rs.Overlap, rs)
	}
	png1, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, png1, filepath.Join(t.TempDir(), "report-900.png"))
}
