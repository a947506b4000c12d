// Package srcedit makes seedfall's build overlays out of the building toolchain's own
// files: each replaced file of $GOROOT is read from the user's Go installation and
// changed by a few anchored text edits, so that no copy of one Go release's files is
// shipped and a new release is either patched exactly or refused.
//
// An Edit names what it does and has one or more variants, each an anchor (a piece of
// the original file) and its replacement. A variant may be marked with the release
// series it was written for ("go1.27"): where a release changed the code an edit
// touches, the edit keeps one variant per release. For a release that a variant names,
// only the variants naming it are tried; for any other release every variant is tried
// in order. The first variant whose anchor occurs exactly once applies; if none does,
// Apply returns an *Error naming the overlay, the file, the edit and the Go version. A
// build never goes on with a half-edited file.
//
// It owns the edit mechanism and the toolchain's version; it knows no overlay's edits
// (internal/overlay and internal/interleave hold theirs) and writes no file.
package srcedit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Supported are the Go release series whose toolchains every overlay is tested with
// (in .ci/run): the two releases that Go itself supports.
var Supported = []string{"go1.26", "go1.27"}

// Oldest is the oldest release series seedfall builds nodes with. A newer series than
// the newest in Supported is tried: its files are edited only where every anchor is
// found exactly once, and an edit that does not apply is refused.
const Oldest = "go1.26"

// Variant is one way of making an edit, for the release series listed in Go (every
// release if Go is empty).
type Variant struct {
	Go     []string // release series this variant was written for, e.g. "go1.27"
	Anchor string   // text of the original file that must occur exactly once
	With   string   // what replaces it
}

// Edit is one change to a file.
type Edit struct {
	What     string // what the edit does, for error messages
	Variants []Variant
}

// Replace is an edit with a single variant for every release.
func Replace(what, anchor, with string) Edit {
	return Edit{What: what, Variants: []Variant{{Anchor: anchor, With: with}}}
}

// File is a file of $GOROOT and the edits that make its replacement.
type File struct {
	Path  string // slash-separated, relative to GOROOT: "src/net/net_fake.go"
	Edits []Edit
}

// Error is an edit that does not fit the toolchain's file, or a toolchain that
// cannot be edited at all.
type Error struct {
	Overlay string // "net overlay", "interleave", ...
	GOROOT  string
	Version string // the toolchain's release, "go1.27.3"; "" if unknown
	File    string // relative to GOROOT; "" for the toolchain as a whole
	Edit    string // the edit's What; "" for the file or toolchain as a whole
	Reason  string
}

func (e *Error) Error() string {
	v := e.Version
	if v == "" {
		v = "an unknown Go version"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.Overlay)
	switch {
	case e.Edit != "":
		fmt.Fprintf(&b, "the edit %q of %s does not apply to %s at %s: %s", e.Edit, e.File, v, e.GOROOT, e.Reason)
	case e.File != "":
		fmt.Fprintf(&b, "%s of %s at %s: %s", e.File, v, e.GOROOT, e.Reason)
	default:
		fmt.Fprintf(&b, "the Go toolchain at %s is %s: %s", e.GOROOT, v, e.Reason)
	}
	fmt.Fprintf(&b, " (seedfall is tested with %s)", strings.Join(Supported, " and "))
	return b.String()
}

// Version reads the release of the toolchain at goroot from its VERSION file: "go1.27.3".
func Version(goroot string) (string, error) {
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "", err
	}
	v, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(v), nil
}

// Series is the release series of a Go version: "go1.27.3" and "go1.27rc1" are
// "go1.27". A version that is not a release ("devel ...") is "".
func Series(version string) string {
	minor, ok := minorOf(version)
	if !ok {
		return ""
	}
	return "go1." + strconv.Itoa(minor)
}

// minorOf is the minor number of a go1.N version.
func minorOf(version string) (int, bool) {
	rest, ok := strings.CutPrefix(version, "go1.")
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(rest[:end])
	return n, err == nil
}

// CheckToolchain reads the version of the toolchain at goroot and refuses one older
// than Oldest. A toolchain without a VERSION file, or whose version is not a release (a
// development build), is accepted with version "": its files are edited like any
// other, and an edit that does not fit is refused.
func CheckToolchain(overlay, goroot string) (version string, err error) {
	v, err := Version(goroot)
	if err != nil {
		return "", nil
	}
	m, ok := minorOf(v)
	if !ok {
		return v, nil
	}
	oldest, _ := minorOf(Oldest)
	if m < oldest {
		return v, &Error{Overlay: overlay, GOROOT: goroot, Version: v,
			Reason: fmt.Sprintf("seedfall builds nodes with %s or later; install a supported Go release", Oldest)}
	}
	return v, nil
}

// Apply applies f's edits, in order, to src, the toolchain's own copy of f.Path.
// version is the toolchain's release (for choosing variants and for errors).
func Apply(overlay, goroot, version string, f File, src []byte) ([]byte, error) {
	series := Series(version)
	out := src
	for _, e := range f.Edits {
		vs := variantsFor(e, series)
		applied := false
		var counts []string
		for _, v := range vs {
			n := bytes.Count(out, []byte(v.Anchor))
			if n == 1 {
				out = bytes.Replace(out, []byte(v.Anchor), []byte(v.With), 1)
				applied = true
				break
			}
			counts = append(counts, strconv.Itoa(n))
		}
		if !applied {
			reason := fmt.Sprintf("the code it changes occurs %s times, want exactly once", strings.Join(counts, ", "))
			if len(vs) > 1 {
				reason = fmt.Sprintf("none of its %d variants fits: their code occurs %s times, want exactly once", len(vs), strings.Join(counts, ", "))
			}
			return nil, &Error{Overlay: overlay, GOROOT: goroot, Version: version, File: f.Path, Edit: e.What, Reason: reason}
		}
	}
	return out, nil
}

// variantsFor are the variants of e to try for a release series: those written for it
// if any are, else all of them.
func variantsFor(e Edit, series string) []Variant {
	var mine []Variant
	for _, v := range e.Variants {
		if series != "" && slices.Contains(v.Go, series) {
			mine = append(mine, v)
		}
	}
	if len(mine) > 0 {
		return mine
	}
	return e.Variants
}

// ReadAndApply reads f from goroot and applies its edits.
func ReadAndApply(overlay, goroot, version string, f File) ([]byte, error) {
	src, err := os.ReadFile(filepath.Join(goroot, filepath.FromSlash(f.Path)))
	if err != nil {
		return nil, &Error{Overlay: overlay, GOROOT: goroot, Version: version, File: f.Path,
			Reason: fmt.Sprintf("cannot read it (is %s `go env GOROOT`?): %v", goroot, err)}
	}
	return Apply(overlay, goroot, version, f, src)
}

// Fingerprint identifies a set of edits, for a build cache keyed on what an overlay
// does (the toolchain's files are keyed by its version elsewhere).
func Fingerprint(files []File) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "file\x00%s\n", f.Path)
		for _, e := range f.Edits {
			fmt.Fprintf(h, "edit\x00%s\n", e.What)
			for _, v := range e.Variants {
				fmt.Fprintf(h, "variant\x00%s\x00%d:%s\x00%d:%s\n", strings.Join(v.Go, ","), len(v.Anchor), v.Anchor, len(v.With), v.With)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
