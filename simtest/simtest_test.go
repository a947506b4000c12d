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
