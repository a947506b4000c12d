package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
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
	sigSpace    = regexp.MustCompile(`\s+`)
)

// NormalizeReason strips the volatile parts of a failure reason (incarnations, quoted
// values, source line numbers, addresses, hex, durations, key and value numbers, other
// numbers) so that two seeds hitting the same bug give the same text. Numbers of any
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
	s = sigSpace.ReplaceAllString(strings.TrimSpace(s), " ")
	return s
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
	return sigSpace.ReplaceAllString(strings.TrimSpace(s), " ")
}

// Signature returns the identity of the bug a failing result hit: a short hash of the
// failure's kind and its normalized reason. The same bug on different seeds gives the same
// signature; different bugs give different ones. It returns "" for a result without a
// failure.
//
// The kinds of the faults before the failure are deliberately not part of the hash: on a
// sweep they vary from seed to seed for one bug (a bystander partition here, none there),
// which would split one bug into many groups. FaultClasses gives them for display, and a
// shrunk plan gives the ones that matter.
func Signature(r *Result) string {
	if r == nil || r.Failure == nil {
		return ""
	}
	h := sha256.Sum256([]byte(SignatureKey(r)))
	return "sig-" + hex.EncodeToString(h[:])[:12]
}

// SignatureKey is the text behind Signature: "kind|normalized reason". A watchdog
// outcome is one bug however it was noticed (the run's own wall-clock budget, or the
// sweep killing a worker that stopped answering), so its key is the kind alone. A
// liveness failure's key is its kind and the workload's normalized last output line.
func SignatureKey(r *Result) string {
	if r.Failure.Kind == string(VerdictWatchdog) {
		return r.Failure.Kind + "|a guest ran past the wall-clock watchdog without host calls"
	}
	if r.Failure.Kind == KindLiveness {
		// What the workload last said is what it was stuck on; the rest of the reason
		// (the moment, the horizon or the quiet period, the kind of wait) varies from
		// seed to seed for one stall.
		return r.Failure.Kind + "|last output: " + normalizeOutput(r.Failure.LastOutput)
	}
	return r.Failure.Kind + "|" + NormalizeReason(r.Failure.Reason)
}

// FaultClasses returns the sorted kinds of the faults applied before the failure, with a
// crash during a disk op reported as "crash-mid-op".
func FaultClasses(r *Result) []string {
	if r == nil || r.Failure == nil {
		return nil
	}
	kinds := map[string]bool{}
	for _, f := range r.Faults {
		if f.AtNS <= r.Failure.AtNS {
			k := string(f.Kind)
			if f.Kind == FaultCrash && f.DiskOp > 0 {
				k = "crash-mid-op"
			}
			kinds[k] = true
		}
	}
	ks := make([]string, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
