package mcpserver

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress sends a call's progress notifications, when its client asked for them with
// a progress token. Notifications are rate-limited and strictly increasing, as the
// protocol requires.
type progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any

	mu     sync.Mutex
	last   float64
	lastAt time.Time
}

// progressEvery bounds how often a call notifies: a sweep finishes many seeds a second.
const progressEvery = 250 * time.Millisecond

func newProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	p := &progress{ctx: ctx, last: -1}
	if req != nil && req.Params != nil && req.Session != nil {
		if tok := req.Params.GetProgressToken(); tok != nil {
			p.ss, p.token = req.Session, tok
		}
	}
	return p
}

// report notifies done of total (0: unknown) with a message. It drops a notification
// that would not advance the progress, or that comes too soon after the last one,
// unless it completes the total.
func (p *progress) report(done, total float64, msg string) {
	if p.ss == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done <= p.last || (time.Since(p.lastAt) < progressEvery && (total == 0 || done < total) && p.last >= 0) {
		return
	}
	p.last, p.lastAt = done, time.Now()
	// Best effort: a client that went away is noticed through ctx.
	_ = p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: done, Total: total, Message: msg})
}
