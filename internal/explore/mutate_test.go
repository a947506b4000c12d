package explore

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

func testRand(i int) *rand.Rand { return rand.New(rand.NewPCG(uint64(i), 7)) }

// parent is a corpus entry of two lives of "server": a crash pinned to disk op 10 of
// incarnation 1 (it restarts), a partition, an idle crash, and a crash pinned to disk op
// 5 of incarnation 3.
func parent() *Entry {
	return &Entry{
		Seed:  42,
		EndNS: 10e9,
		Faults: []engine.Fault{
			{AtNS: 1e9, Kind: engine.FaultCrash, Node: "server", DiskOp: 10, Incarnation: 1, RestartNS: 3e8, Where: "write /data/kv.log"},
			{AtNS: 2e9, Kind: engine.FaultPartition, Node: "server", Peers: []string{"client"}, DurationNS: 5e8},
			{AtNS: 3e9, Kind: engine.FaultCrash, Node: "server", RestartNS: 3e8},
			{AtNS: 4e9, Kind: engine.FaultCrash, Node: "server", DiskOp: 5, Incarnation: 3, RestartNS: 3e8},
		},
		Ops: []DiskOp{
			{AtNS: 1e8, Node: "server", Incarnation: 1, N: 1, Class: "mkdir /data a.go:1"},
			{AtNS: 2e8, Node: "server", Incarnation: 1, N: 2, Class: "write /data/kv.log a.go:2"},
			{AtNS: 3e8, Node: "server", Incarnation: 1, N: 3, Class: "write /data/kv.log a.go:2"},
			{AtNS: 1.5e9, Node: "server", Incarnation: 2, N: 1, Class: "write /data/kv.log a.go:2"},
			{AtNS: 1.6e9, Node: "server", Incarnation: 2, N: 2, Class: "fsync /data/kv.log a.go:3"},
		},
	}
}

func TestCrashNeighbour(t *testing.T) {
	seen := map[int64]bool{}
	for i := range 200 {
		p := parent()
		seed, fs, ok := crashNeighbour(testRand(i), p, &Env{})
		if !ok || seed != p.Seed || len(fs) != len(p.Faults) {
			t.Fatalf("draw %d: ok=%v seed=%d faults %d", i, ok, seed, len(fs))
		}
		var moved *engine.Fault
		for j := range fs {
			if fs[j].DiskOp != p.Faults[j].DiskOp {
				if moved != nil {
					t.Fatalf("draw %d: more than one crash moved: %v", i, fs)
				}
				moved = &fs[j]
			}
		}
		if moved == nil {
			t.Fatalf("draw %d: no crash moved: %v", i, fs)
		}
		orig := map[int]int64{1: 10, 3: 5}[moved.Incarnation]
		if d := moved.DiskOp - orig; d == 0 || d < -3 || d > 3 || moved.Where != "" {
			t.Fatalf("draw %d: crash moved from op %d to %d (where %q), want a neighbour within 3", i, orig, moved.DiskOp, moved.Where)
		}
		seen[moved.DiskOp-orig] = true
		if !reflect.DeepEqual(p.Faults, parent().Faults) {
			t.Fatalf("the parent's plan was changed")
		}
	}
	if !seen[-1] || !seen[1] {
		t.Errorf("moves seen %v: want both directions", seen)
	}
	if _, _, ok := crashNeighbour(testRand(0), &Entry{Faults: []engine.Fault{{Kind: engine.FaultCrash, Node: "n"}}}, &Env{}); ok {
		t.Errorf("applied to a plan without a crash pinned to a disk op")
	}
}

func TestCrashAtOpPrefersUnbrokenPaths(t *testing.T) {
	// Writes were already interrupted; mkdir never was. It is one op of five: drawn
	// uniformly it would come up a fifth of the time.
	env := &Env{Seen: func(f string) bool {
		return f == "crash during write /data/kv.log a.go:2" || f == "crash during fsync /data/kv.log a.go:3"
	}}
	mkdir := 0
	const n = 400
	for i := range n {
		p := parent()
		_, fs, ok := crashAtOp(testRand(i), p, env)
		if !ok {
			t.Fatal("not applied")
		}
		var added *engine.Fault
		for j, f := range fs {
			if f.Kind == engine.FaultCrash && f.DiskOp > 0 && f.Where == "" && f.DiskOp != 10 && !(f.DiskOp == 5 && f.AtNS == 4e9) {
				added = &fs[j]
			}
		}
		if added == nil {
			t.Fatalf("draw %d: no crash added: %+v", i, fs)
		}
		var op *DiskOp
		for k := range p.Ops {
			o := &p.Ops[k]
			if o.AtNS == added.AtNS && o.N == added.DiskOp {
				op = o
			}
		}
		if op == nil || added.Node != "server" || added.RestartNS <= 0 {
			t.Fatalf("draw %d: added crash %+v is not pinned to one of the run's ops", i, added)
		}
		if op.N == 1 && op.Incarnation == 1 {
			mkdir++
		}
		if !sorted(fs) {
			t.Fatalf("draw %d: plan out of time order: %+v", i, fs)
		}
		// A crash of incarnation 1 that restarts shifts the later lives: the crash
		// pinned to op 5 of incarnation 3 becomes one of incarnation 4, and the parent's
		// crash on op 10 of incarnation 1 (after the new crash) cannot fire and is gone.
		if op.Incarnation == 1 {
			for _, f := range fs {
				if f.DiskOp == 10 && f.Incarnation == 1 {
					t.Fatalf("draw %d: a crash on a later op of the crashed incarnation kept: %+v", i, fs)
				}
			}
			if last := fs[len(fs)-1]; last.DiskOp != 5 || last.Incarnation != 3 {
				// one restarting crash dropped (op 10), one added: still incarnation 3
				t.Fatalf("draw %d: later pinned crash renumbered to %+v, want incarnation 3", i, last)
			}
		}
	}
	if mkdir < n/2 {
		t.Errorf("the unbroken mkdir op was picked %d of %d times; want most", mkdir, n)
	}
	if _, _, ok := crashAtOp(testRand(0), &Entry{}, env); ok {
		t.Errorf("applied to a run without disk ops")
	}
}

func TestCrashRestarted(t *testing.T) {
	for i := range 100 {
		p := parent()
		_, fs, ok := crashRestarted(testRand(i), p, &Env{})
		if !ok || len(fs) != len(p.Faults)+1 {
			t.Fatalf("draw %d: ok=%v, %d faults", i, ok, len(fs))
		}
		found := false
		for _, f := range fs {
			if f.AtNS == 1.5e9 || f.AtNS == 1.6e9 {
				found = f.Incarnation == 2 && f.DiskOp > 0
			}
		}
		if !found {
			t.Fatalf("draw %d: no crash on an op of incarnation 2: %+v", i, fs)
		}
	}
	p := parent()
	p.Ops = p.Ops[:3] // only the first life
	if _, _, ok := crashRestarted(testRand(0), p, &Env{}); ok {
		t.Errorf("applied to a run whose node never restarted")
	}
}

func TestAddFault(t *testing.T) {
	var from int64 = -1
	gen := func(seed uint64, f int64) []engine.Fault {
		from = f
		return []engine.Fault{{AtNS: f + 7, Kind: engine.FaultPause, Node: "server", DurationNS: 1e6}}
	}
	p := parent()
	_, fs, ok := addFault(testRand(1), p, &Env{Generate: gen})
	if !ok || len(fs) != len(p.Faults)+1 {
		t.Fatalf("ok=%v, %d faults", ok, len(fs))
	}
	if from < 0 || from >= p.EndNS {
		t.Fatalf("drew faults from %d, want a time of the run", from)
	}
	if i := slices.IndexFunc(fs, func(f engine.Fault) bool { return f.Kind == engine.FaultPause }); i < 0 || fs[i].AtNS != from+7 || !sorted(fs) {
		t.Fatalf("generated fault not inserted in time order: %+v", fs)
	}
	if _, _, ok := addFault(testRand(1), p, &Env{Generate: func(uint64, int64) []engine.Fault { return nil }}); ok {
		t.Errorf("applied with no fault to add")
	}
}

func TestDropFault(t *testing.T) {
	dropped := map[int64]bool{}
	for i := range 100 {
		p := parent()
		_, fs, ok := dropFault(testRand(i), p, &Env{})
		if !ok || len(fs) != len(p.Faults)-1 {
			t.Fatalf("draw %d: ok=%v, %d faults", i, ok, len(fs))
		}
		for _, f := range p.Faults {
			if !slices.ContainsFunc(fs, func(g engine.Fault) bool { return g.AtNS == f.AtNS }) {
				dropped[f.AtNS] = true
				if f.AtNS != 4e9 && f.Kind == engine.FaultCrash {
					// A restarting crash is gone: the crash pinned to incarnation 3 is now
					// one of incarnation 2.
					if last := fs[len(fs)-1]; last.Incarnation != 2 {
						t.Fatalf("draw %d: after dropping %+v the last crash is %+v, want incarnation 2", i, f, last)
					}
				}
			}
		}
	}
	if len(dropped) != 4 {
		t.Errorf("dropped %v, want each of the 4 faults at some draw", dropped)
	}
	if _, _, ok := dropFault(testRand(0), &Entry{}, &Env{}); ok {
		t.Errorf("applied to an empty plan")
	}
}

func TestShiftFault(t *testing.T) {
	for i := range 100 {
		p := parent()
		_, fs, ok := shiftFault(testRand(i), p, &Env{})
		if !ok || len(fs) != len(p.Faults) || !sorted(fs) {
			t.Fatalf("draw %d: ok=%v %+v", i, ok, fs)
		}
		changed := 0
		for _, f := range fs {
			// (Moving a restarting crash past a pinned one renumbers the latter's
			// incarnation: that is not a second change.)
			if !slices.ContainsFunc(p.Faults, func(g engine.Fault) bool { g.Incarnation = f.Incarnation; return reflect.DeepEqual(f, g) }) {
				changed++
				if f.DiskOp != 0 {
					t.Fatalf("draw %d: a shifted crash stays pinned to op %d", i, f.DiskOp)
				}
				idleMoved := !slices.ContainsFunc(fs, func(g engine.Fault) bool { return reflect.DeepEqual(g, p.Faults[2]) })
				if f.Kind == engine.FaultCrash && !idleMoved && !f.MidOp {
					t.Fatalf("draw %d: a crash that was pinned to a disk op became idle: %+v", i, f)
				}
			}
		}
		if changed > 1 {
			t.Fatalf("draw %d: %d faults changed, want at most one", i, changed)
		}
	}
	if _, _, ok := shiftFault(testRand(0), &Entry{}, &Env{}); ok {
		t.Errorf("applied to an empty plan")
	}
}

func TestReshapePartition(t *testing.T) {
	kinds := map[string]bool{}
	for i := range 100 {
		p := parent()
		_, fs, ok := reshapePartition(testRand(i), p, &Env{})
		if !ok || len(fs) != len(p.Faults) {
			t.Fatalf("draw %d: ok=%v", i, ok)
		}
		var q engine.Fault
		for _, f := range fs {
			if f.Kind == engine.FaultPartition {
				q = f
			}
		}
		orig := p.Faults[1]
		switch {
		case q.DurationNS > orig.DurationNS && q.AtNS == orig.AtNS:
			kinds["widen"] = true
		case q.DurationNS < orig.DurationNS && q.AtNS == orig.AtNS:
			kinds["narrow"] = true
		case q.AtNS != orig.AtNS && q.DurationNS == orig.DurationNS:
			kinds["move"] = true
		case q.OneWay != orig.OneWay:
			kinds["one-way"] = true
		default:
			t.Fatalf("draw %d: partition %+v unchanged from %+v", i, q, orig)
		}
		q.Peers[0] = "changed"
		if p.Faults[1].Peers[0] != "client" {
			t.Fatalf("the mutant shares its peers with the parent")
		}
	}
	if len(kinds) != 4 {
		t.Errorf("reshapes seen %v, want widen, narrow, move and one-way", kinds)
	}
	if _, _, ok := reshapePartition(testRand(0), &Entry{Faults: []engine.Fault{{Kind: engine.FaultCrash}}}, &Env{}); ok {
		t.Errorf("applied to a plan without a partition")
	}
}

func TestNewFuture(t *testing.T) {
	for i := range 100 {
		p := parent()
		var from int64 = -1
		gen := func(seed uint64, f int64) []engine.Fault {
			from = f
			return []engine.Fault{{AtNS: f + 1, Kind: engine.FaultReset, Node: "client"}, {AtNS: f + 2, Kind: engine.FaultReset, Node: "server"}}
		}
		_, fs, ok := newFuture(testRand(i), p, &Env{Generate: gen})
		if !ok || from < 0 {
			t.Fatalf("draw %d: ok=%v from=%d", i, ok, from)
		}
		var kept []engine.Fault
		for _, f := range p.Faults {
			if f.AtNS <= from {
				kept = append(kept, f)
			}
		}
		if len(fs) != len(kept)+2 || fs[len(fs)-2].AtNS != from+1 || fs[len(fs)-1].AtNS != from+2 {
			t.Fatalf("draw %d: cut at %d: got %+v, want the %d faults up to it and the 2 drawn after it", i, from, fs, len(kept))
		}
	}
	if _, _, ok := newFuture(testRand(0), parent(), &Env{}); ok {
		t.Errorf("applied without a fault generator")
	}
}

func TestReseed(t *testing.T) {
	p := parent()
	seed, fs, ok := reseed(testRand(3), p, &Env{})
	if !ok || seed == p.Seed || seed == 0 || !reflect.DeepEqual(fs, p.Faults) {
		t.Fatalf("reseed: ok=%v seed %d (parent %d), same plan %v", ok, seed, p.Seed, reflect.DeepEqual(fs, p.Faults))
	}
}

func sorted(fs []engine.Fault) bool {
	return slices.IsSortedFunc(fs, func(a, b engine.Fault) int { return int(a.AtNS - b.AtNS) })
}

// TestDeviceAtOp: the operator pins a device fault of a kind the config turns on to one
// of the run's writes, at a path the knob is aimed at, and joins the operators only when
// the config has such a kind (so other explorations draw as before).
func TestDeviceAtOp(t *testing.T) {
	cfg, err := engine.ParseConfig([]byte(`{"nodes":[{"name":"server","pkg":"./s"}],"workload":{"name":"c","pkg":"./c"},
		"faults":{"lost_write":{"p":0.1,"paths":["/data/kv.log"]},"write_eio":0.02}}`))
	if err != nil {
		t.Fatal(err)
	}
	kinds, aims := DeviceKinds(cfg)
	if !slices.Equal(kinds, []engine.FaultKind{engine.FaultLostWrite, engine.FaultWriteEIO}) {
		t.Fatalf("kinds %v, want lost_write and write_eio", kinds)
	}
	if !aims(engine.FaultLostWrite, "/data/kv.log") || aims(engine.FaultLostWrite, "/data/other") || !aims(engine.FaultWriteEIO, "/data/other") {
		t.Fatal("aims does not follow the knobs' paths")
	}
	env := &Env{DeviceKinds: kinds, DeviceAims: aims}
	got := map[engine.FaultKind]bool{}
	for i := range 100 {
		p := parent()
		seed, fs, ok := deviceAtOp(testRand(i), p, env)
		if !ok || seed != p.Seed || len(fs) != len(p.Faults)+1 {
			t.Fatalf("run %d: ok %v, seed %d, %d faults", i, ok, seed, len(fs))
		}
		var dev []engine.Fault
		for _, f := range fs {
			if f.Kind != engine.FaultCrash && f.Kind != engine.FaultPartition {
				dev = append(dev, f)
			}
		}
		if len(dev) != 1 {
			t.Fatalf("run %d: %d device faults, want 1: %+v", i, len(dev), fs)
		}
		f := dev[0]
		got[f.Kind] = true
		var op *DiskOp
		for j := range p.Ops {
			if o := &p.Ops[j]; o.Incarnation == f.Incarnation && o.N == f.DiskOp && o.Node == f.Node {
				op = o
			}
		}
		if op == nil || op.Class != "write /data/kv.log a.go:2" {
			t.Fatalf("run %d: %s pinned to op %d of life %d, which is not one of the run's writes (%v)", i, f.Kind, f.DiskOp, f.Incarnation, op)
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("run %d: %+v: %v", i, f, err)
		}
	}
	if !got[engine.FaultLostWrite] || !got[engine.FaultWriteEIO] {
		t.Fatalf("kinds drawn %v, want both", got)
	}
	if _, _, ok := deviceAtOp(testRand(0), parent(), &Env{}); ok {
		t.Fatal("applied with no device kind")
	}
	// Aimed only at a path the run never writes: nothing to pin.
	if _, _, ok := deviceAtOp(testRand(0), parent(), &Env{DeviceKinds: []engine.FaultKind{engine.FaultLostWrite}, DeviceAims: func(engine.FaultKind, string) bool { return false }}); ok {
		t.Fatal("applied to a write the knob is not aimed at")
	}
	names := func(ops []Op) (out []string) {
		for _, o := range ops {
			out = append(out, o.Name)
		}
		return out
	}
	if n := names((&Env{}).ops()); slices.Contains(n, "device-at-op") || !slices.Equal(n, names(Ops)) {
		t.Fatalf("operators without device kinds: %v", n)
	}
	if n := names(env.ops()); !slices.Contains(n, "device-at-op") {
		t.Fatalf("operators with device kinds: %v", n)
	}
}
