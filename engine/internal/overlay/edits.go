package overlay

import (
	"strings"

	"github.com/seedfall/seedfall/engine/internal/srcedit"
)

// The edits that turn the toolchain's own package net files into seedfall's (see the
// package comment). Each anchors on a declaration of the original file, mostly a
// function's first line, and inserts a "seedfall:"-marked branch into its body, so that
// what the standard library does for anything else (UDP, unix sockets, a netFD of the
// in-process fake network) stays the toolchain's own code.

// insertAfter is an edit that inserts text right after anchor.
func insertAfter(what, anchor, text string) srcedit.Edit {
	return srcedit.Replace(what, anchor, anchor+text)
}

// lines joins lines, each ending in a newline.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// acceptedOnly is the branch a socket option that has no effect on a seedfall socket
// starts with.
const acceptedOnly = "\tif fd.isSeedfall() {\n" +
	"\t\treturn nil // seedfall: accepted, no effect in the simulated network\n" +
	"\t}\n"

// noDNS is the branch a DNS-only lookup starts with.
func noDNS(ret string) string {
	return "\t// seedfall: there is no DNS in the simulated network.\n" +
		"\tif seedfallNoDNS {\n" +
		"\t\treturn " + ret + "newDNSError(errNoSuchHost, name, \"\")\n" +
		"\t}\n"
}

var netFiles = []srcedit.File{{
	Path: "src/net/fd_fake.go",
	Edits: []srcedit.Edit{
		insertAfter("netFD: a flag for seedfall host sockets",
			lines("\tladdr       Addr", "\traddr       Addr", ""),
			lines(
				"\t// seedfall is set on TCP sockets created through the seedfall host",
				"\t// module (see seedfall_wasip1.go).",
				"\tseedfall bool",
				"")),
		srcedit.Replace("accept: ask the host for the new connection's addresses",
			lines(
				"\tif err = netfd.init(); err != nil {",
				"\t\tnetfd.Close()",
				"\t\treturn nil, err",
				"\t}",
				"\treturn netfd, nil",
				"}"),
			lines(
				"\tif err = netfd.init(); err != nil {",
				"\t\tnetfd.Close()",
				"\t\treturn nil, err",
				"\t}",
				"\t// seedfall: ask the host for the connection's addresses (sock_addr),",
				"\t// like getsockname/getpeername after accept on unix.",
				"\tseedfallAccepted(fd, netfd)",
				"\treturn netfd, nil",
				"}")),
		srcedit.Replace("netFD.isSeedfall",
			lines("\treturn fd.pfd.SetWriteDeadline(t)", "}", "", "type unknownAddr struct{}"),
			lines("\treturn fd.pfd.SetWriteDeadline(t)", "}", "",
				"// isSeedfall reports whether fd is a seedfall host socket.",
				"func (fd *netFD) isSeedfall() bool { return fd != nil && fd.seedfall }", "",
				"type unknownAddr struct{}")),
	},
}, {
	Path: "src/net/interface_stub.go",
	Edits: []srcedit.Edit{
		srcedit.Replace("interfaceTable: lo and eth0",
			lines(
				"func interfaceTable(ifindex int) ([]Interface, error) {",
				"\treturn nil, nil",
				"}"),
			lines(
				"func interfaceTable(ifindex int) ([]Interface, error) {",
				"\tvar out []Interface",
				"\tfor _, ifi := range seedfallInterfaces() {",
				"\t\tif ifindex == 0 || ifi.Index == ifindex {",
				"\t\t\tout = append(out, ifi)",
				"\t\t}",
				"\t}",
				"\treturn out, nil",
				"}")),
		srcedit.Replace("interfaceAddrTable: the addresses of lo and eth0",
			lines(
				"func interfaceAddrTable(ifi *Interface) ([]Addr, error) {",
				"\treturn nil, nil",
				"}"),
			lines(
				"func interfaceAddrTable(ifi *Interface) ([]Addr, error) {",
				"\tif ifi != nil {",
				"\t\treturn seedfallInterfaceAddrs(ifi.Index), nil",
				"\t}",
				"\tvar out []Addr",
				"\tfor _, i := range seedfallInterfaces() {",
				"\t\tout = append(out, seedfallInterfaceAddrs(i.Index)...)",
				"\t}",
				"\treturn out, nil",
				"}")),
		srcedit.Replace("the interfaces a guest sees",
			lines("package net", "", "// If the ifindex is zero, interfaceTable returns mappings of all"),
			lines("package net", "",
				"// seedfall: a guest sees two interfaces, as a Linux container would: the",
				"// loopback \"lo\" (127.0.0.1/8, ::1/128) and \"eth0\" with the node's own",
				"// simulated address (NodeIP of SEEDFALL_NODE, in 10.0.0.0/8). Without",
				"// SEEDFALL_NODE only the loopback is there.",
				"",
				"const (",
				"\tseedfallLoIndex  = 1",
				"\tseedfallEthIndex = 2",
				")",
				"",
				"func seedfallInterfaces() []Interface {",
				"\tifs := []Interface{{Index: seedfallLoIndex, MTU: 65536, Name: \"lo\", Flags: FlagUp | FlagLoopback | FlagRunning}}",
				"\tif ip := seedfallSelfIP(); !ip.IsLoopback() {",
				"\t\tifs = append(ifs, Interface{Index: seedfallEthIndex, MTU: 1500, Name: \"eth0\",",
				"\t\t\tHardwareAddr: HardwareAddr{0x02, 0x00, ip[0], ip[1], ip[2], ip[3]},",
				"\t\t\tFlags:        FlagUp | FlagBroadcast | FlagMulticast | FlagRunning})",
				"\t}",
				"\treturn ifs",
				"}",
				"",
				"func seedfallInterfaceAddrs(index int) []Addr {",
				"\tswitch index {",
				"\tcase seedfallLoIndex:",
				"\t\treturn []Addr{&IPNet{IP: IPv4(127, 0, 0, 1), Mask: CIDRMask(8, 32)}, &IPNet{IP: IPv6loopback, Mask: CIDRMask(128, 128)}}",
				"\tcase seedfallEthIndex:",
				"\t\tif ip := seedfallSelfIP(); !ip.IsLoopback() {",
				"\t\t\treturn []Addr{&IPNet{IP: ip, Mask: CIDRMask(8, 32)}}",
				"\t\t}",
				"\t}",
				"\treturn nil",
				"}",
				"",
				"// If the ifindex is zero, interfaceTable returns mappings of all")),
	},
}, {
	Path: "src/net/lookup_unix.go",
	Edits: []srcedit.Edit{
		insertAfter("lookupHost: node names without DNS",
			"func (r *Resolver) lookupHost(ctx context.Context, host string) (addrs []string, err error) {\n",
			lines(
				"\t// seedfall: node names resolve without DNS.",
				"\tif addrs, err, ok := seedfallLookupHost(host); ok {",
				"\t\treturn addrs, err",
				"\t}")),
		insertAfter("lookupIP: node names without DNS",
			"func (r *Resolver) lookupIP(ctx context.Context, network, host string) (addrs []IPAddr, err error) {\n",
			lines(
				"\t// seedfall: node names resolve without DNS.",
				"\tif addrs, err, ok := seedfallLookupIP(network, host); ok {",
				"\t\treturn addrs, err",
				"\t}")),
		insertAfter("lookupCNAME: a name is its own canonical name",
			"func (r *Resolver) lookupCNAME(ctx context.Context, name string) (string, error) {\n",
			lines(
				"\t// seedfall: there is no DNS; a name is its own canonical name.",
				"\tif seedfallNoDNS {",
				"\t\treturn absDomainName(name), nil",
				"\t}")),
		insertAfter("lookupSRV: no DNS",
			"func (r *Resolver) lookupSRV(ctx context.Context, service, proto, name string) (string, []*SRV, error) {\n",
			noDNS(`"", nil, `)),
		insertAfter("lookupMX: no DNS",
			"func (r *Resolver) lookupMX(ctx context.Context, name string) ([]*MX, error) {\n",
			noDNS("nil, ")),
		insertAfter("lookupNS: no DNS",
			"func (r *Resolver) lookupNS(ctx context.Context, name string) ([]*NS, error) {\n",
			noDNS("nil, ")),
		insertAfter("lookupTXT: no DNS",
			"func (r *Resolver) lookupTXT(ctx context.Context, name string) ([]string, error) {\n",
			noDNS("nil, ")),
		insertAfter("lookupAddr: node IPs map back to node names",
			"func (r *Resolver) lookupAddr(ctx context.Context, addr string) ([]string, error) {\n",
			lines(
				"\t// seedfall: node IPs map back to node names without DNS.",
				"\tif names, err, ok := seedfallLookupAddr(addr); ok {",
				"\t\treturn names, err",
				"\t}")),
	},
}, {
	Path: "src/net/net_fake.go",
	Edits: []srcedit.Edit{
		srcedit.Replace("socket becomes fakeSocket (seedfall_wasip1.go's socket sends TCP streams to the host)",
			lines(
				"// socket returns a network file descriptor that is ready for",
				"// I/O using the fake network.")+"func socket(",
			lines(
				"// fakeSocket returns a network file descriptor that is ready for",
				"// I/O using the fake network.",
				"//",
				"// seedfall: renamed from socket; socket (seedfall_wasip1.go) sends TCP",
				"// streams to the seedfall host and everything else (UDP, unix) here.")+"func fakeSocket("),
	},
}, {
	Path: "src/net/sockopt_fake.go",
	Edits: []srcedit.Edit{
		insertAfter("setReadBuffer: accepted on seedfall sockets",
			"func setReadBuffer(fd *netFD, bytes int) error {\n", acceptedOnly),
		insertAfter("setWriteBuffer: accepted on seedfall sockets",
			"func setWriteBuffer(fd *netFD, bytes int) error {\n", acceptedOnly),
		insertAfter("setKeepAlive: accepted on seedfall sockets",
			"func setKeepAlive(fd *netFD, keepalive bool) error {\n", acceptedOnly),
		insertAfter("setLinger: reaches the host (linger 0 resets on Close)",
			"func setLinger(fd *netFD, sec int) error {\n",
			lines(
				"\tif fd.isSeedfall() {",
				"\t\treturn seedfallSetLinger(fd, sec) // seedfall: linger 0 makes Close send a reset",
				"\t}")),
	},
}, {
	Path: "src/net/tcpsockopt_stub.go",
	Edits: []srcedit.Edit{
		insertAfter("setNoDelay: accepted on seedfall sockets",
			"func setNoDelay(fd *netFD, noDelay bool) error {\n", acceptedOnly),
		insertAfter("setKeepAliveIdle: accepted on seedfall sockets",
			"func setKeepAliveIdle(fd *netFD, d time.Duration) error {\n", acceptedOnly),
		insertAfter("setKeepAliveInterval: accepted on seedfall sockets",
			"func setKeepAliveInterval(fd *netFD, d time.Duration) error {\n", acceptedOnly),
		insertAfter("setKeepAliveCount: accepted on seedfall sockets",
			"func setKeepAliveCount(fd *netFD, n int) error {\n", acceptedOnly),
	},
}}
