package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/budget"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// transport names where a session lives.
type transport int

const (
	overStdio     transport = iota
	overHTTP                // streamable HTTP, protocol before 2026-07-28
	overSSE                 // the 2024-11-05 HTTP+SSE transport
	overStateless           // one streamable HTTP request of protocol 2026-07-28
)

// session is one client connection's protocol state: what initialize
// negotiated, its subscriptions, the requests it has in flight, and the
// requests this server has sent it. On stdio it lives as long as the
// process serves the pipe; over HTTP as long as its Mcp-Session-Id; for
// stateless requests, one request.
type session struct {
	srv   *Server
	id    string
	agent string
	// principal is who authenticated the session's requests, for the
	// audit line (zero on stdio).
	principal Principal
	via       transport
	// out carries notifications outside responses; nil for stateless
	// requests, which have none.
	out *outbox

	initialized atomic.Bool
	mu          sync.Mutex
	caps        clientCaps
	level       int // client log level index; -1 until logging/setLevel
	subs        map[string]bool
	inflight    map[string]*inflight
	asks        map[string]chan []byte // server→client requests awaiting answers
	nextAsk     atomic.Uint64
	roots       rootsCache
	budget      *budget.Session
	closed      bool
}

// inflight is a request being served, so notifications/cancelled can stop it.
type inflight struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool
}

// clientCaps are the optional client capabilities the kit uses.
type clientCaps struct {
	Roots *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"roots"`
	Sampling    json.RawMessage `json:"sampling"`
	Elicitation json.RawMessage `json:"elicitation"`
}

func (c clientCaps) has(method string) bool {
	switch method {
	case methodElicit:
		return c.Elicitation != nil
	case methodSample:
		return c.Sampling != nil
	case methodRoots:
		return c.Roots != nil
	}
	return false
}

const (
	methodElicit = "elicitation/create"
	methodSample = "sampling/createMessage"
	methodRoots  = "roots/list"
)

func (s *Server) newSession(id, agent string, via transport) *session {
	se := &session{srv: s, id: id, agent: agent, via: via, level: -1,
		subs: map[string]bool{}, inflight: map[string]*inflight{}, asks: map[string]chan []byte{}}
	if via != overStateless {
		se.budget = s.budget.Session()
		se.out = newOutbox(s.countDropped)
		s.notifier.listen(se.out, true)
	}
	return se
}

// close ends the session: its subscriptions, its requests in flight and the
// requests it was asked.
func (se *session) close() {
	se.mu.Lock()
	if se.closed {
		se.mu.Unlock()
		return
	}
	se.closed = true
	uris := make([]string, 0, len(se.subs))
	for u := range se.subs {
		uris = append(uris, u)
	}
	se.subs = map[string]bool{}
	for _, f := range se.inflight {
		f.cancel()
	}
	for k, ch := range se.asks {
		close(ch)
		delete(se.asks, k)
	}
	se.mu.Unlock()
	if se.out != nil {
		se.srv.notifier.drop(se.out, uris)
		se.out.close()
	}
}

// begin registers a request in flight; the returned func unregisters it.
func (se *session) begin(id []byte, cancel context.CancelFunc) (*inflight, func()) {
	f := &inflight{cancel: cancel}
	key := wire.IDKey(id)
	if key == "" {
		return f, func() {}
	}
	se.mu.Lock()
	if _, dup := se.inflight[key]; !dup {
		se.inflight[key] = f
	}
	se.mu.Unlock()
	return f, func() {
		se.mu.Lock()
		if se.inflight[key] == f {
			delete(se.inflight, key)
		}
		se.mu.Unlock()
	}
}

// cancel stops a request in flight; unknown ids are ignored, as the
// specification allows (the request may have finished).
func (se *session) cancel(id []byte) {
	se.mu.Lock()
	f := se.inflight[wire.IDKey(id)]
	se.mu.Unlock()
	if f != nil {
		f.cancelled.Store(true)
		f.cancel()
	}
}

// answer routes a client's response to the server request waiting for it.
// It reports whether one was waiting.
func (se *session) answer(m wire.Message, raw []byte) bool {
	key := wire.IDKey(m.ID)
	se.mu.Lock()
	ch := se.asks[key]
	delete(se.asks, key)
	se.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- raw
	return true
}

// errNoClient is returned when a request to the client cannot be delivered.
var errNoClient = errors.New("the client's connection is gone")

// ask sends a request to the client through send and waits for its answer.
// The answer's result is returned; a JSON-RPC error from the client is an
// error naming its message.
func (se *session) ask(ctx context.Context, send func([]byte) error, method string, params []byte) (json.RawMessage, error) {
	n := se.nextAsk.Add(1)
	id := []byte(`"srv-` + strconv.FormatUint(n, 10) + `"`)
	key := wire.IDKey(id)
	ch := make(chan []byte, 1)
	se.mu.Lock()
	if se.closed {
		se.mu.Unlock()
		return nil, errNoClient
	}
	se.asks[key] = ch
	se.mu.Unlock()
	defer func() {
		se.mu.Lock()
		delete(se.asks, key)
		se.mu.Unlock()
	}()
	if err := send(wire.AppendRequest(nil, id, method, params)); err != nil {
		return nil, err
	}
	select {
	case raw, ok := <-ch:
		if !ok {
			return nil, errNoClient
		}
		m, err := wire.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("client answer to %s: %w", method, err)
		}
		if m.Error != nil {
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(m.Error, &e)
			return nil, &clientError{method: method, code: e.Code, msg: e.Message}
		}
		return json.RawMessage(m.Result), nil
	case <-ctx.Done():
		// Tell the client to stop asking its user.
		_ = send(wire.AppendNotification(nil, "notifications/cancelled",
			append(append([]byte(`{"requestId":`), id...), `,"reason":"the server request was cancelled"}`...)))
		return nil, ctx.Err()
	}
}

// clientError is a JSON-RPC error the client answered a server request with.
type clientError struct {
	method string
	code   int
	msg    string
}

func (e *clientError) Error() string {
	return fmt.Sprintf("the client refused %s: %s (code %d)", e.method, wire.Truncate(e.msg, 200), e.code)
}

func (e *clientError) MCPError() *mcperr.Error {
	return mcperr.New(mcperr.Upstream, "%s", e.Error()).WithRetryable(false)
}

// subscribe records a legacy resources/subscribe.
func (se *session) subscribe(uri string) error {
	se.mu.Lock()
	if se.closed || se.subs[uri] {
		se.mu.Unlock()
		return nil
	}
	se.subs[uri] = true
	se.mu.Unlock()
	if err := se.srv.notifier.subscribe(se.out, uri); err != nil {
		se.mu.Lock()
		delete(se.subs, uri)
		se.mu.Unlock()
		return err
	}
	return nil
}

func (se *session) unsubscribe(uri string) {
	se.mu.Lock()
	had := se.subs[uri]
	delete(se.subs, uri)
	se.mu.Unlock()
	if had {
		se.srv.notifier.unsubscribe(se.out, uri)
	}
}

func (se *session) clientCaps() clientCaps {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.caps
}
