package engine

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
)

// Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012; TigerBeetle's VOPR
// options_swarm): with "swarm": true in the faults section, each seed draws which fault
// kinds are on and at what rate, each up to the config's own value. A run with every
// kind on at once lets one kind mask another (crashes that restart a node before a
// partition can matter, resets that hide a slow link); a seed with only some kinds on,
// at rates of its own, reaches states that the full mix makes rare.
//
// The swarm is generic over the fault-kind table: every kind whose entry names a knob
// (kindSpec.knob, the JSON name of its rate or probability in the faults section) takes
// part, so a new kind joins swarm by naming its knob there. The draw of each knob comes
// from a stream of its own keyed by the seed and the knob's name ("swarm/crash_per_sec"),
// so a new knob shifts no other knob's draw, and the seed's other streams (plan, sched,
// net, disk) are untouched: a seed under swarm draws its plan from the same plan stream,
// only at the swarm's rates.

// SwarmDraw is one seed's swarm draw: the value of each knob of the config that is
// above zero, by the knob's JSON name; 0 turns the kind off. It is recorded in the
// result and in a saved plan, so that replay is exact.
type SwarmDraw map[string]float64

// swarmKnob is a kind's knob: its JSON name and how to read and set it in a
// FaultConfig.
type swarmKnob struct {
	kind FaultKind
	name string
	// unit renders a value in the trace: "/s" for a rate, "ppm" for a clock skew, "" for
	// a probability.
	unit  string
	get   func(f *FaultConfig) float64
	set   func(f *FaultConfig, v float64)
	round bool // an integer knob (clock_skew_ppm): drawn values are rounded, at least 1
}

var (
	knobsOnce sync.Once
	knobs     []swarmKnob
)

// swarmKnobs are the knobs of the kinds in the fault-kind table, in its order. A knob
// names a field of FaultConfig by its JSON name: a float64 rate ("_per_sec"), an int64
// (clock_skew_ppm) or a DiskFault (its probability P).
func swarmKnobs() []swarmKnob {
	knobsOnce.Do(func() {
		t := reflect.TypeFor[FaultConfig]()
		for _, s := range faultKinds {
			if s.knob == "" {
				continue
			}
			idx := -1
			for i := 0; i < t.NumField(); i++ {
				if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name == s.knob {
					idx = i
				}
			}
			if idx < 0 {
				panic(fmt.Sprintf("fault kind %s: knob %q is not a field of the faults section", s.kind, s.knob))
			}
			k := swarmKnob{kind: s.kind, name: s.knob}
			field := func(f *FaultConfig) reflect.Value { return reflect.ValueOf(f).Elem().Field(idx) }
			switch ft := t.Field(idx).Type; {
			case ft.Kind() == reflect.Float64:
				k.unit = "/s"
				k.get = func(f *FaultConfig) float64 { return field(f).Float() }
				k.set = func(f *FaultConfig, v float64) { field(f).SetFloat(v) }
			case ft.Kind() == reflect.Int64:
				k.unit, k.round = "ppm", true
				k.get = func(f *FaultConfig) float64 { return float64(field(f).Int()) }
				k.set = func(f *FaultConfig, v float64) { field(f).SetInt(int64(v)) }
			case ft == reflect.TypeFor[DiskFault]():
				k.get = func(f *FaultConfig) float64 { return field(f).Interface().(DiskFault).P }
				k.set = func(f *FaultConfig, v float64) { field(f).FieldByName("P").SetFloat(v) }
			default:
				panic(fmt.Sprintf("fault kind %s: knob %q has type %s (want float64, int64 or DiskFault)", s.kind, s.knob, ft))
			}
			knobs = append(knobs, k)
		}
	})
	return knobs
}

// swarmKnobNames lists the knobs swarm draws, in the fault-kind table's order.
func swarmKnobNames() []string {
	var out []string
	for _, k := range swarmKnobs() {
		out = append(out, k.name)
	}
	return out
}

// drawSwarm draws seed's swarm for cfg: each knob above zero in the config is on with
// probability 1/2 (at least one is on), at a value drawn uniformly from (0, the config's
// value]. Each knob draws from its own stream, so the draw of one knob does not depend on
// which others the config sets.
func drawSwarm(cfg *Config, seed uint64) SwarmDraw {
	d := SwarmDraw{}
	var configured []swarmKnob
	for _, k := range swarmKnobs() {
		max := k.get(&cfg.Faults)
		if max <= 0 {
			continue
		}
		configured = append(configured, k)
		r := streamRand(seed, "swarm/"+k.name)
		on := r.IntN(2) == 0
		v := max * (1 - r.Float64()) // (0, max]
		if k.round {
			v = math.Max(1, math.Round(v))
		}
		if !on {
			v = 0
		}
		d[k.name] = v
	}
	if len(configured) == 0 {
		return d
	}
	for _, v := range d {
		if v > 0 {
			return d
		}
	}
	// Every kind came out off: a run without faults tests little. One kind, drawn from
	// the swarm's own stream, comes on at the value it drew.
	k := configured[streamRand(seed, "swarm").IntN(len(configured))]
	r := streamRand(seed, "swarm/"+k.name)
	r.IntN(2)
	v := k.get(&cfg.Faults) * (1 - r.Float64())
	if k.round {
		v = math.Max(1, math.Round(v))
	}
	d[k.name] = v
	return d
}

// drawSwarmFor returns the swarm draw of seed for the sim's config (nil when the config
// does not ask for swarm).
func (s *Sim) drawSwarmFor(seed uint64) SwarmDraw {
	if !s.cfg.Faults.Swarm {
		return nil
	}
	return drawSwarm(s.cfg, seed)
}

// validate (engineapi.ValidateSwarm) checks a swarm draw read from a plan: known knobs,
// values not negative.
func (d SwarmDraw) validate() error {
	known := map[string]bool{}
	for _, k := range swarmKnobs() {
		known[k.name] = true
	}
	for name, v := range d {
		if !known[name] {
			return fmt.Errorf("swarm: %q is not a swarm knob (want %s)", name, orList(swarmKnobNames()))
		}
		if v < 0 || v != v || math.IsInf(v, 0) {
			return fmt.Errorf("swarm: %s %v: want a value of 0 (off) or more", name, v)
		}
	}
	return nil
}

// apply returns a copy of cfg with the draw's values in place of the config's. Knobs
// the draw does not name keep the config's value.
func (d SwarmDraw) apply(cfg *Config) *Config {
	c := *cfg
	if c.Faults.CrashMidOp != nil {
		m := *c.Faults.CrashMidOp
		c.Faults.CrashMidOp = &m
	}
	for _, k := range swarmKnobs() {
		if v, ok := d[k.name]; ok {
			k.set(&c.Faults, v)
		}
	}
	return &c
}

// String renders the draw for the trace, in the table's order:
// "crash 0.31/s, partition off, fsync_eio 0.0123".
func (d SwarmDraw) String() string {
	var parts []string
	for _, k := range swarmKnobs() {
		v, ok := d[k.name]
		switch {
		case !ok:
			continue
		case v == 0:
			parts = append(parts, fmt.Sprintf("%s off", k.kind))
		case k.round:
			parts = append(parts, fmt.Sprintf("%s %d%s", k.kind, int64(v), k.unit))
		default:
			parts = append(parts, fmt.Sprintf("%s %.4g%s", k.kind, v, k.unit))
		}
	}
	return strings.Join(parts, ", ")
}

// off returns a copy of the draw with kind's knob off (0), and whether the kind was on.
func (d SwarmDraw) off(kind FaultKind) (SwarmDraw, bool) {
	for _, k := range swarmKnobs() {
		if k.kind == kind && d[k.name] > 0 {
			out := SwarmDraw{}
			for n, v := range d {
				out[n] = v
			}
			out[k.name] = 0
			return out, true
		}
	}
	return d, false
}

// onKinds lists the kinds the draw turns on, in the table's order.
func (d SwarmDraw) onKinds() []FaultKind {
	var out []FaultKind
	for _, k := range swarmKnobs() {
		if d[k.name] > 0 {
			out = append(out, k.kind)
		}
	}
	return out
}

// runSwarm is the swarm of a run: the given plan's draw when it has one (replay is
// exact), else the seed's own draw when the config asks for swarm, else nil.
func runSwarm(cfg *Config, seed uint64, plan *FaultPlan) SwarmDraw {
	if plan != nil && plan.Swarm != nil {
		return plan.Swarm
	}
	if cfg.Faults.Swarm {
		return drawSwarm(cfg, seed)
	}
	return nil
}
