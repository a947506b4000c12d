package wasi

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero/api"
)

// pollProc is the part of Proc that poll_oneoff uses: a virtual clock that Block moves
// to the deadline it is given, and a log of the blocks. It allocates nothing, so that
// the allocation test measures poll_oneoff alone.
type pollProc struct {
	Proc
	now    int64
	blocks []int64 // preallocated by the tests that look at it
}

func (p *pollProc) Advance()                    { p.now++ }
func (p *pollProc) Now() int64                  { return p.now }
func (p *pollProc) Clock(realtime bool) int64   { return p.now + 5000 } // the node's clock runs 5 µs ahead
func (p *pollProc) TimerDeadline(d int64) int64 { return p.now + d }
func (p *pollProc) Block(deadline int64) {
	if deadline < 0 {
		panic("poll_oneoff blocked without a deadline: the test would hang")
	}
	p.blocks = append(p.blocks, deadline)
	p.now = deadline
}

// sub is one WASI subscription: userdata, tag, then a clock (id, timeout, flags) or an fd.
type sub struct {
	userdata uint64
	tag      uint8
	fd       uint32 // fd subscriptions; the clock id for clocks
	timeout  uint64
	abs      bool
}

func putSubs(m api.Memory, ptr uint32, subs []sub) {
	buf := make([]byte, 48*len(subs))
	for i, s := range subs {
		b := buf[i*48:]
		binary.LittleEndian.PutUint64(b[0:], s.userdata)
		b[8] = s.tag
		binary.LittleEndian.PutUint32(b[16:], s.fd)
		if s.tag == subClock {
			binary.LittleEndian.PutUint64(b[24:], s.timeout)
			if s.abs {
				binary.LittleEndian.PutUint16(b[40:], 1)
			}
		}
	}
	m.Write(ptr, buf)
}

// events reads the events poll_oneoff wrote as "userdata/tag/errno/nbytes" strings.
func events(t *testing.T, m api.Memory, out, neventsPtr uint32) []string {
	t.Helper()
	n, _ := m.ReadUint32Le(neventsPtr)
	raw, ok := m.Read(out, n*32)
	if !ok {
		t.Fatalf("%d events do not fit in memory", n)
	}
	var evs []string
	for i := uint32(0); i < n; i++ {
		e := raw[i*32:]
		for _, b := range e[11:16] {
			if b != 0 {
				t.Fatalf("event %d: padding %x is not zero", i, e[11:16])
			}
		}
		evs = append(evs, fmt.Sprintf("%d/%d/%d/%d", binary.LittleEndian.Uint64(e), e[10],
			binary.LittleEndian.Uint16(e[8:]), binary.LittleEndian.Uint64(e[16:])))
	}
	return evs
}

func TestPollOneoff(t *testing.T) {
	const in, out, nev = 1024, 8192, 16
	for _, tc := range []struct {
		name   string
		subs   []sub
		want   []string // events, in subscription order
		blocks []int64  // the deadlines poll_oneoff blocked until
		now    int64    // virtual time at the return
	}{
		{name: "relative clock blocks until its deadline",
			subs: []sub{{userdata: 7, tag: subClock, timeout: 100}},
			want: []string{"7/0/0/0"}, blocks: []int64{1101}, now: 1101},
		{name: "absolute clock is converted from the node's clock",
			// 1000 + one tick, on a node clock 5000 ahead: 8001 on its clock is 2000 from now.
			subs: []sub{{userdata: 1, tag: subClock, timeout: 8001, abs: true}},
			want: []string{"1/0/0/0"}, blocks: []int64{3001}, now: 3001},
		{name: "absolute clock in the past is due at once",
			subs: []sub{{userdata: 1, tag: subClock, timeout: 10, abs: true}},
			want: []string{"1/0/0/0"}, now: 1001},
		{name: "earliest clock wakes, later ones stay pending",
			subs: []sub{{userdata: 1, tag: subClock, timeout: 500}, {userdata: 2, tag: subClock, timeout: 200}, {userdata: 3, tag: subClock, timeout: 200}},
			want: []string{"2/0/0/0", "3/0/0/0"}, blocks: []int64{1201}, now: 1201},
		{name: "a bad fd is an event with EBADF, at once",
			subs: []sub{{userdata: 9, tag: subClock, timeout: 100}, {userdata: 4, tag: subFdRead, fd: 99}},
			want: []string{fmt.Sprintf("4/1/%d/1", errnoBadf)}, now: 1001},
		{name: "stdio and files are always ready, for reading and for writing",
			subs: []sub{{userdata: 5, tag: subFdWrite, fd: 1}, {userdata: 6, tag: subFdRead, fd: 3}},
			want: []string{"5/2/0/1", "6/1/0/1"}, now: 1001},
		{name: "more subscriptions than fit inline",
			subs: func() []sub {
				var s []sub
				for i := range 11 {
					s = append(s, sub{userdata: uint64(100 + i), tag: subClock, timeout: uint64(1000 - 10*(i%3))})
				}
				return s
			}(),
			want: []string{"102/0/0/0", "105/0/0/0", "108/0/0/0"}, blocks: []int64{1981}, now: 1981},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pollProc{now: 1000}
			h, m := NewProcess(p), memory(t)
			putSubs(m, in, tc.subs)
			if e := pollOneoff(h, m, stack(in, out, uint32(len(tc.subs)), nev)); e != 0 {
				t.Fatalf("errno %d", e)
			}
			if got := events(t, m, out, nev); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
			if fmt.Sprint(p.blocks) != fmt.Sprint(tc.blocks) {
				t.Errorf("blocked until %v, want %v", p.blocks, tc.blocks)
			}
			if p.now != tc.now {
				t.Errorf("returned at %d, want %d", p.now, tc.now)
			}
		})
	}
}

func TestPollOneoffBadArguments(t *testing.T) {
	p := &pollProc{now: 1000}
	h, m := NewProcess(p), memory(t)
	if e := pollOneoff(h, m, stack(0, 512, 0, 16)); e != errnoInval {
		t.Errorf("no subscriptions: errno %d, want EINVAL", e)
	}
	if code := exitCode(func() { pollOneoff(h, m, stack(65536-40, 512, 1, 16)) }); code != 2 {
		t.Errorf("subscriptions past the end of memory: exit code %d, want 2", code)
	}
}

// TestPollOneoffAllocations: the netpoller's usual call (a clock and two fds) allocates
// nothing on the host.
func TestPollOneoffAllocations(t *testing.T) {
	p := &pollProc{now: 1000, blocks: make([]int64, 0, 1<<20)}
	h, m := NewProcess(p), memory(t)
	putSubs(m, 1024, []sub{{userdata: 1, tag: subClock, timeout: 100}, {userdata: 2, tag: subFdRead, fd: 1}, {userdata: 3, tag: subFdWrite, fd: 2}})
	s := stack(1024, 8192, 3, 16)
	if n := testing.AllocsPerRun(100, func() { pollOneoff(h, m, s) }); n != 0 {
		t.Errorf("poll_oneoff allocated %.1f times per call, want 0", n)
	}
}
