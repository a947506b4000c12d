package overlay

import (
	"fmt"
	"net/netip"
	"sort"
)

// NodeIP is the fake IPv4 address of a node name, as the overlay's
// package net computes it in every guest: 10.b1.b2.b3 where b1b2b3 are
// the low 24 bits of the 32-bit FNV-1a hash of the name, with 0 replaced
// by 1 and 0xffffff by 0xfffffe. The guest maps "node:port" text from
// sock_addr to NodeIP(node):port, and dials "a.b.c.d:port" for an IP
// whose name it does not know, so the host must accept NodeIP(node) as a
// dial target for node.
func NodeIP(name string) netip.Addr {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h ^= uint32(name[i])
		h *= 16777619
	}
	h &= 0xffffff
	switch h {
	case 0:
		h = 1
	case 0xffffff:
		h = 0xfffffe
	}
	return netip.AddrFrom4([4]byte{10, byte(h >> 16), byte(h >> 8), byte(h)})
}

// NodeIPs maps NodeIP(name) to name for the given node names, for the
// host to resolve IP dial targets. Two names with the same IP are an
// error (rename one node).
func NodeIPs(names []string) (map[netip.Addr]string, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	m := make(map[netip.Addr]string, len(sorted))
	for _, n := range sorted {
		ip := NodeIP(n)
		if other, dup := m[ip]; dup && other != n {
			return nil, fmt.Errorf("overlay: nodes %q and %q have the same simulated IP %s; rename one", other, n, ip)
		}
		m[ip] = n
	}
	return m, nil
}
