package explore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// Options tune an exploration.
type Options struct {
	// Runs is the run budget.
	Runs int
	// Seed seeds the explorer's own choices: the same Seed (and config) gives the same
	// sequence of runs, whatever the number of workers.
	Seed uint64
	// Batch is how many runs are derived at a time, from the corpus as it stood before
	// them, and run in parallel (default 4). It shapes the sequence, so it is part of
	// what makes an exploration reproducible; Workers is not.
	Batch int
	// Workers bounds the runs in flight (default Batch).
	Workers int
	// Fresh is the share of runs that are new seeds with their own generated faults
	// rather than mutations of the corpus (default 0.25). Until the corpus has an entry,
	// every run is fresh.
	Fresh float64
	// StopAtFailure ends the exploration after the batch of its first failing run.
	StopAtFailure bool
	// Run runs one seed with a plan (nil: the seed's own). It must keep the trace
	// (RunOptions.Trace): the features come from it.
	Run func(ctx context.Context, seed uint64, opt engine.RunOptions) *engine.Result
	// Sim gives the config's fault rates for the operators that draw new faults.
	Sim *engine.Sim
	// OnRun is called after each run, in sequence order.
	OnRun func(Run, *State)
}

// Run is one run of an exploration.
type Run struct {
	Index  int    `json:"index"` // 1-based position in the sequence
	Seed   uint64 `json:"seed"`
	Op     string `json:"op"`               // "fresh" or the operator's name
	Parent int    `json:"parent,omitempty"` // the corpus entry's run index
	// Plan is the plan the run was given (nil: the seed's own, generated).
	Plan   *engine.FaultPlan `json:"-"`
	Result *engine.Result    `json:"-"`
	// New is the number of features the run reached first.
	New int `json:"new_features"`
}

// State is the exploration so far.
type State struct {
	Corpus   []*Entry
	Features map[string]int // feature -> runs that reached it
	Runs     int
	Failed   int
	// FirstFailure is the index of the first failing run (0: none yet).
	FirstFailure int
	// OpStats counts, per operator, the runs it made and those that reached something new.
	OpStats   map[string]*OpStat
	corpusRun []int // run index of each corpus entry
}

// OpStat is one operator's record.
type OpStat struct {
	Runs int `json:"runs"`
	New  int `json:"new"`
	Fail int `json:"failed"`
}

// Explore runs the exploration and returns every run in sequence order.
func Explore(ctx context.Context, opt Options) ([]Run, *State, error) {
	if opt.Runs <= 0 {
		return nil, nil, fmt.Errorf("explore: the run budget must be positive")
	}
	if opt.Run == nil {
		return nil, nil, fmt.Errorf("explore: no run function")
	}
	batch := opt.Batch
	if batch <= 0 {
		batch = 4
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = batch
	}
	fresh := opt.Fresh
	if fresh <= 0 {
		fresh = 0.25
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5eedfa11e8b10e))
	env := &Env{}
	st := &State{Features: map[string]int{}, OpStats: map[string]*OpStat{}}
	env.Seen = func(f string) bool { return st.Features[f] > 0 }
	if opt.Sim != nil {
		sim := opt.Sim
		env.Generate = func(seed uint64, from int64) []engine.Fault { return engineapi.GeneratePlan(sim, seed, from).Faults }
		if sim.Config().Faults.Swarm {
			env.DrawSwarm = func(seed uint64) engine.SwarmDraw { return engineapi.DrawSwarm(sim, seed) }
			env.GenerateSwarm = func(sw engine.SwarmDraw, seed uint64, from int64) []engine.Fault {
				return engineapi.GeneratePlanSwarm(sim, sw, seed, from).Faults
			}
		}
		env.RestartNS = int64(sim.Config().Faults.RestartDelay)
		env.DeviceKinds, env.DeviceAims = DeviceKinds(sim.Config())
	}
	var runs []Run
	for len(runs) < opt.Runs && ctx.Err() == nil {
		n := min(batch, opt.Runs-len(runs))
		cands := make([]Run, n)
		for i := range cands {
			cands[i] = derive(rng, st, env, fresh)
			cands[i].Index = len(runs) + i + 1
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, workers)
		for i := range cands {
			wg.Add(1)
			sem <- struct{}{}
			go func(c *Run) {
				defer wg.Done()
				defer func() { <-sem }()
				c.Result = opt.Run(ctx, c.Seed, engine.RunOptions{Plan: c.Plan, Trace: true})
			}(&cands[i])
		}
		wg.Wait()
		if ctx.Err() != nil {
			break
		}
		stop := false
		for i := range cands {
			c := &cands[i]
			st.add(c)
			c.Result.Trace = nil // analysed: the features are what is kept
			runs = append(runs, *c)
			if opt.OnRun != nil {
				opt.OnRun(*c, st)
			}
			if c.Result.Failed() && opt.StopAtFailure {
				stop = true
			}
		}
		if stop {
			break
		}
	}
	return runs, st, ctx.Err()
}

// derive draws the next run: a fresh seed, or an operator applied to a corpus entry.
func derive(rng *rand.Rand, st *State, env *Env, fresh float64) Run {
	if len(st.Corpus) == 0 || rng.Float64() < fresh {
		return Run{Seed: freshSeed(rng), Op: "fresh"}
	}
	// Up to a few tries: an operator may not apply to the entry drawn.
	for try := 0; try < 8; try++ {
		ei := pickEntry(rng, st)
		e := st.Corpus[ei]
		ops := env.ops()
		op := ops[pickOp(rng, st, ops)]
		var seed uint64
		var faults []engine.Fault
		var ok bool
		sw := e.Swarm
		if op.ApplySwarm != nil {
			seed, faults, sw, ok = op.ApplySwarm(rng, e, env)
		} else {
			seed, faults, ok = op.Apply(rng, e, env)
		}
		if !ok {
			continue
		}
		if faults == nil {
			faults = []engine.Fault{}
		}
		return Run{Seed: seed, Op: op.Name, Parent: st.corpusRun[ei], Plan: &engine.FaultPlan{Seed: seed, Faults: faults, Swarm: sw}}
	}
	return Run{Seed: freshSeed(rng), Op: "fresh"}
}

// pickOp draws an operator, weighted by its record so far: the share of its runs that
// reached something new, times its prior (an operator that keeps finding new paths is
// used more, one that never does still gets a tenth of its prior share).
func pickOp(rng *rand.Rand, st *State, ops []Op) int {
	w := make([]float64, len(ops))
	total := 0.0
	for i, op := range ops {
		v := 1.0
		if s := st.OpStats[op.Name]; s != nil {
			v = float64(1+s.New) / float64(1+s.Runs)
		}
		w[i] = op.Prior * max(v, 0.1)
		total += w[i]
	}
	x := rng.Float64() * total
	for i, v := range w {
		if x < v {
			return i
		}
		x -= v
	}
	return len(w) - 1
}

// pickEntry draws a corpus entry, weighted by the rarity of what it reached: the sum,
// over its features, of one over the number of runs that reached each. An entry that
// alone reached a torn-tail recovery outweighs many that only reached the common paths.
func pickEntry(rng *rand.Rand, st *State) int {
	w := make([]float64, len(st.Corpus))
	total := 0.0
	for i, e := range st.Corpus {
		s := 0.0
		for _, f := range e.Features {
			s += 1 / float64(st.Features[f])
		}
		w[i] = s
		total += s
	}
	x := rng.Float64() * total
	for i, v := range w {
		if x < v {
			return i
		}
		x -= v
	}
	return len(w) - 1
}

// add records a finished run: its features, and a corpus entry when it reached
// something new (a failing run is reported, not mutated further).
func (st *State) add(c *Run) {
	st.Runs++
	r := c.Result
	a := Analyze(r)
	for _, f := range a.Features {
		if st.Features[f] == 0 {
			c.New++
		}
		st.Features[f]++
	}
	os := st.OpStats[c.Op]
	if os == nil {
		os = &OpStat{}
		st.OpStats[c.Op] = os
	}
	os.Runs++
	if c.New > 0 {
		os.New++
	}
	if r.Failed() {
		st.Failed++
		os.Fail++
		if st.FirstFailure == 0 {
			st.FirstFailure = c.Index
		}
		return
	}
	if c.New == 0 || r.Verdict == engine.VerdictError {
		return
	}
	st.Corpus = append(st.Corpus, &Entry{Seed: c.Seed, Faults: r.Faults, Swarm: r.Swarm, EndNS: r.EndNS, Ops: a.Ops, New: c.New, Features: a.Features})
	st.corpusRun = append(st.corpusRun, c.Index)
}

// OpNames lists the operators with a record, sorted.
func (st *State) OpNames() []string {
	var out []string
	for k := range st.OpStats {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
