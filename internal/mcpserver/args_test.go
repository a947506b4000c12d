package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInputSchemasPublishBounds: the numeric arguments of replay, shrink and cause have
// their minimum, maximum and default in the published schema, and the server refuses a
// value outside them with an error naming the argument and the range (0 is not a silent
// "default", a negative seed is not "-1/1 is less than 0.000000").
func TestInputSchemasPublishBounds(t *testing.T) {
	s, err := New(Options{Dir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, st)
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]map[string]any{}
	for _, tool := range tools.Tools {
		data, _ := json.Marshal(tool.InputSchema)
		var sch struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		json.Unmarshal(data, &sch)
		schemas[tool.Name] = sch.Properties
	}
	for _, tc := range []struct {
		tool, field   string
		min, max, def any
	}{
		{"seedfall_cause", "moments", 1.0, 200.0, 20.0},
		{"seedfall_cause", "futures", 1.0, 200.0, 20.0},
		{"seedfall_replay", "trace_lines", 1.0, 5000.0, 60.0},
		{"seedfall_shrink", "budget_seconds", 1.0, 3600.0, 300.0},
		{"seedfall_cause", "seed", 0.0, nil, nil},
	} {
		p := schemas[tc.tool][tc.field]
		if p == nil || p["minimum"] != tc.min || p["maximum"] != tc.max || p["default"] != tc.def {
			t.Errorf("%s.%s schema %v: want minimum %v, maximum %v, default %v", tc.tool, tc.field, p, tc.min, tc.max, tc.def)
		}
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"seedfall_cause", map[string]any{"config": "x.json", "seed": 1, "moments": 0}, "seedfall_cause: moments 0: want a whole number from 1 to 200; leave it out for the default 20"},
		{"seedfall_cause", map[string]any{"config": "x.json", "seed": -1}, "seedfall_cause: seed -1: want a whole number from 0 up"},
		{"seedfall_replay", map[string]any{"config": "x.json", "seed": 1, "trace_lines": 1.5}, "seedfall_replay: trace_lines 1.5: want a whole number from 1 to 5000; leave it out for the default 60"},
		{"seedfall_shrink", map[string]any{"config": "x.json", "seed": 1, "budget_seconds": 0}, "seedfall_shrink: budget_seconds 0: want a whole number from 1 to 3600; leave it out for the default 300"},
		// In range: the call gets past the bounds to the config, which does not exist.
		{"seedfall_cause", map[string]any{"config": "x.json", "seed": 1, "moments": 5}, `config "x.json": no such file`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s %v: %v", tc.tool, tc.args, err)
		}
		var text string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: error %v %q, want %q", tc.tool, tc.args, res.IsError, text, tc.want)
		}
	}
}

// fakeConn is an mcp.Connection fed from a list of messages, recording what is written.
type fakeConn struct {
	mu      sync.Mutex
	in      []jsonrpc.Message
	written []jsonrpc.Message
}

func (c *fakeConn) Read(context.Context) (jsonrpc.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.in) == 0 {
		return nil, io.EOF
	}
	m := c.in[0]
	c.in = c.in[1:]
	return m, nil
}

func (c *fakeConn) Write(_ context.Context, m jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written = append(c.written, m)
	return nil
}

func (c *fakeConn) Close() error      { return nil }
func (c *fakeConn) SessionID() string { return "" }

type fakeTransport struct{ c *fakeConn }

func (t fakeTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// TestNoResponseToCancelledRequest: once the client has cancelled request 7, the
// server's answer to it is not sent; answers to other requests, and to request 7 when
// it was not cancelled, are.
func TestNoResponseToCancelledRequest(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		i, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	ctx := context.Background()
	fc := &fakeConn{in: []jsonrpc.Message{
		&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId": 7, "reason": "user"}`)},
		&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId": "s1"}`)},
	}}
	conn, err := noResponseToCancelled{fakeTransport{fc}}.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []any{7.0, 8.0, "s1", 7.0} {
		conn.Write(ctx, &jsonrpc.Response{ID: id(v), Result: json.RawMessage(`{}`)})
	}
	var got []any
	for _, m := range fc.written {
		got = append(got, m.(*jsonrpc.Response).ID.Raw())
	}
	// 7 and "s1" were cancelled: only 8 and the second answer to 7 (a new request that
	// reused the id after the first was dropped) go out.
	if len(got) != 2 || got[0] != int64(8) || got[1] != int64(7) {
		t.Errorf("written responses %v, want [8 7]", got)
	}
}
