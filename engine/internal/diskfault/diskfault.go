// Package diskfault holds engine.DiskFault, a disk fault knob of the config, which reads
// and writes JSON as a number or an object. It is a package of its own so that the JSON
// methods are not part of engine's API listing.
package diskfault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"
)

// DiskFault is a disk fault's probability, optionally limited to some paths and op
// kinds. In a config it is written as a plain number (0.05: every path, every op it
// applies to) or as an object:
//
//	{"p": 0.05, "paths": ["/data/wal/*"], "ops": ["fsync"]}
type DiskFault struct {
	// P is the probability (fsync_eio: per sync call; crash_mid_op: the share of crashes
	// that happen during a disk op).
	P float64 `json:"p"`
	// Paths are globs (path.Match syntax, matched against the guest's absolute path; a
	// pattern ending in "/**" matches everything below that directory). An op matches
	// if any of its paths (both, for a rename or link) matches one. Empty: every path.
	Paths []string `json:"paths,omitempty"`
	// Ops are the op kinds the fault may hit (engine's diskOpKinds). Empty: every kind.
	Ops []string `json:"ops,omitempty"`
}

// Filtered reports whether the fault is limited to some paths or ops.
func (d DiskFault) Filtered() bool { return len(d.Paths) > 0 || len(d.Ops) > 0 }

// MarshalJSON writes the plain number when the fault is not limited, so that a config
// read from a number writes back as one.
func (d DiskFault) MarshalJSON() ([]byte, error) {
	if !d.Filtered() {
		return json.Marshal(d.P)
	}
	type plain DiskFault
	return json.Marshal(plain(d))
}

// UnmarshalJSON reads a number or an object with the fields p, paths and ops.
func (d *DiskFault) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		type plain DiskFault
		var v plain
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return badDiskFault(b)
		}
		*d = DiskFault(v)
		return nil
	}
	var p float64
	if err := json.Unmarshal(b, &p); err != nil {
		return badDiskFault(b)
	}
	*d = DiskFault{P: p}
	return nil
}

// badDiskFault is an *json.UnmarshalTypeError so that the decoder fills in the field's
// path, which ParseConfig puts in the message.
func badDiskFault(b []byte) error {
	v := string(b)
	if len(v) > 80 {
		v = v[:77] + "..."
	}
	return &json.UnmarshalTypeError{Value: v, Type: reflect.TypeFor[DiskFault]()}
}

// Validate checks the fault's fields; field is its path in the config.
func (d DiskFault) Validate(field string, kinds []string) error {
	if d.P < 0 || d.P > 1 || d.P != d.P {
		return fmt.Errorf("field %s: %v is not a probability (0 to 1)", field, d.P)
	}
	if d.Filtered() && d.P == 0 {
		// Not an error of itself, but almost certainly a forgotten "p".
		return fmt.Errorf("field %s.p: a probability above 0 is required when paths or ops are given", field)
	}
	for i, p := range d.Paths {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("field %s.paths[%d]: %q is not an absolute path glob (e.g. \"/data/wal/*\")", field, i, p)
		}
		if _, err := path.Match(strings.TrimSuffix(p, "/**"), ""); err != nil {
			return fmt.Errorf("field %s.paths[%d]: %q is not a valid glob: %v", field, i, p, err)
		}
	}
	for i, o := range d.Ops {
		ok := false
		for _, k := range kinds {
			ok = ok || o == k
		}
		if !ok {
			return fmt.Errorf("field %s.ops[%d]: %q is not an op kind (want %s)", field, i, o, orList(kinds))
		}
	}
	return nil
}

// Matches reports whether an op of kind (as the filters name it) on paths is a target.
func (d *DiskFault) Matches(kind string, paths []string) bool {
	if d == nil {
		return true
	}
	if len(d.Ops) > 0 {
		ok := false
		for _, o := range d.Ops {
			ok = ok || o == kind
		}
		if !ok {
			return false
		}
	}
	if len(d.Paths) == 0 {
		return true
	}
	for _, pat := range d.Paths {
		for _, p := range paths {
			if globMatch(pat, p) {
				return true
			}
		}
	}
	return false
}

// globMatch matches p against pat: path.Match, or, for "dir/**", anything below dir.
func globMatch(pat, p string) bool {
	if dir, ok := strings.CutSuffix(pat, "/**"); ok {
		if dir == "" {
			return true
		}
		// The directory part may itself be a glob: match it against each ancestor of p.
		for q := path.Dir(p); ; q = path.Dir(q) {
			if m, _ := path.Match(dir, q); m {
				return true
			}
			if q == "/" || q == "." {
				return false
			}
		}
	}
	m, _ := path.Match(pat, p)
	return m
}

// orList renders "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
