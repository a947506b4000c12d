package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// TestHTMLInChromium opens the report in a real headless Chromium: the page must load
// without a console error, show one card per signature, draw something, keep the
// guest's <script> from running, and copy a replay command without an error whether
// or not the page has a clipboard.
func TestHTMLInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no %s: install it with `apt-get update && apt-get install -y chromium` to run the browser test", chromiumPath)
	}
	d := fixture()
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var html bytes.Buffer
	if err := HTML(&html, d); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	bctx := headless(t, dir, 1280, 900,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true))

	// Start the browser and subscribe to the console before the page loads, so that
	// no message is lost.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	consoleCtx, stopConsole := context.WithCancel(bctx)
	messages := chromedp.Console(consoleCtx)

	if err := chromedp.Do(bctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady("body"),
	); err != nil {
		t.Fatalf("open the report: %v", err)
	}
	ready, err := chromedp.Run(bctx, chromedp.Poll[string](`document.documentElement.getAttribute("data-ready")`, chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil || ready != "1" {
		t.Errorf("the report's script did not run (data-ready = %q, %v): is its CSP hash right?", ready, err)
	}

	cards, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll(".card").length`))
	if err != nil {
		t.Fatal(err)
	}
	if cards != len(d.Groups) {
		t.Errorf("%d .card elements, want %d (one per signature)", cards, len(d.Groups))
	}
	lanes, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll(".card .lane").length`))
	if err != nil || lanes == 0 {
		t.Errorf("no timeline lanes drawn (%d, %v)", lanes, err)
	}
	trace, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("pre.trace").textContent`))
	if err != nil || !strings.Contains(trace, "</pre><script>window.__pwned=1</script>") {
		t.Errorf("the trace does not show the guest's markup as text: %q, %v", trace, err)
	}

	png1, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, png1, filepath.Join(t.TempDir(), "report.png"))

	// Copy with whatever clipboard headless Chromium offers (it may refuse: the page
	// must fall back quietly), then with none at all.
	copied := func(sel string) {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
			t.Errorf("click %s: %v", sel, err)
			return
		}
		label, err := chromedp.Run(bctx, chromedp.Poll[string](`(function () {
			var t = document.querySelector(`+jsString(sel)+`).textContent;
			return t !== "Copy" ? t : "";
		})()`, chromedp.WithPollingTimeout(10*time.Second)))
		if err != nil {
			t.Errorf("click %s: %v", sel, err)
			return
		}
		t.Logf("copy button %s says %q", sel, label)
	}
	copied(`#card-1 button.copy`)
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`Object.defineProperty(navigator, "clipboard", {value: undefined, configurable: true}) && true`)); err != nil {
		t.Fatal(err)
	}
	copied(`#card-2 button.copy`)

	pwned, err := chromedp.Run(bctx, chromedp.Evaluate[string](`typeof window.__pwned`))
	if err != nil {
		t.Fatal(err)
	}
	if pwned != "undefined" {
		t.Errorf("guest script ran: typeof window.__pwned = %q", pwned)
	}

	// Let late messages arrive, then read what the console got.
	if err := chromedp.Do(bctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	stopConsole()
	for m, err := range messages {
		if err != nil {
			break
		}
		if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
			t.Errorf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line)
		} else {
			t.Logf("console %s: %s", m.Type, m.Text)
		}
	}
}

// checkScreenshot asserts that a screenshot is a real picture: a PNG of some size that
// is not one solid colour. SEEDFALL_SCREENSHOT names a file to keep a copy in.
func checkScreenshot(t *testing.T, data []byte, path string) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("SEEDFALL_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 100 || b.Dy() < 100 {
		t.Fatalf("screenshot is %dx%d", b.Dx(), b.Dy())
	}
	if solid(img) {
		t.Fatalf("screenshot is one solid colour")
	}
	t.Logf("screenshot %dx%d, %d bytes", b.Dx(), b.Dy(), len(data))
}

func solid(img image.Image) bool {
	b := img.Bounds()
	r0, g0, b0, a0 := img.At(b.Min.X, b.Min.Y).RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, a := img.At(x, y).RGBA(); r != r0 || g != g0 || bl != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

// jsString quotes s as a JavaScript string literal (for our own selectors).
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// headless starts a headless Chromium for one test, with a fresh profile under dir, a
// width×height window and any extra flags, and stops it when the test ends (90 s at most).
func headless(t *testing.T, dir string, width, height int, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")),
		chromedp.WindowSize(width, height),
	}, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancel()
	})
	return bctx
}
