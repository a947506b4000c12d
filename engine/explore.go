package engine

// What the explorer (internal/explore) needs from the engine: fault plans drawn from
// the config's rates for a window of virtual time, and the renumbering of faults pinned
// to disk ops after a plan was edited. Both are the functions the engine itself uses
// (a run without a plan, cause's re-randomized futures, shrink), so an edited plan means
// what the engine means by it.

// GeneratePlan draws the faults the config's rates give for virtual times in
// (from, horizon], from the plan stream of seed: the same draw as a run of that seed
// without a plan (from 0) or as cause's re-randomized future after moment from. It is a
// pure function of the config, seed and from. Under swarm it draws at the seed's own
// swarm draw (swarm.go), which the plan records.
func (s *Sim) GeneratePlan(seed uint64, from int64) *FaultPlan {
	return s.GeneratePlanSwarm(s.DrawSwarm(seed), seed, from)
}

// GeneratePlanSwarm is GeneratePlan at the rates of a given swarm draw (nil: the
// config's own): an explorer that keeps a run's swarm, or draws another, generates
// faults for it. The plan records the draw.
func (s *Sim) GeneratePlanSwarm(sw SwarmDraw, seed uint64, from int64) *FaultPlan {
	cfg := s.cfg
	if sw != nil {
		cfg = sw.apply(cfg)
	}
	var nodes []*node
	for i, nc := range s.cfg.AllNodes() {
		nodes = append(nodes, &node{idx: i, name: nc.Name, cfg: nc, workload: i == len(s.cfg.Nodes)})
	}
	p := generatePlan(cfg, seed, from, nodes)
	p.Swarm = sw
	return p
}

// RenumberFaults returns fs with the incarnation of each fault pinned to a disk op made
// consistent with the crashes before it: a node's k-th life comes after k-1 crashes
// that restart it. Shrink does this after dropping faults; an explorer after adding,
// dropping or moving them.
func RenumberFaults(fs []Fault) []Fault { return renumber(fs) }
