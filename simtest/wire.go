package simtest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// The calls' wire format is one JSON object per line: a request {"m":method,"a":[args]},
// a response {"r":[results]} or {"e":message}. encoding/json writes and reads it
// whatever the types; the functions here write and read the common case (strings,
// bools and integers, and the two objects' fixed shapes) without reflection, and write
// exactly the bytes encoding/json writes, so that the wire, and with it a run's trace,
// is the same either way. Anything else falls back to encoding/json. Under the
// simulator this is the workload's and the handlers' own CPU on every call (issue 61:
// `seedfall test` against a line-protocol harness).

// appendValue appends v as encoding/json's Marshal encodes it.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, data...), nil
}

// appendString appends s quoted as encoding/json quotes it: a string of printable ASCII
// without '"', '\\' and the HTML characters it escapes is copied as it is; any other
// goes through encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			data, _ := json.Marshal(s) // a string always encodes
			return append(dst, data...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendRequest appends the request line of a call, as json.Marshal(request) writes it.
func appendRequest(dst []byte, method string, args []any) ([]byte, error) {
	dst = append(dst, `{"m":`...)
	dst = appendString(dst, method)
	if len(args) == 0 {
		return append(dst, `,"a":null}`...), nil
	}
	dst = append(dst, `,"a":[`...)
	for i, a := range args {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendValue(dst, a); err != nil {
			return dst, &argError{i, err}
		}
	}
	return append(dst, "]}"...), nil
}

type argError struct {
	i   int
	err error
}

func (e *argError) Error() string { return e.err.Error() }

// appendResponse appends resp as a json.Encoder writes it (with its newline).
func appendResponse(dst []byte, resp response) []byte {
	switch {
	case resp.Err != nil && resp.Results == nil:
		dst = append(dst, `{"e":`...)
		dst = appendString(dst, *resp.Err)
		return append(dst, "}\n"...)
	case resp.Err == nil:
		if len(resp.Results) == 0 {
			return append(dst, "{}\n"...)
		}
		dst = append(dst, `{"r":[`...)
		for i, r := range resp.Results {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, r...)
		}
		return append(dst, "]}\n"...)
	}
	data, _ := json.Marshal(resp)
	return append(append(dst, data...), '\n')
}

// parseRequest reads a request line; ok is false when it is not of the shape
// appendRequest writes (then encoding/json reads it).
func parseRequest(line []byte) (req request, ok bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	rest, ok := cut(line, `{"m":`)
	if !ok {
		return req, false
	}
	end := plainStringEnd(rest)
	if end < 0 {
		return req, false
	}
	req.Method = string(rest[1:end])
	rest = rest[end+1:]
	if string(rest) == `,"a":null}` {
		return req, true
	}
	if rest, ok = cut(rest, `,"a":`); !ok {
		return req, false
	}
	args, rest, ok := splitArray(rest)
	if !ok || string(rest) != "}" {
		return req, false
	}
	req.Args = args
	return req, true
}

// parseResponse reads a response line (as appendResponse writes it); ok is false when
// it is not of that shape.
func parseResponse(line []byte) (resp response, ok bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if string(line) == "{}" {
		return resp, true
	}
	if rest, ok := cut(line, `{"e":`); ok {
		end := plainStringEnd(rest)
		if end < 0 || string(rest[end+1:]) != "}" {
			return resp, false
		}
		msg := string(rest[1:end])
		resp.Err = &msg
		return resp, true
	}
	rest, ok := cut(line, `{"r":`)
	if !ok {
		return resp, false
	}
	results, rest, ok := splitArray(rest)
	if !ok || string(rest) != "}" {
		return resp, false
	}
	resp.Results = results
	return resp, true
}

// decodeInto stores raw in the value p points to (a reflect.Value of a pointer), as
// json.Unmarshal does.
func decodeInto(raw []byte, p reflect.Value) error {
	e := p.Elem()
	switch e.Kind() {
	case reflect.String:
		if end := plainStringEnd(raw); end == len(raw)-1 {
			e.SetString(string(raw[1:end]))
			return nil
		}
	case reflect.Bool:
		switch string(raw) {
		case "true":
			e.SetBool(true)
			return nil
		case "false":
			e.SetBool(false)
			return nil
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n, err := strconv.ParseInt(string(raw), 10, e.Type().Bits()); err == nil {
			e.SetInt(n)
			return nil
		}
	}
	return json.Unmarshal(raw, p.Interface())
}

// decodeValue is decodeInto for a pointer given as any (Reply.Scan's).
func decodeValue(raw []byte, ptr any) error {
	switch p := ptr.(type) {
	case *string:
		if end := plainStringEnd(raw); end == len(raw)-1 {
			*p = string(raw[1:end])
			return nil
		}
	case *bool:
		switch string(raw) {
		case "true":
			*p = true
			return nil
		case "false":
			*p = false
			return nil
		}
	}
	return json.Unmarshal(raw, ptr)
}

func cut(b []byte, prefix string) ([]byte, bool) {
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return nil, false
	}
	return b[len(prefix):], true
}

// plainStringEnd is the index of the closing quote of the JSON string b starts with,
// if it has no escape (then its bytes between the quotes are its value: encoding/json
// writes no raw control character or invalid UTF-8); -1 otherwise.
func plainStringEnd(b []byte) int {
	if len(b) < 2 || b[0] != '"' {
		return -1
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i
		case '\\':
			return -1
		}
	}
	return -1
}

// splitArray splits the JSON array b starts with into its elements (raw) and returns
// what follows it; ok is false for anything it does not recognise.
func splitArray(b []byte) (elems []json.RawMessage, rest []byte, ok bool) {
	if len(b) < 2 || b[0] != '[' {
		return nil, nil, false
	}
	i := 1
	if b[i] == ']' {
		return []json.RawMessage{}, b[2:], true
	}
	for {
		end := valueEnd(b, i)
		if end < 0 {
			return nil, nil, false
		}
		elems = append(elems, json.RawMessage(b[i:end]))
		if end >= len(b) {
			return nil, nil, false
		}
		switch b[end] {
		case ',':
			i = end + 1
		case ']':
			return elems, b[end+1:], true
		default:
			return nil, nil, false
		}
	}
}

// valueEnd is the index just past the compact JSON value at b[i:], -1 if there is none.
func valueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			j++
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return -1
			}
			if depth == 0 {
				return j + 1
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return j // the end of a number or literal at the array's end
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		case ' ', '\t', '\n', '\r':
			return -1 // not compact: encoding/json reads it
		}
	}
	return -1
}

// dispatchTyped calls the handlers of the shapes a key-value store's tests declare
// (put(k, v string) error, get(k string) (string, bool[, error])) without reflection,
// with the same outcome as dispatch's reflective call; ok is false for any other shape,
// or arguments that are not plain strings.
func (n *N) dispatchTyped(fn reflect.Value, req request) (resp response, ok bool) {
	str := func(i int) (string, bool) {
		if i >= len(req.Args) {
			return "", false
		}
		raw := req.Args[i]
		if end := plainStringEnd(raw); end == len(raw)-1 {
			return string(raw[1:end]), true
		}
		return "", false
	}
	results := func(v string, found bool) response {
		r := response{Results: make([]json.RawMessage, 2)}
		r.Results[0] = appendString(nil, v)
		r.Results[1] = strconv.AppendBool(nil, found)
		return r
	}
	switch f := fn.Interface().(type) {
	case func(string, string) error:
		k, ok1 := str(0)
		v, ok2 := str(1)
		if !ok1 || !ok2 || len(req.Args) != 2 {
			return resp, false
		}
		if err := f(k, v); err != nil {
			return response{Err: ptr(err.Error())}, true
		}
		return response{}, true
	case func(string) (string, bool, error):
		k, ok1 := str(0)
		if !ok1 || len(req.Args) != 1 {
			return resp, false
		}
		v, found, err := f(k)
		if err != nil {
			return response{Err: ptr(err.Error())}, true
		}
		return results(v, found), true
	case func(string) (string, bool):
		k, ok1 := str(0)
		if !ok1 || len(req.Args) != 1 {
			return resp, false
		}
		v, found := f(k)
		return results(v, found), true
	}
	return resp, false
}
