// Package engine runs a system under test, compiled to GOOS=wasip1, in a deterministic
// simulated world: it owns virtual time, randomness, scheduling, the disks and the
// network, so a seed replays exactly.
//
// The public API is what embedding seedfall needs: a Config (ParseConfig, LoadConfig);
// Prepare builds and compiles it into a Sim; Sim.Run runs one seed with RunOptions and
// returns a Result (its Verdict, Failure, Signature and trace hash); Sim.Sweep runs
// many in this process; Shrink, Cause and the -check divergence debug one; fault plans
// (FaultPlan, Fault) replay exactly. The coverage of the system under test is the
// engine/coverage package. Worker processes (internal/worker), seed lists
// (internal/seedspec) and the cache directory (internal/cachedir) belong to the
// commands, not to this API; so does what only the commands use of the engine
// (internal/engineapi: plan generation for the explorer, the built modules, provenance
// helpers). api_test.go keeps the API at 60 funcs, types and methods or fewer.
//
// The package is the core, the world, split by concern:
//
//	world.go       the world, node and incarnation types; newWorld
//	sched.go       the event queue, the run loop, the token passed between incarnations
//	               (park, yieldNow, advance), the re-randomized future of cause
//	watchdog.go    the monitor of a guest that never yields (wall-clock and CPU time,
//	               cputime_*.go)
//	lifecycle.go   an incarnation's life: start, the goroutine that runs the guest,
//	               exit, kill, shutdown
//	failstop.go    fail-stop nodes: restart after their own exit, the restart budget
//	liveness.go    a workload that never finishes: the quiet period, the horizon
//	trace.go       the trace, its hash, the first failure, the Result
//	host.go        the incarnation's side of the WASI host's contract (wasi.Proc) and of
//	               the network's (netsim.Owner); the guest's output
//	diskop.go      disk-op numbering and the faults aimed at disk ops (crash mid-op,
//	               fsync EIO), the rest of wasi.Proc
//	faultkind.go   every fault kind's entry: how it is armed and applied, its text, its
//	               checks, how long it lasts, how shrink simplifies it, its class, its knob
//	swarm.go       swarm testing: each seed's draw of which kinds are on, at what rates
//	plan.go, fault.go, diskfault.go, mutation.go   fault plans, faults, mutations
//	config.go      the config file
//	coverage.go    collecting the coverage of the system under test (engine/coverage
//	               holds the type, its sums, files and report)
//	run.go         Prepare, Sim, Run
//	image.go, image_sim.go, memimage_*.go   guests instantiated from a copy-on-write
//	               memory image of their data segments
//	profile.go, profile_pprof.go   replay -profile: a CPU profile of guests and host
//	hooks.go       what seedfall's own commands need and an embedder does not
//	               (internal/engineapi): plan generation and renumbering, build output
//	sweep.go       property verdicts over a sweep
//	debug_shrink.go, debug_cause.go, debug_diverge.go
//	               debugging, built on Run: Shrink drops and simplifies faults while the
//	               failure's Signature stays; Cause re-randomizes the future from a
//	               series of moments to find when the failure became certain; -check runs
//	               a seed twice and reports the first Divergence of the traces
//	antithesis.go, panic.go, provenance.go, signature.go, result.go, memory_*.go
//
// The layers below it are internal packages that know nothing of the engine:
//
//	internal/wasi     the host functions of wasi_snapshot_preview1 and seedfall; it
//	                  reaches the world only through wasi.Proc
//	internal/netsim   the network: sockets, links, partitions; it reaches the world only
//	                  through netsim.World and netsim.Owner
//	internal/disk     the file system with a page cache, fsync and crash semantics
//	internal/build    go build for wasip1, the net overlay, patches, module-cache copies
//	internal/overlay  seedfall's replacement of the net package, for net_overlay
//	internal/goloc    guest source locations from the wasm's pclntab
//	internal/lin      the linearizability checker
//	internal/cover    coverage: the guest-side hook file, Go's coverage file formats
//
// The engine may not be imported by those packages, and nothing in it may read the
// host clock, draw from a global random source, or iterate a map unsorted where that
// would shape a run, a trace or a report (the wall clock serves only the watchdog,
// timings and the deliberate test_host_clock hole).
package engine
