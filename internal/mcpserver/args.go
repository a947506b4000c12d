package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxBudgetSeconds bounds seedfall_shrink's budget_seconds: an hour.
const maxBudgetSeconds = 3600

// argBound is a numeric argument's range and, when it is optional, its default. The
// tools' input schemas publish them (minimum, maximum, default), and a call outside the
// range gets an error naming the argument, its value and the range.
type argBound struct {
	tool, field string
	min, max    float64
	def         *float64 // nil: required, or no default
}

func ptr(f float64) *float64 { return &f }

// argBounds are the bounds of every numeric argument, by tool.
var argBounds = []argBound{
	{"seedfall_replay", "seed", 0, math.MaxUint64, nil},
	{"seedfall_replay", "trace_lines", 1, maxTraceLines, ptr(defaultTraceLines)},
	{"seedfall_shrink", "seed", 0, math.MaxUint64, nil},
	{"seedfall_shrink", "budget_seconds", 1, maxBudgetSeconds, ptr(300)},
	{"seedfall_cause", "seed", 0, math.MaxUint64, nil},
	{"seedfall_cause", "moments", 1, maxMoments, ptr(20)},
	{"seedfall_cause", "futures", 1, maxFutures, ptr(20)},
}

// inputSchema is the schema inferred from In with the bounds and defaults of tool's
// numeric arguments added.
func inputSchema[In any](tool string) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", tool, err)) // a broken type of ours
	}
	for _, b := range argBounds {
		if b.tool != tool {
			continue
		}
		p := s.Properties[b.field]
		if p == nil {
			panic(fmt.Sprintf("input schema of %s has no %s", tool, b.field))
		}
		p.Minimum = ptr(b.min)
		if b.max < math.MaxUint64 {
			p.Maximum = ptr(b.max)
		}
		if b.def != nil {
			p.Default = json.RawMessage(strconv.FormatFloat(*b.def, 'f', -1, 64))
		}
	}
	return s
}

// checkArgs checks tool's numeric arguments against their bounds, with an error a
// person or an agent can act on ("moments 0: want a whole number from 1 to 200; leave
// it out for the default 20"), before the SDK's schema validation would refuse them
// with a terser one.
func checkArgs(tool string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil // not an object: the SDK's validation says so
	}
	for _, b := range argBounds {
		v, ok := args[b.field]
		if b.tool != tool || !ok {
			continue
		}
		n, isNum := v.(float64)
		if isNum && n == math.Trunc(n) && n >= b.min && n <= b.max {
			continue
		}
		want := fmt.Sprintf("a whole number from %.0f to %.0f", b.min, b.max)
		if b.max >= math.MaxUint64 {
			want = fmt.Sprintf("a whole number from %.0f up", b.min)
		}
		if b.def != nil {
			want += fmt.Sprintf("; leave it out for the default %g", *b.def)
		}
		got, _ := json.Marshal(v)
		return fmt.Errorf("%s: %s %s: want %s", tool, b.field, got, want)
	}
	return nil
}

// checkArgsMiddleware answers a tools/call whose numeric arguments are out of range
// with checkArgs' error, as a tool error.
func checkArgsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil {
			if err := checkArgs(r.Params.Name, r.Params.Arguments); err != nil {
				res := &mcp.CallToolResult{}
				res.SetError(err)
				return res, nil
			}
		}
		return next(ctx, method, req)
	}
}
