package kit

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// pendingRequests tracks the requests a transport is serving, per session,
// so that a request the client cancels gets no response. "Receivers of
// cancellation notifications SHOULD: stop processing the cancelled request,
// free associated resources, not send a response for the cancelled request"
// (MCP 2025-11-25, basic/utilities/cancellation). mcp-go cancels the
// handler's context but still returns a result, and the official TypeScript
// SDK reports such a late answer as an error ("Received a response for an
// unknown message ID"). The transports therefore mark a request cancelled
// before mcp-go sees the notification, and drop its answer.
type pendingRequests struct {
	mu sync.Mutex
	m  map[pendingKey]*atomic.Bool
}

type pendingKey struct{ session, id string }

func newPendingRequests() *pendingRequests {
	return &pendingRequests{m: map[pendingKey]*atomic.Bool{}}
}

// begin registers a request being served and returns its flag, which turns
// true when the client cancels the request. A request whose id cannot be
// keyed gets a flag nothing sets. A second request with an id already in
// flight (a client bug) shares the first one's flag.
func (p *pendingRequests) begin(session string, id json.RawMessage) *atomic.Bool {
	k, ok := requestIDKey(id)
	if !ok {
		return new(atomic.Bool)
	}
	key := pendingKey{session, k}
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.m[key]; ok {
		return f
	}
	f := new(atomic.Bool)
	p.m[key] = f
	return f
}

// done forgets a request once it is answered (or its answer dropped) and
// reports whether the client cancelled it.
func (p *pendingRequests) done(session string, id json.RawMessage) bool {
	k, ok := requestIDKey(id)
	if !ok {
		return false
	}
	key := pendingKey{session, k}
	p.mu.Lock()
	f := p.m[key]
	delete(p.m, key)
	p.mu.Unlock()
	return f != nil && f.Load()
}

// cancel marks a request in flight as cancelled. Unknown or finished
// requests are ignored, as the specification allows.
func (p *pendingRequests) cancel(session string, id json.RawMessage) {
	k, ok := requestIDKey(id)
	if !ok {
		return
	}
	p.mu.Lock()
	f := p.m[pendingKey{session, k}]
	p.mu.Unlock()
	if f != nil {
		f.Store(true)
	}
}

// dropSession forgets every request of a session that has ended.
func (p *pendingRequests) dropSession(session string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.m {
		if k.session == session {
			delete(p.m, k)
		}
	}
}

// requestIDKey canonicalises a JSON-RPC id, a string or a number, so that
// the id of a request and the requestId of its cancellation match however
// each is spelt ("7" the string and 7 the number stay distinct).
func requestIDKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", false
	}
	return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
}

// cancelledRequestID returns the requestId of a notifications/cancelled
// message.
func cancelledRequestID(msg []byte) json.RawMessage {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil {
		return nil
	}
	return n.Params.RequestID
}

// isCancelNotification reports whether method is notifications/cancelled.
func isCancelNotification(method string) bool {
	return method == string(mcp.MethodNotificationCancelled)
}
