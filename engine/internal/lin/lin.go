package lin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is one operation of a recorded history, as the host recorded it for a guest.
type Op struct {
	// Client is the guest's client number, zero or more; it is the row of the
	// operation in the visualization.
	Client int
	// Input is the JSON the guest passed to sim.Call.
	Input json.RawMessage
	// Output is the JSON the guest passed to Op.Return; it is ignored when Returned
	// is false.
	Output json.RawMessage
	// CallNS and ReturnNS are the virtual times of the call and the return.
	// ReturnNS is ignored when Returned is false.
	CallNS, ReturnNS int64
	// Returned is false for an operation that never returned, whose outcome is
	// unknown.
	Returned bool
}

// Outcome is the verdict of a linearizability check.
type Outcome string

// The outcomes of a check.
const (
	// Ok means the history is linearizable.
	Ok Outcome = "ok"
	// Illegal means the history is not linearizable: a bug was found.
	Illegal Outcome = "illegal"
	// Unknown means the checker ran out of time before deciding.
	Unknown Outcome = "unknown"
)

// Report is the result of [Check].
type Report struct {
	// Outcome is the verdict.
	Outcome Outcome
	// Model is the model the history was checked against.
	Model string
	// Ops is the number of operations in the history.
	Ops int
	// Partitions is the number of independently checked sub-histories: one for
	// register, one per key for kv.
	Partitions int
	// Detail says what was found, for people: for Illegal, which key (for kv) has no
	// linearization and which operations it involves; for Unknown, the budget that ran
	// out. Empty for Ok.
	Detail string
	// HostTimeout is set for Unknown when the wall-clock timeout ran out, rather than the
	// step budget: that outcome depends on the speed of the host, not on the history.
	HostTimeout bool
}

// Budget bounds a check. Steps is deterministic: it counts the model steps the search of
// each partition may take, so whether a history comes out Unknown depends on the history
// alone. Timeout is wall-clock time, a safety net whose outcome depends on the host.
// Zero means no limit for either.
type Budget struct {
	Steps   int64
	Timeout time.Duration
}

// maxDetailOps bounds how many operation indices Report.Detail lists.
const maxDetailOps = 10

// Check decides whether ops is linearizable under the named model. A timeout of zero
// or less means no limit. The LinearizationInfo is for [Visualize].
//
// The error is non-nil only when the model name is unknown or an operation does not
// fit the model; a history that is not linearizable is a Report with Outcome Illegal.
func Check(model string, ops []Op, timeout time.Duration) (Report, porcupine.LinearizationInfo, error) {
	return CheckBudget(model, ops, Budget{Timeout: timeout})
}

// CheckBudget is [Check] with a step budget besides the wall-clock timeout.
func CheckBudget(model string, ops []Op, b Budget) (Report, porcupine.LinearizationInfo, error) {
	m, history, err := decode(model, ops)
	if err != nil {
		return Report{}, porcupine.LinearizationInfo{}, err
	}
	rep := Report{Outcome: Ok, Model: model, Ops: len(ops)}
	if len(history) == 0 {
		return rep, porcupine.LinearizationInfo{}, nil
	}
	// Partition once, here, and tag each operation's input with its partition, so that
	// the step budget is counted per partition: each partition is searched by one
	// goroutine in a fixed order, so its count of steps is deterministic.
	parts := [][]porcupine.Operation{history}
	if m.porcupine.Partition != nil {
		parts = m.porcupine.Partition(history)
	}
	for p, part := range parts {
		tagged := make([]porcupine.Operation, len(part))
		for k, op := range part {
			in := op.Input.(input)
			in.part = p
			op.Input = in
			tagged[k] = op
		}
		parts[p] = tagged
	}
	rep.Partitions = len(parts)
	steps := make([]int64, len(parts))
	exhausted := make([]bool, len(parts))
	pm := m.porcupine
	step := pm.Step
	pm.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	pm.Step = func(state, in, out any) (bool, any) {
		if b.Steps > 0 {
			p := in.(input).part
			if steps[p] >= b.Steps {
				// Out of budget: every further step fails, so the search unwinds at once.
				exhausted[p] = true
				return false, state
			}
			steps[p]++
		}
		return step(state, in, out)
	}

	res, info := porcupine.CheckOperationsVerbose(pm, history, b.Timeout)
	switch res {
	case porcupine.Ok:
		return rep, info, nil
	case porcupine.Unknown:
		rep.Outcome = Unknown
		rep.HostTimeout = true
		rep.Detail = fmt.Sprintf("checker gave up after the %s timeout; raise linearizability.timeout or record a shorter history", b.Timeout)
		return rep, info, nil
	}
	// Illegal: every partition was searched to its end or to its budget (no wall-clock
	// cut, and the verbose check waits for every partition). A partition without a
	// complete linearization whose budget held is proven illegal.
	p := firstIllegal(parts, info, exhausted)
	if p < 0 {
		rep.Outcome = Unknown
		rep.Detail = fmt.Sprintf("checker gave up after %d steps of the search; raise linearizability.steps or record a shorter history", b.Steps)
		return rep, info, nil
	}
	rep.Outcome = Illegal
	rep.Detail = describeIllegal(model, parts[p])
	return rep, info, nil
}

// firstIllegal returns the index of the first partition proven to have no
// linearization: Porcupine found no complete linearization of it and its step budget
// did not run out. It returns -1 if no partition is proven illegal (they ran out of
// budget).
func firstIllegal(parts [][]porcupine.Operation, info porcupine.LinearizationInfo, exhausted []bool) int {
	partials := info.PartialLinearizations()
	candidates := 0
	for p, part := range parts {
		complete := false
		if p < len(partials) {
			for _, lin := range partials[p] {
				if len(lin) == len(part) {
					complete = true
					break
				}
			}
		}
		if complete {
			continue
		}
		candidates++
		if !exhausted[p] {
			return p
		}
	}
	if candidates == 0 {
		// Porcupine said illegal; trust it over our reading of its info.
		for p := range parts {
			if !exhausted[p] {
				return p
			}
		}
	}
	return -1
}

// describeIllegal is Report.Detail for an illegal partition.
func describeIllegal(model string, part []porcupine.Operation) string {
	var b strings.Builder
	if model == "kv" {
		fmt.Fprintf(&b, "key %q: ", part[0].Input.(input).key)
	}
	fmt.Fprintf(&b, "no linearization of its %d operations (ops ", len(part))
	for i, op := range part {
		if i == maxDetailOps {
			fmt.Fprintf(&b, ", … %d more", len(part)-maxDetailOps)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", op.Metadata.(int))
	}
	b.WriteString(")")
	return b.String()
}

// Visualize writes Porcupine's HTML visualization of a checked history to path. info
// must come from [Check] with the same model and ops; ops is decoded again so that a
// mismatched model or history is an error rather than a misleading picture.
func Visualize(path string, model string, ops []Op, info porcupine.LinearizationInfo) error {
	m, _, err := decode(model, ops)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write linearizability visualization: %w", err)
	}
	if err := porcupine.Visualize(m.porcupine, info, f); err != nil {
		f.Close()
		return fmt.Errorf("write linearizability visualization %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write linearizability visualization: %w", err)
	}
	return nil
}

// decode looks up the model and turns ops into Porcupine operations, with each
// operation's index in ops as its metadata.
func decode(name string, ops []Op) (model, []porcupine.Operation, error) {
	m, ok := models[name]
	if !ok {
		return model{}, nil, fmt.Errorf("linearizability model %q: not a model (want one of %s)", name, strings.Join(Models(), ", "))
	}
	history := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		in, out, err := decodeOp(name, m, op)
		if err != nil {
			return model{}, nil, fmt.Errorf("history op %d (client %d): %w", i, op.Client, err)
		}
		ret := op.ReturnNS
		if !op.Returned {
			ret = math.MaxInt64
		}
		history[i] = porcupine.Operation{
			ClientId: op.Client,
			Input:    in,
			Call:     op.CallNS,
			Output:   out,
			Return:   ret,
			Metadata: i,
		}
	}
	return m, history, nil
}

// wireInput and wireOutput are the JSON shapes of inputs and outputs; pointers tell an
// absent field from an empty one.
type wireInput struct {
	Op    *string `json:"op"`
	Key   *string `json:"key"`
	Value *string `json:"value"`
}

type wireOutput struct {
	Value *string `json:"value"`
	Found *bool   `json:"found"`
}

// decodeOp checks one operation against the model and decodes it.
func decodeOp(name string, m model, op Op) (input, output, error) {
	if op.Client < 0 {
		return input{}, output{}, fmt.Errorf("client: %d is negative (clients are numbered from 0)", op.Client)
	}
	if op.Returned && op.ReturnNS < op.CallNS {
		return input{}, output{}, fmt.Errorf("returnNS: %d is before callNS %d", op.ReturnNS, op.CallNS)
	}
	var wi wireInput
	if err := strictUnmarshal(op.Input, &wi); err != nil {
		return input{}, output{}, fmt.Errorf("input: %w", err)
	}
	if wi.Op == nil {
		return input{}, output{}, fmt.Errorf(`input.op: missing (%s ops are %s)`, name, opNames(m))
	}
	shape, ok := m.ops[*wi.Op]
	if !ok {
		return input{}, output{}, fmt.Errorf("input.op: %q is not a %s op (want one of %s)", *wi.Op, name, opNames(m))
	}
	in := input{op: *wi.Op}
	if shape.key {
		if wi.Key == nil {
			return input{}, output{}, fmt.Errorf("input.key: missing (%s needs a key)", in.op)
		}
		in.key = *wi.Key
	}
	if shape.value {
		if wi.Value == nil {
			return input{}, output{}, fmt.Errorf("input.value: missing (%s needs a value)", in.op)
		}
		in.value = *wi.Value
	}
	if !op.Returned {
		return in, output{unknown: true}, nil
	}
	if !shape.output {
		// The output of a write carries nothing the model checks; accept anything
		// a guest might have returned, including nothing.
		return in, output{}, nil
	}
	if len(bytes.TrimSpace(op.Output)) == 0 {
		return input{}, output{}, fmt.Errorf("output: empty, but the %s returned (record {\"value\":...} or leave it unreturned)", in.op)
	}
	var wo wireOutput
	if err := strictUnmarshal(op.Output, &wo); err != nil {
		return input{}, output{}, fmt.Errorf("output: %w", err)
	}
	out := output{}
	if wo.Value != nil {
		out.value = *wo.Value
	}
	if wo.Found != nil {
		out.found = *wo.Found
	}
	if name == "kv" && !out.found && out.value != "" {
		return input{}, output{}, fmt.Errorf("output.found: false (or absent), but output.value is %q; a get that found the key must say \"found\":true", out.value)
	}
	if name == "register" && wo.Found != nil {
		return input{}, output{}, errors.New(`output.found: the register model has no "found"; a read returns {"value":...}`)
	}
	return in, out, nil
}

// strictUnmarshal decodes one JSON object into v, rejecting unknown fields and
// trailing data, with messages that name the field.
func strictUnmarshal(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty, want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return fmt.Errorf("got a JSON %s, want an object", te.Value)
			}
			return fmt.Errorf("field %q: got a JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: data after the object")
	}
	return nil
}

// opNames lists a model's operations, sorted.
func opNames(m model) string {
	names := make([]string, 0, len(m.ops))
	for n := range m.ops {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
