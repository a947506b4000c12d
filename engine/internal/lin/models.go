package lin

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	"github.com/anishathalye/porcupine"
)

// The operations of the built-in models, as the guest spells them in input.op.
const (
	opRead   = "read"
	opWrite  = "write"
	opGet    = "get"
	opPut    = "put"
	opAppend = "append"
)

// input is one decoded operation input. Which fields matter depends on the model.
type input struct {
	op    string
	key   string
	value string
	// part is the index of the operation's partition, set by Check for its step budget;
	// the models ignore it.
	part int
}

// output is one decoded operation output. unknown marks an operation that never
// returned, which every model step accepts.
type output struct {
	unknown bool
	found   bool
	value   string
}

// kvState is the state of one key of the kv model; the kv model is checked per key.
type kvState struct {
	found bool
	value string
}

// model is a built-in model: its Porcupine definition and the operations it accepts,
// with whether each needs a key, a value on input, and a meaningful output.
type model struct {
	porcupine porcupine.Model
	ops       map[string]opShape
}

// opShape says which fields of an operation a model reads.
type opShape struct {
	key, value, output bool
}

// models are the built-in models by the name a config uses.
var models = map[string]model{
	"register": {
		porcupine: porcupine.Model{
			Init:                      func() any { return "" },
			Step:                      registerStep,
			Hash:                      hashString,
			DescribeOperation:         describeOperation,
			DescribeState:             func(state any) string { return strconv.Quote(state.(string)) },
			DescribeOperationMetadata: describeMetadata,
		},
		ops: map[string]opShape{
			opRead:  {output: true},
			opWrite: {value: true},
		},
	},
	"kv": {
		porcupine: porcupine.Model{
			Partition:                 partitionByKey,
			Init:                      func() any { return kvState{} },
			Step:                      kvStep,
			Hash:                      func(state any) uint64 { return hashString(state.(kvState).value) },
			DescribeOperation:         describeOperation,
			DescribeState:             describeKVState,
			DescribeOperationMetadata: describeMetadata,
		},
		ops: map[string]opShape{
			opGet:    {key: true, output: true},
			opPut:    {key: true, value: true},
			opAppend: {key: true, value: true},
		},
	},
}

// Models returns the names of the built-in models, sorted.
func Models() []string {
	names := make([]string, 0, len(models))
	for name := range models {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// registerStep is the sequential specification of a string register.
func registerStep(state, in, out any) (bool, any) {
	st, i, o := state.(string), in.(input), out.(output)
	if i.op == opWrite {
		return true, i.value
	}
	return o.unknown || o.value == st, st
}

// kvStep is the sequential specification of one key of a string map. It is only
// correct per key, which partitionByKey guarantees.
func kvStep(state, in, out any) (bool, any) {
	st, i, o := state.(kvState), in.(input), out.(output)
	switch i.op {
	case opPut:
		return true, kvState{found: true, value: i.value}
	case opAppend:
		return true, kvState{found: true, value: st.value + i.value}
	default: // get
		if o.unknown {
			return true, st
		}
		return o.found == st.found && o.value == st.value, st
	}
}

// partitionByKey splits a kv history into one history per key, in key order so that
// partition numbers (and so reports) do not depend on map iteration.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(input).key
		byKey[k] = append(byKey[k], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([][]porcupine.Operation, len(keys))
	for i, k := range keys {
		parts[i] = byKey[k]
	}
	return parts
}

// hashString lets Porcupine's cache compare fewer states.
func hashString(s any) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s.(string)))
	return h.Sum64()
}

// describeOperation renders an operation for the visualization, for example
// get("k") -> "v", or put("k", "v") -> ? when its outcome is unknown.
func describeOperation(in, out any) string {
	i, o := in.(input), out.(output)
	var call string
	switch i.op {
	case opRead:
		call = "read()"
	case opWrite:
		call = fmt.Sprintf("write(%q)", i.value)
	case opGet:
		call = fmt.Sprintf("get(%q)", i.key)
	default: // put, append
		call = fmt.Sprintf("%s(%q, %q)", i.op, i.key, i.value)
	}
	switch {
	case o.unknown:
		return call + " -> ? (never returned)"
	case i.op == opRead:
		return fmt.Sprintf("%s -> %q", call, o.value)
	case i.op == opGet && !o.found:
		return call + " -> not found"
	case i.op == opGet:
		return fmt.Sprintf("%s -> %q", call, o.value)
	}
	return call
}

// describeKVState renders the state of one key.
func describeKVState(state any) string {
	st := state.(kvState)
	if !st.found {
		return "not found"
	}
	return strconv.Quote(st.value)
}

// describeMetadata names an operation by its index in the recorded history, which is
// how the trace and Report.Detail name it too.
func describeMetadata(meta any) string {
	return fmt.Sprintf("op %d", meta.(int))
}
