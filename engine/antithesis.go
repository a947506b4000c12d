package engine

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Guests that use the Antithesis Go SDK unchanged (github.com/antithesishq/antithesis-sdk-go)
// report their assertions through its local handler: when ANTITHESIS_SDK_LOCAL_OUTPUT
// names a file, the SDK opens it at package init (O_CREATE|O_APPEND; v0.9.0 does not
// truncate) and writes one JSON object per line. environ gives each node incarnation its
// own path on the node's simulated disk; when the incarnation ends (own exit, crash, or
// the end of the run, which kills the survivors) collectAntithesis reads that file and
// feeds the assertions into the run's properties, next to sim's own.
//
// The lines seedfall reads:
//
//	{"antithesis_sdk":{"language":{...},"sdk_version":"0.9.0","protocol_version":"1.1.0"}}
//	{"antithesis_assert":{"assert_type":"always","display_type":"Always","message":"m","id":"m",
//	  "hit":true,"must_hit":true,"condition":false,"location":{...},"details":{...}}}
//	{"antithesis_setup":{"status":"complete","details":{...}}}
//
// assert_type is "always" (Always, AlwaysOrUnreachable, and the numeric and boolean
// rich assertions), "sometimes", or "reachability" (Reachable with condition true,
// Unreachable with condition false; display_type tells them apart). A line with hit
// false is a declaration (written at init by code that antithesis-go-instrumentor
// generates): the property exists but was not reached. The SDK writes only the first
// passing and the first failing evaluation of each id per process, so a property's Count
// is the number of such lines, not of evaluations. The setup-complete line is also read
// live, as the workload writes it (sdk_lifecycle.go): it can start the generated faults.
// Every other line (the version line, lifecycle events, guidance, SDK diagnostics) is
// ignored.

// sdkAssert is the "antithesis_assert" object of one line.
type sdkAssert struct {
	AssertType  string          `json:"assert_type"`
	DisplayType string          `json:"display_type"`
	Message     string          `json:"message"`
	ID          string          `json:"id"`
	Hit         bool            `json:"hit"`
	MustHit     bool            `json:"must_hit"`
	Condition   bool            `json:"condition"`
	Details     json.RawMessage `json:"details"`
}

// kind maps the SDK's assert_type and display_type to a property kind ("" if unknown).
func (a *sdkAssert) kind() PropertyKind {
	switch a.AssertType {
	case "always":
		return PropAlways
	case "sometimes":
		return PropSometimes
	case "reachability":
		switch a.DisplayType {
		case "Reachable":
			return PropReachable
		case "Unreachable":
			return PropUnreachable
		}
		// Without a display type: Reachable must be hit, Unreachable must not.
		if a.MustHit {
			return PropReachable
		}
		return PropUnreachable
	}
	return ""
}

// name is the property's name: the message (the SDK's id is the message in v0.9.0).
func (a *sdkAssert) name() string {
	if a.Message != "" {
		return a.Message
	}
	return a.ID
}

// sdkEval is one property's outcome within one incarnation.
type sdkEval struct {
	kind     PropertyKind
	name     string
	declared bool
	pass     int // hit lines with condition true
	fail     int // hit lines with condition false
	details  string
}

// antithesisDir is the directory of the default per-incarnation output files
// (environ: /.seedfall/antithesis-<incarnation>.jsonl).
const antithesisDir = "/.seedfall"

// ensureAntithesisDir creates antithesisDir on the node's disk if it is missing: the SDK
// opens its output file with O_CREATE but does not create directories, so without it
// the SDK logs "Failed to open path" and writes nothing. It must run before each
// incarnation starts (a crash may undo the create under strict_dirs).
func (n *node) ensureAntithesisDir() {
	if _, err := n.disk.Lookup(antithesisDir); err != nil {
		n.disk.Create(antithesisDir, true)
	}
}

// antithesisOutputPath returns the local output path the incarnation's environment
// names, or "".
func (inc *incarnation) antithesisOutputPath() string {
	const key = "ANTITHESIS_SDK_LOCAL_OUTPUT="
	for _, kv := range inc.Environ() {
		if strings.HasPrefix(kv, key) {
			return kv[len(key):]
		}
	}
	return ""
}

// collectAntithesis reads the Antithesis SDK output of an incarnation that has just
// ended and records its assertions as properties of the run. A violated Always or a
// reached Unreachable fails the run (even when the run has already ended, so a
// violation found while the survivors are stopped still fails it). The file is removed
// afterwards, so a path reused by a later incarnation (an override in the node's env)
// starts empty.
func (w *world) collectAntithesis(inc *incarnation) {
	if !w.sim.antithesis {
		return
	}
	path := inc.antithesisOutputPath()
	if path == "" || !strings.HasPrefix(path, "/") {
		return
	}
	fs := inc.node.disk
	ino, err := fs.Lookup(path)
	if err != nil {
		return // the SDK never opened it (or could not)
	}
	st, err := fs.Stat(ino)
	if err != nil || st.Dir {
		return
	}
	data := make([]byte, st.Size)
	n, _ := fs.ReadAt(ino, data, 0)
	data = data[:n]
	fs.Unlink(path)

	// Aggregate per incarnation first, in the order the properties first appear.
	var order []*sdkEval
	byName := map[string]*sdkEval{}
	malformed := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			malformed++
			continue
		}
		raw, ok := obj["antithesis_assert"]
		if !ok {
			continue // version, setup complete, events, guidance, diagnostics
		}
		var a sdkAssert
		if err := json.Unmarshal(raw, &a); err != nil {
			malformed++
			continue
		}
		kind, name := a.kind(), a.name()
		if kind == "" || name == "" {
			malformed++
			continue
		}
		e := byName[name]
		if e == nil {
			e = &sdkEval{kind: kind, name: name}
			byName[name] = e
			order = append(order, e)
		}
		switch {
		case !a.Hit:
			e.declared = true
		case a.Condition:
			e.pass++
		default:
			e.fail++
			if e.details == "" {
				e.details = compactJSON(a.Details)
			}
		}
	}
	if malformed > 0 {
		w.tracef(inc.label, "antithesis: %d malformed line(s) in %s", malformed, path)
	}
	// Then fold the incarnation into the run.
	for _, e := range order {
		w.declareProperty(e.kind, e.name)
		// Passes first: the SDK does not say which came first, and a violation is
		// reported once either way.
		for i := 0; i < e.pass; i++ {
			w.assertHit(inc, e.kind, true, e.name, "")
		}
		for i := 0; i < e.fail; i++ {
			switch e.kind {
			case PropReachable:
				// A Reachable is always emitted with condition true; count it as reached.
				w.assertHit(inc, e.kind, true, e.name, "")
			default:
				w.assertHit(inc, e.kind, false, e.name, e.details)
			}
		}
	}
}

// declareProperty makes a property exist in the run without reaching it, so a sweep in
// which it is never reached still lists it (as not reached).
func (w *world) declareProperty(kind PropertyKind, name string) {
	if w.props[name] != nil {
		return
	}
	w.props[name] = &PropertyHit{Name: name, Kind: kind, Held: kind == PropAlways || kind == PropUnreachable}
}

// compactJSON returns raw JSON without insignificant space ("" for null or nothing).
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
