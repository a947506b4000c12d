// Package duration holds engine.Duration, the config's durations, which read and write
// JSON as text. It is a package of its own so that the JSON methods are not part of
// engine's API listing.
package duration

import (
	"encoding/json"
	"reflect"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as text ("250ms", "1.5s").
type Duration time.Duration

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "250ms" (or a number of nanoseconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return badDuration(b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return badDuration(b)
	}
	*d = Duration(v)
	return nil
}

// badDuration is an *json.UnmarshalTypeError so that the decoder fills in the field's
// path ("faults.restart_delay"), which ParseConfig puts in the message.
func badDuration(b []byte) error {
	return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Duration]()}
}
