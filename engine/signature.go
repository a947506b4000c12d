package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

var (
	sigIncarnation = regexp.MustCompile(`#\d+`)
	sigQuoted      = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	sigGoLine      = regexp.MustCompile(`(\.go):\d+\b`)
	sigAddr        = regexp.MustCompile(`\b[\w.-]+:\d+\b`)
	sigHex         = regexp.MustCompile(`\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{8,}\b`)
	// sigNumToken is what a number becomes, in any base: a hash or an offset printed in
	// hex is sometimes all digits, and 12345678 is as much a number as 1234567, so one
	// token keeps one bug one signature however wide its numbers are.
	sigNumToken = "N"
	sigDuration = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`)
	sigKV       = regexp.MustCompile(`\b([A-Za-z_]+)\d+\b`)
	sigNumber   = regexp.MustCompile(`\d+`)
	// sigDotted is a number with a fraction or parts (a retry's value "v73.1", "1.5",
	// "10.0.0.1"): one number, so that a retried write reads as its first attempt. A
	// module version ("raft@v1.8.0", in a source location) is kept (dotted).
	sigDotted = regexp.MustCompile(`N(\.N)+`)
	// sigNumbered is a numbered name with a dash and a tail: a value "v12-000", "v12-"
	// once its numbers are N, or a message "m12.0-xxxxxxxxx…" that a checker pads with one
	// letter and shortens. One token, whatever the tail, when the tail is a number, empty,
	// or one letter repeated (numberedTail).
	sigNumbered = regexp.MustCompile(`([A-Za-z_]N)-(N|[A-Za-z]+)?(…|\.\.\.)?`)
	// sigShortened is the tail kvcheck and its kin give a long value they shorten
	// ("v12-444...(80 bytes)"): how long the value was is not the bug.
	sigShortened = regexp.MustCompile(`\.\.\.\(N bytes\)`)
	sigSpace     = regexp.MustCompile(`\s+`)
)

// NormalizeReason strips the volatile parts of a failure reason (incarnations, quoted
// values, source line numbers, addresses, hex, durations, key and value numbers, other
// numbers, a number's fraction or parts, a numbered value's dashed tail, a shortened
// value's length) so that two
// seeds hitting the same bug give the same text. Numbers of any
// width and hex values all become N; a word of letters then digits (k12, a1234567) is a
// key or a value numbered by the run and becomes its letters and N (kN, aN), so a hex
// value that happens to read that way (deadbeef0042) does too. The file of a
// source location ("main.go:38") is kept.
func NormalizeReason(reason string) string {
	s := reason
	s = sigIncarnation.ReplaceAllString(s, "#N")
	s = sigQuoted.ReplaceAllString(s, `"…"`)
	s = sigGoLine.ReplaceAllString(s, "$1:N") // a source line, not an address: keep the file
	s = sigAddr.ReplaceAllString(s, "ADDR")
	s = sigKV.ReplaceAllString(s, "${1}N") // before hex: a1234567 is key a's number, as a3 is
	s = sigHex.ReplaceAllString(s, sigNumToken)
	s = sigDuration.ReplaceAllString(s, "DUR")
	s = sigNumber.ReplaceAllString(s, "N")
	s = dotted(s)
	s = sigShortened.ReplaceAllString(s, "")
	s = numberedTail(s)
	s = sigSpace.ReplaceAllString(strings.TrimSpace(s), " ")
	return s
}

// numberedTail folds a numbered value's dashed tail into the value (sigNumbered): a
// number, nothing, or a padding of one letter repeated, shortened or not. Any other tail
// ("n3-leader") is a word, and kept.
func numberedTail(s string) string {
	return sigNumbered.ReplaceAllStringFunc(s, func(m string) string {
		sub := sigNumbered.FindStringSubmatch(m)
		tail := sub[2]
		if tail == "" || tail == "N" || strings.Count(tail, tail[:1]) == len(tail) {
			return sub[1]
		}
		return m
	})
}

// normalizeOutput is NormalizeReason for a line of a guest's output, the stuck
// workload's last words: quoted text is kept (what the server answered is what tells
// one stall from another), its numbers are normalized like the rest.
func normalizeOutput(line string) string {
	s := line
	s = sigIncarnation.ReplaceAllString(s, "#N")
	s = sigGoLine.ReplaceAllString(s, "$1:N")
	s = sigAddr.ReplaceAllString(s, "ADDR")
	s = sigKV.ReplaceAllString(s, "${1}N") // before hex: a1234567 is key a's number, as a3 is
	s = sigHex.ReplaceAllString(s, sigNumToken)
	s = sigDuration.ReplaceAllString(s, "DUR")
	s = sigNumber.ReplaceAllString(s, "N")
	s = dotted(s)
	s = sigShortened.ReplaceAllString(s, "")
	s = numberedTail(s)
	return sigSpace.ReplaceAllString(strings.TrimSpace(s), " ")
}

// Signature returns the identity of the bug a failing result hit: a short hash of the
// failure's kind and its normalized reason. The same bug on different seeds gives the same
// signature; different bugs give different ones. It returns "" for a result without a
// failure.
//
// The kinds of the faults before the failure are deliberately not part of the hash: on a
// sweep they vary from seed to seed for one bug (a bystander partition here, none there),
// which would split one bug into many groups. report.FaultClasses gives them for display, and a
// shrunk plan gives the ones that matter.
func Signature(r *Result) string {
	if r == nil || r.Failure == nil {
		return ""
	}
	h := sha256.Sum256([]byte(signatureKey(r)))
	return "sig-" + hex.EncodeToString(h[:])[:12]
}

// signatureKey is the text behind Signature: "kind|normalized reason". A watchdog
// outcome is one bug however it was noticed (the run's own wall-clock budget, or the
// sweep killing a worker that stopped answering), so its key is the kind alone. A
// liveness failure's key is its kind and the workload's normalized last output line.
func signatureKey(r *Result) string {
	if r.Failure.Kind == KindWatchdog {
		return string(r.Failure.Kind) + "|a guest ran past the wall-clock watchdog without host calls"
	}
	if r.Failure.Kind == KindLiveness {
		// What the workload last said is what it was stuck on; the rest of the reason
		// (the moment, the horizon or the quiet period, the kind of wait) varies from
		// seed to seed for one stall.
		return string(r.Failure.Kind) + "|last output: " + normalizeOutput(r.Failure.LastOutput)
	}
	// What the workload marked as context (sim.FailureContext) is where it noticed the
	// failure, not what failed: one bug seen by two checks is one signature.
	return string(r.Failure.Kind) + "|" + NormalizeReason(strings.TrimSpace(strings.TrimSuffix(r.Failure.Reason, r.Failure.Context)))
}

// dotted replaces each sigDotted match by N, except in a module version ("@vN.N.N").
func dotted(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range sigDotted.FindAllStringIndex(s, -1) {
		if m[0] >= 2 && s[m[0]-2:m[0]] == "@v" {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString("N")
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
