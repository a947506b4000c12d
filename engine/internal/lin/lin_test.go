package lin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op builds a returned operation from JSON strings.
func op(client int, in, out string, call, ret int64) Op {
	return Op{Client: client, Input: json.RawMessage(in), Output: json.RawMessage(out), CallNS: call, ReturnNS: ret, Returned: true}
}

// lost builds an operation that never returned.
func lost(client int, in string, call int64) Op {
	return Op{Client: client, Input: json.RawMessage(in), CallNS: call}
}

const (
	writeX = `{"op":"write","value":"x"}`
	writeY = `{"op":"write","value":"y"}`
	read   = `{"op":"read"}`
	readX  = `{"value":"x"}`
	readY  = `{"value":"y"}`
	read0  = `{"value":""}`
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		model      string
		ops        []Op
		outcome    Outcome
		partitions int
		detail     string // substring of Report.Detail
	}{
		{
			name:       "empty history",
			model:      "register",
			outcome:    Ok,
			partitions: 0,
		},
		{
			name:  "register concurrent reads see old and new value",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				op(1, writeY, `{}`, 20, 40),
				op(2, read, readX, 25, 30), // concurrent with write y: may see x
				op(3, read, readY, 26, 50), // concurrent with write y: may see y
				op(2, read, readY, 45, 60), // after write y returned
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "register initial value is empty",
			model: "register",
			ops: []Op{
				op(0, read, `{}`, 0, 5), // a guest's omitempty drops "value":""
				op(0, writeX, `{}`, 10, 20),
				op(1, read, readX, 30, 40),
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "register stale read after completed write",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				op(0, writeY, `{}`, 20, 30),
				op(1, read, readX, 40, 50),
			},
			outcome:    Illegal,
			partitions: 1,
			detail:     "no linearization of its 3 operations (ops 0, 1, 2)",
		},
		{
			name:  "register closed intervals touching are concurrent",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				op(1, read, read0, 10, 20),
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "unknown write later observed",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				lost(1, writeY, 20),
				op(2, read, readY, 100, 110),
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "unknown write never observed",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				lost(1, writeY, 20),
				op(2, read, readX, 100, 110),
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "unknown write observed then unobserved",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				lost(1, writeY, 20),
				op(2, read, readY, 100, 110),
				op(2, read, readX, 120, 130), // no one wrote x again
			},
			outcome:    Illegal,
			partitions: 1,
		},
		{
			name:  "unknown read constrains nothing",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				{Client: 1, Input: json.RawMessage(read), Output: json.RawMessage(`{"value":"garbage"}`), CallNS: 20},
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "kv illegal on one key names it",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"put","key":"a","value":"1"}`, `{}`, 0, 10),
				op(1, `{"op":"put","key":"b","value":"1"}`, `{}`, 0, 10),
				op(2, `{"op":"put","key":"c","value":"1"}`, `{}`, 0, 10),
				op(0, `{"op":"get","key":"a"}`, `{"found":true,"value":"1"}`, 20, 30),
				op(1, `{"op":"put","key":"b","value":"2"}`, `{}`, 20, 30),
				op(1, `{"op":"get","key":"b"}`, `{"found":true,"value":"1"}`, 40, 50),
				op(2, `{"op":"get","key":"c"}`, `{"found":true,"value":"1"}`, 40, 50),
			},
			outcome:    Illegal,
			partitions: 3,
			detail:     `key "b": no linearization of its 3 operations (ops 1, 4, 5)`,
		},
		{
			name:  "kv two illegal keys names the first in key order",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"get","key":"z"}`, `{"found":true,"value":"ghost"}`, 0, 10),
				op(1, `{"op":"get","key":"m"}`, `{"found":true,"value":"ghost"}`, 0, 10),
				op(2, `{"op":"put","key":"a","value":"1"}`, `{}`, 0, 10),
			},
			outcome:    Illegal,
			partitions: 3,
			detail:     `key "m":`,
		},
		{
			name:  "kv missing key is not found",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"get","key":"k"}`, `{"found":false}`, 0, 10),
				op(0, `{"op":"get","key":"k"}`, `{}`, 20, 30),
				op(0, `{"op":"put","key":"k","value":""}`, `{}`, 40, 50),
				op(0, `{"op":"get","key":"k"}`, `{"found":true}`, 60, 70),
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "kv missing key read as found empty",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"get","key":"k"}`, `{"found":true,"value":""}`, 0, 10),
			},
			outcome:    Illegal,
			partitions: 1,
			detail:     `key "k"`,
		},
		{
			name:  "kv append creates and concatenates",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"append","key":"k","value":"a"}`, `{}`, 0, 10),
				op(1, `{"op":"get","key":"k"}`, `{"found":true,"value":"a"}`, 20, 30),
				op(0, `{"op":"append","key":"k","value":"b"}`, `{}`, 40, 50),
				op(1, `{"op":"append","key":"k","value":"c"}`, `{}`, 40, 50),
				op(2, `{"op":"get","key":"k"}`, `{"found":true,"value":"acb"}`, 60, 70),
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "kv append order contradicts completed appends",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"append","key":"k","value":"a"}`, `{}`, 0, 10),
				op(0, `{"op":"append","key":"k","value":"b"}`, `{}`, 20, 30),
				op(1, `{"op":"get","key":"k"}`, `{"found":true,"value":"ba"}`, 40, 50),
			},
			outcome:    Illegal,
			partitions: 1,
			detail:     `key "k"`,
		},
		{
			name:  "kv put replaces appended value",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"append","key":"k","value":"a"}`, `{}`, 0, 10),
				op(0, `{"op":"put","key":"k","value":"p"}`, `{}`, 20, 30),
				op(0, `{"op":"append","key":"k","value":"b"}`, `{}`, 40, 50),
				op(1, `{"op":"get","key":"k"}`, `{"found":true,"value":"pb"}`, 60, 70),
			},
			outcome:    Ok,
			partitions: 1,
		},
		{
			name:  "kv unknown append may or may not apply",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"put","key":"k","value":"a"}`, `{}`, 0, 10),
				lost(1, `{"op":"append","key":"k","value":"b"}`, 20),
				op(2, `{"op":"get","key":"k"}`, `{"found":true,"value":"a"}`, 30, 40),
				op(2, `{"op":"get","key":"k"}`, `{"found":true,"value":"ab"}`, 50, 60),
			},
			outcome:    Ok,
			partitions: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, _, err := Check(tc.model, tc.ops, 0)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if rep.Outcome != tc.outcome || rep.Model != tc.model || rep.Ops != len(tc.ops) || rep.Partitions != tc.partitions {
				t.Errorf("Check = %+v, want outcome %s, model %s, %d ops, %d partitions", rep, tc.outcome, tc.model, len(tc.ops), tc.partitions)
			}
			if !strings.Contains(rep.Detail, tc.detail) || (tc.outcome == Ok) != (rep.Detail == "") {
				t.Errorf("Detail = %q, want it to contain %q", rep.Detail, tc.detail)
			}
			// With a generous timeout the search is the same, and so is the report.
			again, _, err := Check(tc.model, tc.ops, time.Minute)
			if err != nil || again != rep {
				t.Errorf("Check with timeout = %+v, %v; want %+v", again, err, rep)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	good := op(0, writeX, `{}`, 0, 10)
	tests := []struct {
		name  string
		model string
		ops   []Op
		want  string
	}{
		{"unknown model", "queue", nil, `linearizability model "queue": not a model (want one of kv, register)`},
		{"input not JSON", "register", []Op{good, good, op(1, `{"op":`, `{}`, 0, 1)}, "history op 2 (client 1): input: invalid JSON"},
		{"input not an object", "register", []Op{op(0, `"read"`, `{}`, 0, 1)}, "history op 0 (client 0): input: got a JSON string, want an object"},
		{"input empty", "register", []Op{op(0, ``, `{}`, 0, 1)}, "history op 0 (client 0): input: empty"},
		{"input op missing", "register", []Op{op(0, `{"value":"x"}`, `{}`, 0, 1)}, "input.op: missing (register ops are read, write)"},
		{"input op unknown", "register", []Op{op(0, `{"op":"cas"}`, `{}`, 0, 1)}, `input.op: "cas" is not a register op (want one of read, write)`},
		{"input field misspelled", "register", []Op{op(0, `{"op":"write","vaule":"x"}`, `{}`, 0, 1)}, `input: invalid JSON: unknown field "vaule"`},
		{"input value wrong type", "register", []Op{good, op(0, `{"op":"write","value":7}`, `{}`, 0, 1)}, `history op 1 (client 0): input: field "value": got a JSON number, want`},
		{"write value missing", "register", []Op{op(0, `{"op":"write"}`, `{}`, 0, 1)}, "input.value: missing (write needs a value)"},
		{"kv key missing", "kv", []Op{op(3, `{"op":"get"}`, `{"found":false}`, 0, 1)}, "history op 0 (client 3): input.key: missing (get needs a key)"},
		{"kv op from register", "kv", []Op{op(0, read, read0, 0, 1)}, `input.op: "read" is not a kv op (want one of append, get, put)`},
		{"read output not JSON", "register", []Op{good, op(0, read, `{"value":`, 20, 30)}, "history op 1 (client 0): output: invalid JSON"},
		{"read output missing", "register", []Op{op(0, read, ``, 20, 30)}, "output: empty, but the read returned"},
		{"read output has found", "register", []Op{op(0, read, `{"found":true,"value":"x"}`, 20, 30)}, "output.found: the register model has no"},
		{"get found contradicts value", "kv", []Op{op(0, `{"op":"get","key":"k"}`, `{"value":"v"}`, 0, 1)}, `output.found: false (or absent), but output.value is "v"`},
		{"get found wrong type", "kv", []Op{op(0, `{"op":"get","key":"k"}`, `{"found":"yes"}`, 0, 1)}, `output: field "found": got a JSON string, want`},
		{"return before call", "register", []Op{op(0, writeX, `{}`, 10, 5)}, "returnNS: 5 is before callNS 10"},
		{"negative client", "register", []Op{op(-1, writeX, `{}`, 0, 5)}, "client: -1 is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Check(tc.model, tc.ops, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check error = %v, want it to contain %q", err, tc.want)
			}
			if err := Visualize(filepath.Join(t.TempDir(), "v.html"), tc.model, tc.ops, infoOf(t)); err == nil {
				t.Errorf("Visualize of a bad history: no error")
			}
		})
	}
}

// infoOf returns some LinearizationInfo, for calls that must fail before using it.
func infoOf(t *testing.T) (info porcupine.LinearizationInfo) {
	t.Helper()
	_, info, err := Check("register", []Op{op(0, writeX, `{}`, 0, 1)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestCheckUnknownOutputIgnored: the output of an operation that never returned is
// not even decoded, since the host may have recorded anything or nothing.
func TestCheckUnknownOutputIgnored(t *testing.T) {
	ops := []Op{{Client: 0, Input: json.RawMessage(read), Output: json.RawMessage(`not json`), CallNS: 0}}
	rep, _, err := Check("register", ops, 0)
	if err != nil || rep.Outcome != Ok {
		t.Fatalf("Check = %+v, %v; want ok", rep, err)
	}
}

// hardHistory is a register history Porcupine cannot decide quickly: n writes of
// distinct values, all concurrent, then a read of a value none wrote. Proving it
// illegal means trying every order of the writes.
func hardHistory(n int) []Op {
	var ops []Op
	for i := 0; i < n; i++ {
		ops = append(ops, op(i, fmt.Sprintf(`{"op":"write","value":"v%d"}`, i), `{}`, int64(i), int64(n+i)))
	}
	return append(ops, op(n, read, `{"value":"never written"}`, int64(3*n), int64(3*n+1)))
}

func TestCheckTimeout(t *testing.T) {
	rep, info, err := Check("register", hardHistory(40), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want := Report{Outcome: Unknown, Model: "register", Ops: 41, Partitions: 1,
		Detail: "checker gave up after the 20ms timeout; raise linearizability.timeout or record a shorter history", HostTimeout: true}
	if rep != want {
		t.Errorf("Check = %+v, want %+v", rep, want)
	}
	// A timed-out check still has partial linearizations to draw.
	if err := Visualize(filepath.Join(t.TempDir(), "v.html"), "register", hardHistory(40), info); err != nil {
		t.Errorf("Visualize: %v", err)
	}
	// The same shape, small enough to finish, is decided: the timeout is what made it
	// unknown.
	if rep, _, err := Check("register", hardHistory(6), 0); err != nil || rep.Outcome != Illegal {
		t.Errorf("Check of small hard history = %+v, %v; want illegal", rep, err)
	}
}

func TestVisualize(t *testing.T) {
	tests := []struct {
		name  string
		model string
		ops   []Op
		want  []string // substrings of the HTML, as Porcupine embeds them in JSON
	}{
		{
			name:  "register illegal",
			model: "register",
			ops: []Op{
				op(0, writeX, `{}`, 0, 10),
				op(0, writeY, `{}`, 20, 30),
				op(1, read, readX, 40, 50),
				lost(2, `{"op":"write","value":"z"}`, 45),
			},
			want: []string{`write(\"x\")`, `write(\"y\")`, `read() -\u003e \"x\"`, `write(\"z\") -\u003e ? (never returned)`, `"op 2"`, `"OriginalEnd":"9223372036854775807"`, `"OriginalStart":"40"`},
		},
		{
			name:  "kv ok",
			model: "kv",
			ops: []Op{
				op(0, `{"op":"put","key":"k","value":"v"}`, `{}`, 0, 10),
				op(1, `{"op":"get","key":"k"}`, `{"found":true,"value":"v"}`, 20, 30),
				op(1, `{"op":"get","key":"other"}`, `{"found":false}`, 20, 30),
				op(0, `{"op":"append","key":"k","value":"w"}`, `{}`, 40, 50),
			},
			want: []string{`put(\"k\", \"v\")`, `get(\"k\") -\u003e \"v\"`, `get(\"other\") -\u003e not found`, `append(\"k\", \"w\")`, `\"vw\"`, `"op 3"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, info, err := Check(tc.model, tc.ops, 0)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "history.html")
			if err := Visualize(path, tc.model, tc.ops, info); err != nil {
				t.Fatalf("Visualize: %v", err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			html := string(b)
			if !strings.Contains(html, "<html") {
				t.Errorf("%s is not an HTML page", path)
			}
			for _, w := range tc.want {
				if !strings.Contains(html, w) {
					t.Errorf("%s lacks %s", path, w)
				}
			}
		})
	}
	if err := Visualize(filepath.Join(t.TempDir(), "missing", "v.html"), "register", nil, porcupine.LinearizationInfo{}); err == nil {
		t.Errorf("Visualize into a missing directory: no error")
	}
}

func TestModels(t *testing.T) {
	if got := strings.Join(Models(), ","); got != "kv,register" {
		t.Errorf("Models() = %s, want kv,register", got)
	}
}

// kvHard is a kv history of two keys: "hard" gets hardHistory's shape (n concurrent
// puts, then a get of a value none put), "easy" a plain stale read.
func kvHard(n int) []Op {
	var ops []Op
	for i := 0; i < n; i++ {
		ops = append(ops, op(i, fmt.Sprintf(`{"op":"put","key":"hard","value":"v%d"}`, i), `{}`, int64(i), int64(n+i)))
	}
	ops = append(ops, op(n, `{"op":"get","key":"hard"}`, `{"found":true,"value":"never"}`, int64(3*n), int64(3*n+1)))
	ops = append(ops,
		op(n+1, `{"op":"put","key":"easy","value":"a"}`, `{}`, 1000, 1001),
		op(n+1, `{"op":"get","key":"easy"}`, `{"found":false}`, 1002, 1003))
	return ops
}

// TestCheckStepBudget: the step budget is deterministic. A hard history that needs more
// steps than the budget is Unknown, every time and on any host, with HostTimeout unset;
// with no budget it is decided; an illegal partition within budget is named even when
// another partition runs out.
func TestCheckStepBudget(t *testing.T) {
	want := Report{Outcome: Unknown, Model: "register", Ops: 13, Partitions: 1,
		Detail: "checker gave up after 100 steps of the search; raise linearizability.steps or record a shorter history"}
	for i := 0; i < 3; i++ {
		rep, _, err := CheckBudget("register", hardHistory(12), Budget{Steps: 100})
		if err != nil || rep != want {
			t.Fatalf("CheckBudget with 100 steps = %+v, %v; want %+v", rep, err, want)
		}
	}
	if rep, _, err := CheckBudget("register", hardHistory(12), Budget{Steps: 1 << 40}); err != nil || rep.Outcome != Illegal {
		t.Errorf("CheckBudget with a big budget = %+v, %v; want illegal", rep, err)
	}
	if rep, _, err := CheckBudget("register", hardHistory(3), Budget{Steps: 1000}); err != nil || rep.Outcome != Illegal {
		t.Errorf("small history within budget = %+v, %v; want illegal", rep, err)
	}
	rep, info, err := CheckBudget("kv", kvHard(12), Budget{Steps: 100})
	if err != nil || rep.Outcome != Illegal || !strings.HasPrefix(rep.Detail, `key "easy"`) {
		t.Errorf("kv with a hard key out of budget and an illegal easy key = %+v, %v; want the easy key illegal", rep, err)
	}
	if err := Visualize(filepath.Join(t.TempDir(), "v.html"), "kv", kvHard(12), info); err != nil {
		t.Errorf("Visualize: %v", err)
	}
}
