package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaultRestartAfterJSON: a crash's restart delay is written as restart_after_ns (a
// delay, not a time), plans saved with its old name restart_ns still load, and the two
// names disagreeing is an error.
func TestFaultRestartAfterJSON(t *testing.T) {
	data, err := json.Marshal(Fault{AtNS: 5, Kind: FaultCrash, Node: "server", RestartNS: 500})
	if err != nil || !strings.Contains(string(data), `"restart_after_ns":500`) || strings.Contains(string(data), `"restart_ns"`) {
		t.Fatalf("marshal: %s, %v", data, err)
	}
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{`{"at_ns":5,"kind":"crash","node":"server","restart_after_ns":500}`, 500, false},
		{`{"at_ns":5,"kind":"crash","node":"server","restart_ns":700}`, 700, false},
		{`{"at_ns":5,"kind":"crash","node":"server","restart_ns":700,"restart_after_ns":700}`, 700, false},
		{`{"at_ns":5,"kind":"crash","node":"server","restart_ns":700,"restart_after_ns":500}`, 0, true},
		{`{"at_ns":5,"kind":"crash","node":"server"}`, 0, false},
	} {
		var f Fault
		err := json.Unmarshal([]byte(tc.in), &f)
		if (err != nil) != tc.bad || (!tc.bad && f.RestartNS != tc.want) || (!tc.bad && f.Node != "server") {
			t.Errorf("%s: %+v, %v; want restart %d, error %v", tc.in, f, err, tc.want, tc.bad)
		}
	}
	// The committed kvlog plan, saved under the old name, keeps its restarts.
	raw, err := os.ReadFile(filepath.Join("..", "examples", "kvlog", "seed-2.faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p FaultPlan
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	restarts := 0
	for _, f := range p.Faults {
		if f.RestartNS > 0 {
			restarts++
		}
	}
	if strings.Contains(string(raw), `"restart_ns"`) && restarts == 0 {
		t.Errorf("the committed plan's restart_ns were lost: %+v", p.Faults)
	}
}
