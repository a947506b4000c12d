package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParsePlan: a fault plan file never panics the reader; errors name the file, and
// what it accepts saves and reads back the same.
//
//	go test ./internal/cli -run '^$' -fuzz FuzzParsePlan -fuzztime 1m
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{
		`{"seed": 40, "faults": [{"at_ns": 0, "kind": "crash", "node": "server", "disk_op": 9, "incarnation": 1, "restart_ns": 500000000}]}`,
		`{"faults": [{"at_ns": 1000000000, "kind": "partition", "node": "n1", "peers": ["n2"], "duration_ns": 3000000000, "one_way": true}]}`,
		`{"faults": [{"kind": "explode", "node": "x"}]}`,
		`{"faults": [{"kind": "crash", "node": "x", "at_ns": -1}]}`,
		`{"faults": [{"kind": "clock_skew", "node": "x", "skew_ppm": -50}]}`,
		`{"faults": null}`, `{}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlan("plan.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "plan.json: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("an accepted plan does not marshal: %v", err)
		}
		q, err := ParsePlan("again.json", out)
		if err != nil {
			t.Fatalf("a saved plan does not read back: %v\n%s", err, out)
		}
		again, _ := json.Marshal(q)
		if string(again) != string(out) {
			t.Fatalf("plan changed on a round trip:\n%s\n%s", out, again)
		}
	})
}
