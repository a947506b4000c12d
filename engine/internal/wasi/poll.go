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

// pollInline is how many subscriptions pollOneoff handles without allocating: Go's
// netpoller asks for one clock and one subscription per waiting fd, and a node rarely
// waits on more. poll_oneoff is one of a guest's most frequent calls (after
// clock_time_get), so its scratch space lives on the stack.
const pollInline = 8

func pollOneoff(h *Process, m api.Memory, s []uint64) uint32 {
	in, out, nsubs, neventsPtr := u32(s, 0), u32(s, 1), u32(s, 2), u32(s, 3)
	if nsubs == 0 {
		return errnoInval
	}
	raw := readBytes(m, in, nsubs*48)
	// A copy: the guest's memory is not read again after it may have run.
	var subsBuf [pollInline * 48]byte
	var deadlinesBuf [pollInline]int64
	var readyBuf [pollInline]uint16 // 0: not ready; else 1 + errno
	subs, deadlines, ready := subsBuf[:0], deadlinesBuf[:0], readyBuf[:0]
	if nsubs > pollInline {
		subs, deadlines, ready = make([]byte, 0, len(raw)), make([]int64, 0, nsubs), make([]uint16, 0, nsubs)
	}
	subs = append(subs, raw...)
	deadlines, ready = deadlines[:nsubs], ready[:nsubs]
	h.p.Advance()
	// Deadlines are computed once, at the first call, so a wake-up after a block does not
	// push a relative timeout further out.
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
		nev := uint32(0)
		minDeadline := int64(-1)
		for i := uint32(0); i < nsubs; i++ {
			sub := subs[i*48:]
			tag := sub[8]
			ok := false
			var errno uint16
			switch tag {
			case subClock:
				if deadlines[i] <= h.p.Now() {
					ok = true
				} else if minDeadline < 0 || deadlines[i] < minDeadline {
					minDeadline = deadlines[i]
				}
			case subFdRead, subFdWrite:
				fd := binary.LittleEndian.Uint32(sub[16:])
				e := h.fd(fd)
				switch {
				case e == nil:
					ok, errno = true, uint16(errnoBadf)
				case e.kind != fdSock:
					ok = true
				case tag == subFdRead:
					ok = e.sock.Readable()
				default:
					ok = e.sock.Writable()
				}
			}
			ready[i] = 0
			if ok {
				ready[i] = 1 + errno
				nev++
			}
		}
		if nev > 0 {
			writeEvents(m, out, subs, ready, nev)
			putU32(m, neventsPtr, nev)
			return 0
		}
		// Nothing ready: block until a deadline or a socket changes.
		h.p.Block(minDeadline)
	}
}

// writeEvents writes the nev events of the ready subscriptions, in subscription order,
// at out. An out buffer outside the guest's memory is left unwritten (as before: the
// count is still stored).
func writeEvents(m api.Memory, out uint32, subs []byte, ready []uint16, nev uint32) {
	evs, ok := m.Read(out, nev*32)
	if !ok {
		return
	}
	for i, r := range ready {
		if r == 0 {
			continue
		}
		sub := subs[i*48:]
		ev := evs[:32]
		evs = evs[32:]
		clear(ev)
		copy(ev[0:8], sub[0:8])
		binary.LittleEndian.PutUint16(ev[8:], r-1)
		ev[10] = sub[8]
		if sub[8] != subClock {
			binary.LittleEndian.PutUint64(ev[16:], 1)
		}
	}
}
