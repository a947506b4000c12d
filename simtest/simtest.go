// Package simtest writes seedfall simulation tests as ordinary Go tests. A test
// function declares the nodes of the system (functions of the same test binary, or main
// packages of the module), the workload that drives and checks them, and the faults:
//
//	func TestAcknowledgedWritesSurvive(t *testing.T) {
//		simtest.Run(t,
//			simtest.Faults{CrashPerSec: 1, TornWrites: true},
//			simtest.Node("db", func(n *simtest.N) {
//				db, err := pogreb.Open(n.Dir("db"), nil) // recovery runs here after each crash
//				if err != nil {
//					n.Fatal(err)
//				}
//				n.Handle("put", func(k, v string) error { return db.Put([]byte(k), []byte(v)) })
//			}),
//			simtest.Workload(func(t *simtest.T) {
//				if err := t.Call("db", "put", "k", "v").Err(); err != nil { ... }
//			}))
//	}
//
// `seedfall test ./pkg` builds the package's test binary once for wasip1 and runs each
// simulation test for every seed: each node is a fresh instance of the binary that plays
// its role, crashed, restarted and partitioned by the simulator; the workload is one
// more instance. Calls between the workload and the nodes (Handle, Call) go over the
// simulated network as JSON lines on port 7070, so partitions, resets and crashes apply
// to them.
//
// Under plain go test, Run runs the same test once with no faults: every function node
// in a goroutine serving on localhost, the workload in the test's goroutine with its
// checks reporting through testing.T. That keeps the test an ordinary, passing test of
// the user's suite; it checks the handlers and the workload, not durability (nothing
// crashes). A node that is a main package (Binary) cannot run natively: such a test is
// skipped under go test.
package simtest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/internal/simdecl"
)

// An Option is one part of a simulation test's declaration: Faults, a Node, a Binary,
// the Workload, Horizon, StrictDirs, Linearizable or Patches.
type Option interface{ apply(*decl) }

type optionFunc func(*decl)

func (f optionFunc) apply(d *decl) { f(d) }

// decl is a test's declaration as Run collects it.
type decl struct {
	nodes    []nodeDecl
	workload func(*T)
	faults   json.RawMessage
	horizon  time.Duration
	strict   bool
	memMiB   int
	lin      string
	patches  []string
	errs     []string
	// schedule is a fixed scenario of faults (Schedule) in place of the random ones, as
	// the config's "schedule"; nativeSteps the same faults for the native run.
	schedule    json.RawMessage
	nativeSteps []Fault
}

type nodeDecl struct {
	name string
	fn   func(*N) // nil for a Binary
	bin  Program
}

func (d *decl) errorf(format string, args ...any) {
	d.errs = append(d.errs, fmt.Sprintf(format, args...))
}

// Node declares a node named name (lowercase letters, digits and dashes, starting with a
// letter) whose process runs fn. fn opens what the node serves (recovery runs here, after
// every crash), registers handlers with n.Handle and returns; the node then serves them
// until it crashes or the run ends.
func Node(name string, fn func(n *N)) Option {
	return optionFunc(func(d *decl) {
		if fn == nil {
			d.errorf("node %q: nil function", name)
		}
		d.nodes = append(d.nodes, nodeDecl{name: name, fn: fn})
	})
}

// Program is a node that is a main package of the user's module rather than a function
// of the test.
type Program struct {
	// Pkg is the package, relative to the test's package directory ("../server") or an
	// import path of the module.
	Pkg  string
	Args []string
	// Patches are unified diffs (relative to the test's package directory) applied to
	// the program's dependencies, as a config node's "patches".
	Patches []string
	// NetOverlay builds it with seedfall's net package (the config's "net_overlay").
	NetOverlay bool
}

// Binary declares a node named name that runs program p: for services that are
// binaries. Natively (go test) a test with a Binary node is skipped.
func Binary(name string, p Program) Option {
	return optionFunc(func(d *decl) {
		if p.Pkg == "" {
			d.errorf("binary node %q: Program.Pkg is empty", name)
		}
		d.nodes = append(d.nodes, nodeDecl{name: name, bin: p})
	})
}

// Workload declares the test's workload: it drives the nodes through t.Call and checks
// what they answer with t's Errorf and Fatalf. Its return ends the run; a run whose
// workload failed is a failing seed.
func Workload(fn func(t *T)) Option {
	return optionFunc(func(d *decl) {
		if d.workload != nil {
			d.errorf("simtest.Workload given twice")
		}
		if fn == nil {
			d.errorf("nil workload function")
		}
		d.workload = fn
	})
}

// Horizon is the virtual time at which a run stops (the config's "horizon", default
// 60s); a workload still running then is a liveness failure.
func Horizon(h time.Duration) Option { return optionFunc(func(d *decl) { d.horizon = h }) }

// MemoryLimit caps the memory of each node and of the workload at mib MiB (the config's
// "memory_limit_mib", default 512): for a store that maps large files.
func MemoryLimit(mib int) Option { return optionFunc(func(d *decl) { d.memMiB = mib }) }

// StrictDirs makes a create, rename, unlink or mkdir survive a crash only once its
// parent directory was fsynced (the config's "strict_dirs").
func StrictDirs() Option { return optionFunc(func(d *decl) { d.strict = true }) }

// Linearizable checks the history the workload records with sim.Call and sim.Return
// against a Porcupine model, "kv" or "register" (the config's "linearizability").
func Linearizable(model string) Option { return optionFunc(func(d *decl) { d.lin = model }) }

// Patches are unified diffs, relative to the test's package directory, applied to the
// dependencies of the test binary's instances (the config's "patches"): a fixed copy
// of a library is the same test with its fix. Natively they do not apply.
func Patches(files ...string) Option {
	return optionFunc(func(d *decl) { d.patches = append(d.patches, files...) })
}

// collect applies opts and checks what only the declaration can show.
func collect(opts []Option) *decl {
	d := &decl{}
	for _, o := range opts {
		if o == nil {
			d.errorf("nil option")
			continue
		}
		o.apply(d)
	}
	seen := map[string]bool{}
	for _, n := range d.nodes {
		switch {
		case !validName(n.name):
			d.errorf("node name %q: want lowercase letters, digits and dashes, starting with a letter", n.name)
		case n.name == "workload":
			d.errorf("node name %q is the workload's", n.name)
		case seen[n.name]:
			d.errorf("two nodes are named %q", n.name)
		}
		seen[n.name] = true
	}
	if d.workload == nil {
		d.errorf("no workload: declare one with simtest.Workload")
	}
	return d
}

func validName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// describe is the declaration as `seedfall test` reads it.
func (d *decl) describe(name string) simdecl.Test {
	td := simdecl.Test{
		Name: name, Workload: d.workload != nil, Faults: d.faults,
		HorizonNS: int64(d.horizon), StrictDirs: d.strict, MemoryLimitMiB: d.memMiB, Linearizability: d.lin,
		Patches: d.patches, Errors: d.errs, Schedule: d.schedule,
	}
	for _, n := range d.nodes {
		sn := simdecl.Node{Name: n.name}
		if n.fn == nil {
			sn.Pkg, sn.Args, sn.Patches, sn.NetOverlay = n.bin.Pkg, n.bin.Args, n.bin.Patches, n.bin.NetOverlay
		}
		td.Nodes = append(td.Nodes, sn)
	}
	return td
}

// Run runs the simulation test that opts declare. Under `seedfall test` each instance
// of the test binary plays one role of it; under go test it runs the test natively,
// once, without faults (see the package documentation).
func Run(t *testing.T, opts ...Option) {
	t.Helper()
	d := collect(opts)
	if s := scheduleOf(t); s != nil {
		d.useSchedule(s)
	}
	role, inSim := os.LookupEnv(simdecl.RoleEnv)
	if !inSim {
		runNative(t, d)
		return
	}
	switch {
	case role == simdecl.RoleDescribe:
		data, err := json.Marshal(d.describe(t.Name()))
		if err != nil {
			fmt.Printf("%s{\"name\":%q,\"errors\":[%q]}\n", simdecl.Marker, t.Name(), err.Error())
		} else {
			fmt.Printf("%s%s\n", simdecl.Marker, data)
		}
		t.SkipNow()
	case role == simdecl.RoleWorkload:
		runWorkload(d)
	case strings.HasPrefix(role, simdecl.RoleNodePrefix):
		runNode(d, strings.TrimPrefix(role, simdecl.RoleNodePrefix))
	default:
		fmt.Fprintf(os.Stderr, "simtest: %s=%q: not a role\n", simdecl.RoleEnv, role)
		os.Exit(2)
	}
}

// runWorkload plays the workload in the simulator: its exit is the run's verdict, and
// its last line the failure's reason.
func runWorkload(d *decl) {
	if len(d.errs) > 0 {
		fmt.Printf("simtest: %s\n", strings.Join(d.errs, "; "))
		os.Exit(2)
	}
	c := newCaller()
	c.from = "workload"
	// No map here: making one draws from the runtime's random stream, which the
	// workload's own math/rand shares, and would move every seed's draws.
	t := &T{caller: c}
	for _, n := range d.nodes {
		if n.fn == nil {
			t.binaries = append(t.binaries, n.name)
		}
	}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errFatal {
				panic(r)
			}
		}()
		d.workload(t)
	}()
	if t.failed {
		// The first failure is the reason: it must be the last line.
		if !t.firstLast {
			fmt.Println(t.first)
		}
		os.Exit(1)
	}
	os.Exit(0)
}

// runNode plays node name in the simulator: fn, then serve its handlers forever.
func runNode(d *decl, name string) {
	var nd *nodeDecl
	for i := range d.nodes {
		if d.nodes[i].name == name {
			nd = &d.nodes[i]
		}
	}
	if nd == nil || nd.fn == nil {
		fmt.Fprintf(os.Stderr, "simtest: this test declares no function node %q\n", name)
		os.Exit(2)
	}
	c := newCaller()
	c.from = name
	n := newN(name, "/data", c)
	ln, err := listen(simdecl.Port)
	if err != nil {
		fmt.Fprintf(os.Stderr, "simtest: node %s: listen: %v\n", name, err)
		os.Exit(1)
	}
	nd.fn(n)
	n.started()
	n.serve(ln) // returns only if the listener fails
	os.Exit(1)
}

// errFatal unwinds the workload's function after Fatal in the simulator.
var errFatal = new(int)
