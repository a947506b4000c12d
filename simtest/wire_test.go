package simtest

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// wireValues are arguments and results of every kind the fast path takes, and some it
// leaves to encoding/json.
func wireValues() []any {
	vals := []any{
		"", "k0", "v16-6666666666666666", "a\"quote", `back\slash`, "<html>&", "tab\there",
		"new\nline", "é unicode ✓", "\x00\x1f", string([]byte{0xff, 0xfe}), "\u2028",
		true, false, 0, -1, 42, int64(-1 << 62), uint64(1 << 63),
		3.5, []string{"a", "b"}, map[string]int{"x": 1}, []byte("raw"), nil,
		struct{ A string }{"x,]}"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		vals = append(vals, string(b))
	}
	return vals
}

// TestWireMatchesEncodingJSON: the fast path writes exactly the bytes encoding/json
// writes (so the wire, and a run's trace, is the same either way), and reads back what
// encoding/json reads.
func TestWireMatchesEncodingJSON(t *testing.T) {
	vals := wireValues()
	for _, v := range vals {
		got, err := appendValue(nil, v)
		want, werr := json.Marshal(v)
		if (err != nil) != (werr != nil) || string(got) != string(want) {
			t.Fatalf("appendValue(%#v) = %q, %v; encoding/json %q, %v", v, got, err, want, werr)
		}
	}
	for i := 0; i+3 <= len(vals); i++ {
		args := vals[i : i+3]
		line, err := appendRequest(nil, "put", args)
		if err != nil {
			t.Fatal(err)
		}
		req := request{Method: "put"}
		for _, a := range args {
			data, _ := json.Marshal(a)
			req.Args = append(req.Args, data)
		}
		want, _ := json.Marshal(req)
		if string(line) != string(want) {
			t.Fatalf("request %q, encoding/json %q", line, want)
		}
		got, ok := parseRequest(append(line, '\n'))
		var back request
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatal(err)
		}
		if !ok || !reflect.DeepEqual(got, back) {
			t.Fatalf("parseRequest(%q) = %+v, %v; encoding/json %+v", line, got, ok, back)
		}
		// As results of a response.
		resp := response{Results: req.Args}
		var enc strings.Builder
		json.NewEncoder(&enc).Encode(resp)
		if out := appendResponse(nil, resp); string(out) != enc.String() {
			t.Fatalf("response %q, json.Encoder %q", out, enc.String())
		}
		pr, ok := parseResponse([]byte(enc.String()))
		var br response
		json.Unmarshal([]byte(enc.String()), &br)
		if !ok || !reflect.DeepEqual(pr, br) {
			t.Fatalf("parseResponse(%q) = %+v, %v; encoding/json %+v", enc.String(), pr, ok, br)
		}
	}
	for _, msg := range []string{"boom", "a <b> & \"c\"", "line\nbreak"} {
		resp := response{Err: &msg}
		var enc strings.Builder
		json.NewEncoder(&enc).Encode(resp)
		if out := appendResponse(nil, resp); string(out) != enc.String() {
			t.Fatalf("error response %q, json.Encoder %q", out, enc.String())
		}
		pr, ok := parseResponse([]byte(enc.String()))
		var br response
		json.Unmarshal([]byte(enc.String()), &br)
		if ok && (pr.Err == nil || *pr.Err != *br.Err) {
			t.Fatalf("parseResponse(%q) = %q, encoding/json %q", enc.String(), *pr.Err, *br.Err)
		}
	}
	for _, r := range []response{{}, {Results: []json.RawMessage{}}} {
		var enc strings.Builder
		json.NewEncoder(&enc).Encode(r)
		if out := appendResponse(nil, r); string(out) != enc.String() {
			t.Fatalf("response %+v: %q, json.Encoder %q", r, out, enc.String())
		}
	}
}

// TestWireDecodes: arguments and results decode into typed values as json.Unmarshal
// decodes them, escapes and all.
func TestWireDecodes(t *testing.T) {
	for _, v := range wireValues() {
		raw, _ := json.Marshal(v)
		if v == nil {
			continue
		}
		typ := reflect.TypeOf(v)
		got, want := reflect.New(typ), reflect.New(typ)
		gerr, werr := decodeInto(raw, got), json.Unmarshal(raw, want.Interface())
		if (gerr != nil) != (werr != nil) || !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()) {
			t.Fatalf("decodeInto(%s) = %#v, %v; encoding/json %#v, %v", raw, got.Elem().Interface(), gerr, want.Elem().Interface(), werr)
		}
		if _, ok := v.(string); ok {
			var d, w string
			json.Unmarshal(raw, &w)
			if err := decodeValue(raw, &d); err != nil || d != w {
				t.Fatalf("decodeValue(%s) = %q, %v; encoding/json %q", raw, d, err, w)
			}
		}
	}
	var b bool
	if err := decodeValue([]byte("true"), &b); err != nil || !b {
		t.Fatal("decodeValue(true)")
	}
	var n int
	if err := decodeInto([]byte("1.5"), reflect.ValueOf(&n)); err == nil {
		t.Fatal("1.5 decoded into an int")
	}
}

// TestDispatchTyped: the handlers called without reflection answer as the reflective
// call does, errors, escapes and wrong arguments included.
func TestDispatchTyped(t *testing.T) {
	store := map[string]string{}
	handlers := []any{
		func(k, v string) error {
			if k == "bad" {
				return errors.New("no <bad> keys")
			}
			store[k] = v
			return nil
		},
		func(k string) (string, bool, error) {
			if k == "bad" {
				return "", false, errors.New("read failed")
			}
			v, ok := store[k]
			return v, ok, nil
		},
		func(k string) (string, bool) { v, ok := store[k]; return v, ok },
	}
	n := newN("db", t.TempDir(), newCaller())
	var typed int
	for _, h := range handlers {
		fn := reflect.ValueOf(h)
		for _, args := range [][]any{{"k0", "v1"}, {"k1", "v<2>"}, {"k0"}, {"k1"}, {"bad", "x"}, {"bad"}, {"k\"q", "a\nb"}, {"k\"q"}, {"nope"}, {1, 2}, {}} {
			line, _ := appendRequest(nil, "m", args)
			req, ok := parseRequest(line)
			if !ok {
				t.Fatalf("parseRequest(%q)", line)
			}
			got, ok := n.dispatchTyped(fn, req)
			want := n.dispatchReflect(fn, req)
			if ok {
				typed++
				if string(appendResponse(nil, got)) != string(appendResponse(nil, want)) {
					t.Fatalf("%T%v: typed %s, reflect %s", h, args, appendResponse(nil, got), appendResponse(nil, want))
				}
			}
		}
	}
	if typed < 10 {
		t.Fatalf("only %d calls took the typed path", typed)
	}
}
