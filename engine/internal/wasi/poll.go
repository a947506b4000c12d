package wasi

import (
	"encoding/binary"

	"github.com/tetratelabs/wazero/api"
)

const (
	subClock   = 0
	subFdRead  = 1
	subFdWrite = 2
)

func pollOneoff(h *Process, m api.Memory, s []uint64) uint32 {
	in, out, nsubs, neventsPtr := u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 3)
	if nsubs == 0 {
		return errnoInval
	}
	raw := readBytes(m, in, nsubs*48)
	subs := append([]byte(nil), raw...)
	h.p.Advance()
	// Deadlines are computed once, at the first call, so a wake-up after a block does not
	// push a relative timeout further out.
	deadlines := make([]int64, nsubs)
	for i := uint32(0); i < nsubs; i++ {
		sub := subs[i*48:]
		deadlines[i] = -1
		if sub[8] == subClock {
			timeout := int64(binary.LittleEndian.Uint64(sub[24:]))
			flags := binary.LittleEndian.Uint16(sub[40:])
			id := binary.LittleEndian.Uint32(sub[16:])
			if flags&1 != 0 {
				// Absolute: convert from the node's clock to global virtual time.
				timeout -= h.p.Clock(id == 0)
				if timeout < 0 {
					timeout = 0
				}
			}
			deadlines[i] = h.p.TimerDeadline(timeout)
		}
	}
	for {
		var evs []byte
		nev := uint32(0)
		minDeadline := int64(-1)
		for i := uint32(0); i < nsubs; i++ {
			sub := subs[i*48:]
			tag := sub[8]
			ready := false
			var errno uint16
			switch tag {
			case subClock:
				if deadlines[i] <= h.p.Now() {
					ready = true
				} else if minDeadline < 0 || deadlines[i] < minDeadline {
					minDeadline = deadlines[i]
				}
			case subFdRead, subFdWrite:
				fd := binary.LittleEndian.Uint32(sub[16:])
				e := h.fd(fd)
				switch {
				case e == nil:
					ready, errno = true, uint16(errnoBadf)
				case e.kind != fdSock:
					ready = true
				case tag == subFdRead:
					ready = e.sock.Readable()
				default:
					ready = e.sock.Writable()
				}
			}
			if ready {
				var ev [32]byte
				copy(ev[0:8], sub[0:8])
				binary.LittleEndian.PutUint16(ev[8:], errno)
				ev[10] = tag
				if tag != subClock {
					binary.LittleEndian.PutUint64(ev[16:], 1)
				}
				evs = append(evs, ev[:]...)
				nev++
			}
		}
		if nev > 0 {
			m.Write(out, evs)
			putU32(m, neventsPtr, nev)
			return 0
		}
		// Nothing ready: block until a deadline or a socket changes.
		h.p.Block(minDeadline)
	}
}
