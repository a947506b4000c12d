package simtest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// TestFaultsMirrorConfig: Faults has every field of the config's faults, with the same
// JSON name, and what it encodes is a config's faults that parses to the same values.
func TestFaultsMirrorConfig(t *testing.T) {
	cfgT, simT := reflect.TypeFor[engine.FaultConfig](), reflect.TypeFor[Faults]()
	names := func(rt reflect.Type) []string {
		var out []string
		for i := range rt.NumField() {
			out = append(out, rt.Field(i).Name+" "+rt.Field(i).Tag.Get("json"))
		}
		return out
	}
	if a, b := names(cfgT), names(simT); !reflect.DeepEqual(a, b) {
		t.Fatalf("simtest.Faults and engine.FaultConfig differ:\n config  %q\n simtest %q", a, b)
	}
	three := 3
	f := Faults{
		CrashPerSec: 1, CrashMidOp: &DiskFault{P: 0.7, Paths: []string{"/data/*"}}, TornWrites: true,
		FsyncEIO: DiskFault{P: 0.1}, RestartDelay: 300 * time.Millisecond, PartitionPerSec: 0.2,
		MaxFaults: &three, StartAfter: time.Second,
	}
	data, err := json.Marshal(map[string]any{"workload": map[string]string{"name": "w", "pkg": "./w"}, "faults": f})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.ParseConfig(data)
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	got := cfg.Faults
	if got.CrashPerSec != 1 || got.CrashMidOp == nil || got.CrashMidOp.P != 0.7 || got.CrashMidOp.Paths[0] != "/data/*" ||
		!got.TornWrites || got.FsyncEIO.P != 0.1 || time.Duration(got.RestartDelay) != 300*time.Millisecond ||
		got.PartitionPerSec != 0.2 || *got.MaxFaults != 3 || time.Duration(got.StartAfter) != time.Second {
		t.Fatalf("faults %s parsed as %+v", data, got)
	}
}

// TestScheduleFaultMirrorsPlan: every field of simtest.Fault is a field of a plan's
// fault (engine.Fault) with the same JSON name, and a schedule encodes into faults the
// engine reads back as given (durations as nanoseconds), in a config's "schedule".
func TestScheduleFaultMirrorsPlan(t *testing.T) {
	planT := reflect.TypeFor[engine.Fault]()
	plan := map[string]bool{}
	for i := range planT.NumField() {
		plan[planT.Field(i).Tag.Get("json")] = true
	}
	simT := reflect.TypeFor[Fault]()
	for i := range simT.NumField() {
		if tag := simT.Field(i).Tag.Get("json"); !plan[tag] {
			t.Errorf("simtest.Fault.%s has JSON name %q, which engine.Fault has not", simT.Field(i).Name, tag)
		}
	}
	sched := []Fault{
		{At: 427 * time.Millisecond, Kind: "crash", Node: "db", RestartAfter: 300 * time.Millisecond},
		{At: time.Second, Kind: "crash", Node: "db", DiskOp: 56, Incarnation: 2, Stream: 900 * time.Millisecond, CrashState: []int{1, 0, 2}},
		{At: 2 * time.Second, Kind: "partition", Node: "db", Peers: []string{"workload"}, Duration: time.Second, OneWay: true},
	}
	data, err := json.Marshal(map[string]any{"nodes": []map[string]string{{"name": "db", "pkg": "./db"}}, "workload": map[string]string{"name": "workload", "pkg": "./w"}, "schedule": sched})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.ParseConfig(data)
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	want := []engine.Fault{
		{AtNS: 427e6, Kind: "crash", Node: "db", RestartNS: 300e6},
		{AtNS: 1e9, Kind: "crash", Node: "db", DiskOp: 56, Incarnation: 2, StreamNS: 900e6, CrashState: []int{1, 0, 2}},
		{AtNS: 2e9, Kind: "partition", Node: "db", Peers: []string{"workload"}, DurationNS: 1e9, OneWay: true},
	}
	if !reflect.DeepEqual(cfg.Schedule, want) {
		t.Fatalf("schedule %s parsed as\n %+v\nwant\n %+v", data, cfg.Schedule, want)
	}
	// A schedule naming a node the config lacks is refused with the field.
	bad := strings.Replace(string(data), `"node":"db","restart`, `"node":"nope","restart`, 1)
	if _, err := engine.ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), `field schedule[0].node: "nope" is not a node of the config`) {
		t.Errorf("a schedule of an unknown node: %v", err)
	}
}

// TestDeclarationErrors: what only the declaration shows is refused.
func TestDeclarationErrors(t *testing.T) {
	serve := func(*N) {}
	work := func(*T) {}
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{Node("a", serve)}, "no workload"},
		{[]Option{Node("a", serve), Node("a", serve), Workload(work)}, `two nodes are named "a"`},
		{[]Option{Node("A", serve), Workload(work)}, `node name "A"`},
		{[]Option{Node("workload", serve), Workload(work)}, "is the workload's"},
		{[]Option{Workload(work), Workload(work)}, "Workload given twice"},
		{[]Option{Binary("b", Program{}), Workload(work)}, "Program.Pkg is empty"},
		{[]Option{Faults{}, Faults{}, Workload(work)}, "Faults given twice"},
	} {
		d := collect(tc.opts)
		if got := strings.Join(d.errs, "; "); !strings.Contains(got, tc.want) {
			t.Errorf("errors %q, want %q", got, tc.want)
		}
	}
	if d := collect([]Option{Node("a", serve), Binary("b", Program{Pkg: "./b"}), Workload(work)}); len(d.errs) != 0 {
		t.Errorf("a correct declaration: %q", d.errs)
	}
}

// TestCalls runs natively: typed handlers, a handler's error, unknown methods and wrong
// argument counts, and calls from one node to another.
func TestCalls(t *testing.T) {
	Run(t,
		Node("a", func(n *N) {
			n.Handle("add", func(x, y int) int { return x + y })
			n.Handle("div", func(x, y int) (int, error) {
				if y == 0 {
					return 0, errors.New("division by zero")
				}
				return x / y, nil
			})
			n.Handle("pair", func(s string) (string, bool) { return s + s, true })
		}),
		Node("b", func(n *N) {
			n.Handle("twice", func(x int) (int, error) {
				var s int
				err := n.Call("a", "add", x, x).Scan(&s)
				return s, err
			})
		}),
		Workload(func(t *T) {
			var s int
			if err := t.Call("a", "add", 2, 3).Scan(&s); err != nil || s != 5 {
				t.Fatalf("add: %d, %v", s, err)
			}
			var re *RemoteError
			if err := t.Call("a", "div", 1, 0).Err(); !errors.As(err, &re) || re.Msg != "division by zero" {
				t.Errorf("div by 0: %v", err)
			}
			var str string
			var ok bool
			if err := t.Call("a", "pair", "ab").Scan(&str, &ok); err != nil || str != "abab" || !ok {
				t.Errorf("pair: %q %v %v", str, ok, err)
			}
			if err := t.Call("a", "nope").Err(); err == nil || !strings.Contains(err.Error(), `no handler "nope" (it has add, div, pair)`) {
				t.Errorf("unknown method: %v", err)
			}
			if err := t.Call("a", "add", 1).Err(); err == nil || !strings.Contains(err.Error(), "takes 2 arguments, the call gave 1") {
				t.Errorf("argument count: %v", err)
			}
			if err := t.Call("b", "twice", 21).Scan(&s); err != nil || s != 42 {
				t.Errorf("node to node: %d, %v", s, err)
			}
			var ce *CallError
			if err := t.Call("c", "x").Err(); !errors.As(err, &ce) || ce.Sent {
				t.Errorf("call to no node: %v", err)
			}
			if t.Conns("a") != 1 {
				t.Errorf("%d connections to a, want 1 (one per node, reused)", t.Conns("a"))
			}
		}))
}
