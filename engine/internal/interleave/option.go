package interleave

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Option is a node's "interleave" field (engine.Interleave): build the node with a Go
// runtime whose scheduler lets seedfall choose, from a seeded stream of the
// incarnation's own, which ready goroutine runs next (docs/interleave.md). In the config
// it is true, false or an object, {"trace": true, "file_ops": true}.
type Option struct {
	// On builds the node with the interleaving runtime.
	On bool `json:"-"`
	// Trace writes a trace line for every choice ("n1#1 interleave 2 of 3"). Off by
	// default: a busy node makes thousands.
	Trace bool `json:"trace,omitempty"`
	// FileOps adds a scheduling point before every operation on an open file, where
	// another ready goroutine may run first, as Linux lets others run while one is in
	// a blocking syscall.
	FileOps bool `json:"file_ops,omitempty"`
}

// IsZero makes an interleave that is off disappear from a marshaled config.
func (il Option) IsZero() bool { return !il.On }

// MarshalJSON writes true, false or the object form.
func (il Option) MarshalJSON() ([]byte, error) {
	if !il.On || (!il.Trace && !il.FileOps) {
		return json.Marshal(il.On)
	}
	type plain Option
	return json.Marshal(plain(il))
}

// UnmarshalJSON reads true, false or an object ({"trace": true}, {"file_ops": true}:
// either turns it on).
func (il *Option) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		type plain Option
		var v plain
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return badInterleave(b)
		}
		*il = Option(v)
		il.On = true
		return nil
	}
	var on bool
	if err := json.Unmarshal(b, &on); err != nil {
		return badInterleave(b)
	}
	*il = Option{On: on}
	return nil
}

// badInterleave is an *json.UnmarshalTypeError so that the decoder fills in the field's
// path, which ParseConfig puts in the message.
func badInterleave(b []byte) error {
	v := string(b)
	if len(v) > 80 {
		v = v[:77] + "..."
	}
	return &json.UnmarshalTypeError{Value: v, Type: reflect.TypeFor[Option]()}
}
