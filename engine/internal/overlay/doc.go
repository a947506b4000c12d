// Package overlay makes unmodified Go network code run on seedfall's
// simulated network.
//
// A node with "net_overlay": true is built with
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -overlay <Write(dir, goroot)> ...
//
// The overlay swaps files of $GOROOT/src/net (see Replaced and Added):
//
//   - net_fake.go: the standard library's in-process fake network, with
//     socket renamed to fakeSocket. It still serves UDP and unix sockets
//     (inside one guest only).
//   - seedfall_wasip1.go (added): socket sends every TCP stream socket to
//     the seedfall host module (docs/ABI.md): sock_listen, sock_dial,
//     sock_status, sock_addr. The host fd becomes a real netFD (newFD,
//     init registers it with the runtime poller, setAddr), so deadlines,
//     Close, errors.Is(err, net.ErrClosed) and addresses behave like real
//     TCP; reads, writes and accepts are the ordinary WASI fd_read,
//     fd_write and sock_accept, parked in poll_oneoff on EAGAIN. A dial
//     waits like connect(2) on unix: write readiness through the poller,
//     then sock_status.
//   - fd_fake.go: accept asks the host for the new connection's
//     addresses; netFD gets a seedfall flag.
//   - lookup_unix.go: name resolution without DNS. "localhost" is
//     loopback; every other name is a node name with the stable fake IPv4
//     NodeIP(name) in 10.0.0.0/8. The guest remembers the names it
//     resolved (and its own, SEEDFALL_NODE, and those in sock_addr
//     answers) and dials the host with "name:port"; an IP it cannot name
//     goes out as "a.b.c.d:port", which the host maps back with NodeIPs.
//   - sockopt_fake.go, tcpsockopt_stub.go: SetLinger reaches the host
//     (sock_linger: linger 0 makes Close reset the connection, as on
//     Linux); the other options (no delay, keep alive, buffers) succeed
//     with no effect on host sockets.
//   - interface_stub.go: net.Interfaces answers a loopback "lo" and an
//     "eth0" with the node's NodeIP.
//
// The replaced files are the building toolchain's own, changed at build time by the
// anchored edits of edits.go (engine/internal/srcedit): each edit's anchor, mostly a
// function's first line, must occur exactly once, or Write refuses the toolchain with an
// error naming the file, the edit and the Go version. Only seedfall_wasip1.go, seedfall's
// own code, is embedded whole (files/seedfall_wasip1.go.txt, so that the go tool does
// not compile it into this package). They are for GOOS=wasip1 only.
//
// The silent-ignore trap: go build ignores, without a word, overlay keys
// that name no file it reads. If the keys are computed from a GOROOT other
// than the building toolchain's `go env GOROOT` (a symlinked path, another
// installation, a stale cache), the build succeeds with the stock fake
// network: the program runs but its sockets never reach the simulation.
// Write refuses a GOROOT lacking the replaced files, and after every
// build VerifyImports checks the module's import section for the
// "seedfall" host module, which only the overlay's code imports.
//
// It owns the replacement files and the fake IPs; it may not build anything itself
// (internal/build runs go build with its overlay) or touch the GOROOT it reads.
package overlay
