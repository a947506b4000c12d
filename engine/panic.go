package engine

import (
	"strings"

	"github.com/seedfall/seedfall/engine/internal/goloc"
)

// panicScan follows a guest's output lines for the report the Go runtime prints when a
// panic or a fatal error kills the process:
//
//	panic: boom [recovered]
//		panic: again
//	[signal …]
//
//	goroutine 1 [running]:
//	main.crash(…)
//		example.com/app/main.go:38 +0x25
//	…
//
// and keeps what identifies it: the first "panic: …" (or "fatal error: …") line, without
// the runtime's "[recovered]" marks, and the first frame of the panicking goroutine in
// the program's own code (not the standard library's nor sim's).
type panicScan struct {
	msg   string // "panic: boom"; "" if no report was seen
	frame string // "main.crash at app/main.go:38"; "" if none found (yet)
	state int
	fn    string // the function of the frame being read
}

const (
	panicNone   = iota // no report, or the report's frame was found
	panicHeader        // after the panic line, before the goroutine header
	panicFrames        // reading the panicking goroutine's frames
)

func (p *panicScan) line(l string) {
	if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
		if p.state != panicHeader {
			p.msg, p.frame, p.fn, p.state = cleanPanicLine(l), "", "", panicHeader
		}
		return
	}
	switch p.state {
	case panicHeader:
		if strings.HasPrefix(l, "goroutine ") && strings.HasSuffix(l, ":") {
			p.state = panicFrames
		}
	case panicFrames:
		switch {
		case l == "" || strings.HasPrefix(l, "created by "):
			p.state = panicNone // end of the goroutine's own frames
		case strings.HasPrefix(l, "\t"):
			file := strings.TrimSpace(l)
			if i := strings.LastIndex(file, " +0x"); i >= 0 {
				file = file[:i]
			}
			if i := strings.LastIndexByte(file, ':'); i > 0 && goloc.LayerFile(file[:i]) {
				p.fn = "" // the platform layer's port file: its caller is the frame
			}
			if p.fn != "" && !runtimeFrame(p.fn) {
				p.frame = p.fn + " at " + goloc.ShortFile(file)
				p.state = panicNone
			}
			p.fn = ""
		default:
			p.fn = l
			if i := strings.LastIndexByte(l, '('); i > 0 {
				p.fn = l[:i]
			}
		}
	}
}

// reason is the failure reason of a panic: "panic: boom (in main.crash at
// app/main.go:38)", or "" if the output held no panic report.
func (p *panicScan) reason() string {
	if p.msg == "" {
		return ""
	}
	if p.frame == "" {
		return p.msg
	}
	return p.msg + " (in " + p.frame + ")"
}

// cleanPanicLine drops the marks the runtime adds to a panic line that was recovered
// and panicked again.
func cleanPanicLine(l string) string {
	for _, mark := range []string{" [recovered, repanicked]", " [recovered]"} {
		l = strings.TrimSuffix(l, mark)
	}
	return strings.TrimSpace(l)
}

// runtimeFrame reports whether a traceback's function is not the program's own: the
// builtin panic, the standard library, or sim.
func runtimeFrame(fn string) bool {
	if fn == "panic" {
		return true
	}
	return goloc.StdFunc(fn) || strings.HasPrefix(fn, goloc.SimPackage+".")
}

// panicReason is the reason of an incarnation that died of a Go panic or fatal error
// (exit code 2, and a report in its output), or "".
func (inc *incarnation) panicReason() string {
	if inc.code != 2 {
		return ""
	}
	return inc.panics.reason()
}
