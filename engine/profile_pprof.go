package engine

import (
	"compress/gzip"
	"io"
	"sort"

	"github.com/seedfall/seedfall/engine/internal/goloc"
)

// WriteTo writes the profile in pprof's format (a gzipped profile.proto, as
// github.com/google/pprof/proto/profile.proto defines it), for `go tool pprof`. Sample
// values are time (nanoseconds of the host's clock) and count (intervals).
func (p *profiler) WriteTo(w io.Writer) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := newProfEncoder()
	nodes := p.sim.cfg.AllNodes()
	e.sources = loadProfileSources(p.sim.cfg)
	e.nodes = make([]string, len(nodes))
	for i, n := range nodes {
		e.nodes[i] = n.Name
	}

	// Samples in a fixed order (the map's is random): by node, kind, host, stack.
	keys := make([]profState, 0, len(p.samples))
	for k := range p.samples {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.node != b.node {
			return a.node < b.node
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.host != b.host {
			return a.host < b.host
		}
		return a.stack < b.stack
	})
	var total int64
	for _, k := range keys {
		v := p.samples[k]
		total += v[0]
		var locs []uint64
		switch k.kind {
		case profWorld:
			locs = append(locs, e.pseudo("[seedfall] world"))
		case profInstantiate:
			locs = append(locs, e.pseudo("[host] instantiate"))
		case profClose:
			locs = append(locs, e.pseudo("[host] close"))
		case profHost:
			locs = append(locs, e.pseudo("[host] "+k.host))
		case profGuest:
			if k.stack < 0 {
				locs = append(locs, e.pseudo("[guest] after its last host call"))
			}
		}
		if k.stack >= 0 {
			st := p.stacks[k.stack]
			t := p.sim.locs[st.node]
			for _, pc := range st.pcs {
				locs = append(locs, e.guestLoc(st.node, t, pc))
			}
		}
		if k.node >= 0 {
			locs = append(locs, e.pseudo("[node] "+nodes[k.node].Name))
		}
		var s []byte
		s = appendPacked(s, 1, locs)
		s = appendPacked(s, 2, []uint64{uint64(v[0]), uint64(v[1])})
		e.out = appendBytes(e.out, 2, s)
	}

	var out []byte
	out = appendBytes(out, 1, e.valueType("time", "nanoseconds"))
	out = appendBytes(out, 1, e.valueType("count", "count"))
	out = append(out, e.out...)
	out = append(out, e.mappings()...)
	out = append(out, e.locs...)
	out = append(out, e.funcs...)
	out = appendVarint(out, 9, uint64(p.start.UnixNano()))
	out = appendVarint(out, 10, uint64(total))
	out = appendBytes(out, 11, e.valueType("wall", "nanoseconds"))
	out = appendVarint(out, 12, 1)
	for _, c := range []string{"seedfall: guest time is charged to the guest's Go stack at its next host call"} {
		out = appendVarint(out, 13, uint64(e.str(c)))
	}
	out = appendVarint(out, 14, uint64(e.str("time")))
	// The string table last: every string is interned by now.
	for _, s := range e.strs {
		out = appendBytes(out, 6, []byte(s))
	}
	cw := &countWriter{w: w}
	zw := gzip.NewWriter(cw)
	if _, err := zw.Write(out); err != nil {
		return cw.n, err
	}
	err := zw.Close()
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// profEncoder interns strings, functions and locations of one profile.
type profEncoder struct {
	strs   []string
	strIdx map[string]int
	fnIdx  map[[2]string]uint64 // name, file -> function id
	// sources resolves guest file names to files here; nodes are the node names.
	sources *profileSources
	nodes   []string
	locIdx  map[[2]uint64]uint64 // node+1, pc -> location id; node 0: pseudo frames by string
	out     []byte               // samples
	locs    []byte
	funcs   []byte
	nloc    uint64
}

func newProfEncoder() *profEncoder {
	return &profEncoder{strs: []string{""}, strIdx: map[string]int{"": 0},
		fnIdx: map[[2]string]uint64{}, locIdx: map[[2]uint64]uint64{}}
}

func (e *profEncoder) str(s string) int {
	if i, ok := e.strIdx[s]; ok {
		return i
	}
	e.strs = append(e.strs, s)
	e.strIdx[s] = len(e.strs) - 1
	return len(e.strs) - 1
}

func (e *profEncoder) valueType(typ, unit string) []byte {
	var b []byte
	b = appendVarint(b, 1, uint64(e.str(typ)))
	return appendVarint(b, 2, uint64(e.str(unit)))
}

// function interns a function. A guest function's name is qualified by its node
// ("main.main (server)"), so that the same function in two nodes stays two functions
// in pprof's graph; its system name is the Go name, and its file one on this machine.
func (e *profEncoder) function(node int, name, file string) uint64 {
	sys := name
	if node >= 0 && node < len(e.nodes) {
		name = name + " (" + e.nodes[node] + ")"
		file = e.sources.resolve(file)
	}
	k := [2]string{name, file}
	if id, ok := e.fnIdx[k]; ok {
		return id
	}
	id := uint64(len(e.fnIdx) + 1)
	e.fnIdx[k] = id
	var b []byte
	b = appendVarint(b, 1, id)
	b = appendVarint(b, 2, uint64(e.str(name)))
	b = appendVarint(b, 3, uint64(e.str(sys)))
	b = appendVarint(b, 4, uint64(e.str(file)))
	e.funcs = appendBytes(e.funcs, 5, b)
	return id
}

// mappings are one mapping for seedfall's own frames (id 1, the main binary pprof
// names) and one per node's module (id node+2), each with its symbols already in the
// profile, so that pprof neither looks for binaries nor says none is available.
func (e *profEncoder) mappings() []byte {
	var out []byte
	files := append([]string{"seedfall"}, e.nodes...)
	for i, f := range files {
		if i > 0 {
			f += ".wasm"
		}
		var b []byte
		b = appendVarint(b, 1, uint64(i+1))
		b = appendVarint(b, 3, 1<<62) // memory_limit: every address of the module
		b = appendVarint(b, 5, uint64(e.str(f)))
		for field := 7; field <= 10; field++ { // has_functions, _filenames, _line_numbers, _inline_frames
			b = appendVarint(b, field, 1)
		}
		out = appendBytes(out, 3, b)
	}
	return out
}

// location adds a location of node (-1: seedfall's own frames) with lines (innermost
// first) and returns its id.
func (e *profEncoder) location(node int, addr uint64, lines []goloc.Location) uint64 {
	e.nloc++
	var b []byte
	b = appendVarint(b, 1, e.nloc)
	b = appendVarint(b, 2, uint64(node+2))
	b = appendVarint(b, 3, addr)
	for _, l := range lines {
		var lb []byte
		lb = appendVarint(lb, 1, e.function(node, l.Func, l.File))
		lb = appendVarint(lb, 2, uint64(l.Line))
		b = appendBytes(b, 4, lb)
	}
	e.locs = appendBytes(e.locs, 4, b)
	return e.nloc
}

func (e *profEncoder) pseudo(name string) uint64 {
	k := [2]uint64{0, uint64(e.str(name))}
	if id, ok := e.locIdx[k]; ok {
		return id
	}
	id := e.location(-1, 0, []goloc.Location{{Func: name}})
	e.locIdx[k] = id
	return id
}

func (e *profEncoder) guestLoc(node int, t *goloc.Table, pc uint64) uint64 {
	k := [2]uint64{uint64(node) + 1, pc}
	if id, ok := e.locIdx[k]; ok {
		return id
	}
	lines := t.Frames(pc)
	if len(lines) == 0 {
		lines = []goloc.Location{{Func: "?"}}
	}
	id := e.location(node, pc, lines)
	e.locIdx[k] = id
	return id
}

// protobuf wire format: varint (type 0) and length-delimited (type 2) fields.

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	b = appendUvarint(b, uint64(field)<<3)
	return appendUvarint(b, v)
}

func appendBytes(b []byte, field int, data []byte) []byte {
	b = appendUvarint(b, uint64(field)<<3|2)
	b = appendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

func appendPacked(b []byte, field int, vs []uint64) []byte {
	var p []byte
	for _, v := range vs {
		p = appendUvarint(p, v)
	}
	return appendBytes(b, field, p)
}
