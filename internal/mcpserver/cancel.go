package mcpserver

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noResponseToCancelled wraps a transport so that a request the client cancelled gets
// no response, as MCP's cancellation rules ask ("receivers … SHOULD NOT send a response
// for the cancelled request"). The SDK cancels the handler's context and would then
// still write the handler's answer; the connection drops it.
type noResponseToCancelled struct{ mcp.Transport }

func (t noResponseToCancelled) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelAwareConn{Connection: c, cancelled: map[jsonrpc.ID]bool{}}, nil
}

type cancelAwareConn struct {
	mcp.Connection
	mu        sync.Mutex
	cancelled map[jsonrpc.ID]bool // requests the client cancelled and we have not answered
}

func (c *cancelAwareConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
				c.mu.Lock()
				c.cancelled[id] = true
				c.mu.Unlock()
			}
		}
	}
	return msg, err
}

func (c *cancelAwareConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		drop := c.cancelled[resp.ID]
		delete(c.cancelled, resp.ID)
		c.mu.Unlock()
		if drop {
			return nil
		}
	}
	return c.Connection.Write(ctx, msg)
}
