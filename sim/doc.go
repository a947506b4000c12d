// Package sim is the guest side of seedfall: what a Go service imports so that it can
// run unmodified inside seedfall's simulated world and natively outside it.
//
// The one-line quickstart is to create listeners and dialers through sim:
//
//	ln, err := sim.Listen("tcp", ":7000")
//	conn, err := sim.Dial("tcp", "server:7000")
//
// Inside the simulator (a GOOS=wasip1 build run by seedfall), [Listen] and [Dial] ask
// the host for a socket of the simulated network, so node names such as "server"
// resolve, and latency, partitions and resets apply. The result is an ordinary
// [net.Listener] or [net.Conn] served by Go's own netpoller, so deadlines, bufio and
// net/http work as usual. Outside the simulator they are plain [net.Listen] and
// [net.Dial]; see [Dial] for how node names resolve there.
//
// Two limits follow from WASI preview 1, which has no getsockname: inside the simulator
// the addresses of listeners and connections read ":0", and an operation on a closed
// connection reports "use of closed file" rather than [net.ErrClosed]. Build the node
// with the net overlay (net_overlay in seedfall.json) if the service depends on either.
//
// # Properties
//
// [Always], [Sometimes], [Reachable] and [Unreachable] have the shape of the Antithesis
// Go SDK's assertions. seedfall counts them across a sweep of seeds: an Always that is
// false or an Unreachable that is reached fails the run; a Sometimes never true or a
// Reachable never reached shows the sweep did not exercise that path. Outside the
// simulator a failed Always or a reached Unreachable prints a line to standard error and
// the program goes on; the others do nothing.
//
// # Histories
//
// A workload can record the operations it performs with [Call] and [Op.Return]; when
// the config names a model (register or kv), seedfall checks the history for
// linearizability with Porcupine. Outside the simulator recording does nothing.
//
// # Lifecycle
//
// [SetupComplete] says the system is set up; with "faults": {"start_on":
// "setup_complete"} in the config, the generated faults start only then. [StopFaults]
// asks for a quiet period (Antithesis' ANTITHESIS_STOP_FAULTS) before the workload
// checks eventual properties; the config's liveness.quiet counts from the last fault
// that did happen. Outside the simulator both do nothing.
//
// # Directed faults
//
// [Crash], [Kill], [Restart], [Partition], [Heal] and [Pause] are faults the program
// asks for at a moment of its choosing (a regression test of one scenario); they replay
// exactly and shrink keeps them. Outside the simulator they return [ErrNotSimulated].
//
// # What it may use
//
// sim is linked into the guest, so it imports only the standard library, and it reaches
// the host only through the seedfall host module's imports (docs/ABI.md) and WASI.
package sim
