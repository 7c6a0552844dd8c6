package kit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcp-fleet/mcp-fleet/shared/acl"
)

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Addr is host:port to listen on.
	Addr string
	// AuthToken is the single bearer token of a server without a policy.
	AuthToken string
	// NoAuth serves without a token; allowed only on a loopback address.
	NoAuth bool
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed to
	// call; loopback origins are allowed when listening on loopback.
	AllowedOrigins []string
	// AllowedHosts are extra Host header values accepted (besides loopback
	// names on a loopback listener, and the listen host itself).
	AllowedHosts []string
	MaxSessions  int
	SessionIdle  time.Duration
	// MaxBodyBytes caps one POST body.
	MaxBodyBytes int64
	// SSE also serves the 2024-11-05 HTTP+SSE transport at /sse and /message.
	SSE bool
}

// httpFrontend is the HTTP side of a server: auth, origin/host checks,
// session bookkeeping, health and metrics around mcp-go's transport.
type httpFrontend struct {
	s        *Server
	o        HTTPOptions
	loopback bool
	listen   string
	sessions *sessions
	// pending lets notifications/cancelled suppress a request's answer.
	pending *pendingRequests
	stream  *server.StreamableHTTPServer
	sse     *server.SSEServer
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkHTTPOptions refuses configurations that would expose tools without
// authentication.
func (s *Server) checkHTTPOptions(o HTTPOptions) error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", o.Addr, err)
	}
	hasTokens := o.AuthToken != "" || (s.opts.Policy != nil && s.opts.Policy.HasTokens())
	if s.opts.Policy != nil && o.AuthToken != "" {
		return errors.New("MCP_AUTH_TOKEN is for a server without a policy; with an ACL policy, bind tokens to agents (MCP_AGENT_TOKENS or token_sha256 in the policy)")
	}
	if o.NoAuth {
		if !isLoopbackHost(host) {
			return fmt.Errorf("--insecure-no-auth is only allowed on a loopback address, not %q", host)
		}
		if s.opts.Policy != nil {
			return errors.New("--insecure-no-auth cannot be combined with an ACL policy: agents are identified by their tokens")
		}
		return nil
	}
	if !hasTokens {
		return errors.New("HTTP transport needs a bearer token: set MCP_AUTH_TOKEN (or MCP_AGENT_TOKENS with an ACL policy); --insecure-no-auth is accepted on loopback only")
	}
	return nil
}

// HTTPHandler returns the full HTTP handler: /mcp (streamable HTTP),
// /healthz, /metrics, and /sse + /message when enabled.
func (s *Server) HTTPHandler(o HTTPOptions) (http.Handler, func(context.Context) error, error) {
	if err := s.checkHTTPOptions(o); err != nil {
		return nil, nil, err
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 16 << 20
	}
	host, _, _ := net.SplitHostPort(o.Addr)
	f := &httpFrontend{s: s, o: o, loopback: isLoopbackHost(host) || host == "", listen: host,
		sessions: newSessions(o.MaxSessions, o.SessionIdle), pending: newPendingRequests()}
	release := func(id string) {
		_, _ = f.sessions.terminate(id, "", true)
		f.pending.dropSession(id)
	}
	s.unregistered.Store(&release)
	ctxFunc := func(ctx context.Context, _ *http.Request) context.Context { return ctx }
	opts := []server.StreamableHTTPOption{
		server.WithSessionIdManagerResolver(f.sessions),
		server.WithHTTPContextFunc(ctxFunc),
		// Host/Origin checks are done here for every route, not only on
		// loopback connections.
		server.WithDisableLocalhostProtection(true),
		// mcp-go's own transport logs join ours (JSON, redacted, stderr).
		server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(zlWriter{l: s.log}, nil))),
	}
	if o.SessionIdle > 0 {
		opts = append(opts, server.WithSessionIdleTTL(o.SessionIdle))
	}
	f.stream = server.NewStreamableHTTPServer(s.mcp, opts...)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", f.health)
	mux.Handle("/metrics", f.guard(s.metrics.Handler()))
	mux.Handle("/mcp", f.guard(http.HandlerFunc(f.mcp)))
	if o.SSE {
		f.sse = server.NewSSEServer(s.mcp,
			server.WithSSEContextFunc(ctxFunc),
			server.WithSSEDisableLocalhostProtection(true),
			server.WithSessionIDGenerator(f.sseSessionID))
		mux.Handle("/sse", f.guard(f.sseStream(f.sse.SSEHandler())))
		mux.Handle("/message", f.guard(http.HandlerFunc(f.sseMessage)))
	}
	shutdown := func(ctx context.Context) error {
		err := f.stream.Shutdown(ctx)
		if f.sse != nil {
			err = errors.Join(err, f.sse.Shutdown(ctx))
		}
		return err
	}
	return mux, shutdown, nil
}

func (f *httpFrontend) health(w http.ResponseWriter, r *http.Request) {
	if !f.hostAllowed(r.Host) {
		http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status": "ok", "server": f.s.info.Name, "version": f.s.info.Version,
		"tools": len(f.s.tools), "sessions": f.sessions.count(),
	})
}

// guard applies, in order: Host and Origin checks (DNS rebinding), bearer
// authentication, and puts the caller's agent in the request context.
func (f *httpFrontend) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.hostAllowed(r.Host) {
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !f.originAllowed(origin) {
			http.Error(w, "Forbidden: invalid Origin header", http.StatusForbidden)
			return
		}
		agent, ok := f.authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-fleet"`)
			writeJSONRPCError(w, http.StatusUnauthorized, -32001, "unauthorized: a valid bearer token is required")
			return
		}
		next.ServeHTTP(w, r.WithContext(WithAgent(r.Context(), agent)))
	})
}

func (f *httpFrontend) authenticate(r *http.Request) (string, bool) {
	if f.o.NoAuth {
		return "", true
	}
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	if p := f.s.opts.Policy; p != nil {
		return p.AgentForToken(tok)
	}
	return "", acl.TokenEqual(tok, f.o.AuthToken)
}

func (f *httpFrontend) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if f.loopback {
		if isLoopbackHost(h) {
			return true
		}
	} else if strings.EqualFold(h, f.listen) {
		return true
	} else if f.listen == "0.0.0.0" || f.listen == "::" {
		// A server deliberately exposed on all interfaces is reached by
		// names we cannot know; DNS rebinding targets loopback listeners.
		return len(f.o.AllowedHosts) == 0 || contains(f.o.AllowedHosts, h)
	}
	return contains(f.o.AllowedHosts, h)
}

func (f *httpFrontend) originAllowed(origin string) bool {
	for _, o := range f.o.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return f.loopback && isLoopbackHost(u.Hostname())
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// mcp caps the body, enforces the session limit on initialize, requires a
// session where mcp-go would answer 404 instead of 400, tracks requests so
// that a cancelled one gets no answer, then hands over to mcp-go.
func (f *httpFrontend) mcp(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	agent := AgentFrom(r.Context())
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.o.MaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeJSONRPCError(w, http.StatusRequestEntityTooLarge, -32600,
					fmt.Sprintf("request body larger than %d bytes", f.o.MaxBodyBytes))
			} else {
				writeJSONRPCError(w, http.StatusBadRequest, -32700, "could not read the request body")
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		head, parsed := parseHead(body)
		// mcp-go mints a new session for every initialize, whatever
		// Mcp-Session-Id it carries, so the header must not skip the cap.
		if head.Method == string(mcp.MethodInitialize) {
			// The slot is held from here until the session is generated, so
			// concurrent initializes cannot overshoot the limit.
			res := f.sessions.reserve()
			if res == nil {
				writeJSONRPCError(w, http.StatusServiceUnavailable, -32000,
					fmt.Sprintf("too many sessions (limit %d); close one or retry later", f.o.MaxSessions))
				return
			}
			defer f.sessions.release(res)
			r = r.WithContext(context.WithValue(r.Context(), reservationKey, res))
		}
		// Protocol 2026-07-28 has no sessions; mcp-go serves it as it is.
		if parsed && head.Method != "" && head.Method != string(mcp.MethodInitialize) && !head.modern(r.Header) {
			if sid == "" {
				// "Servers that require a session ID SHOULD respond to requests
				// without an MCP-Session-Id header (other than initialization)
				// with HTTP 400 Bad Request"; mcp-go says 404, which tells a
				// client its session expired.
				writeJSONRPCError(w, http.StatusBadRequest, -32600, "Mcp-Session-Id header is required: send initialize first")
				return
			}
			if terminated, err := f.sessions.validate(sid, agent, false); err == nil && !terminated {
				switch {
				case isCancelNotification(head.Method):
					f.pending.cancel(sid, head.Params.RequestID)
				case head.isRequest():
					cancelled := f.pending.begin(sid, head.ID)
					defer f.pending.done(sid, head.ID)
					w = &unlessCancelled{passThrough: passThrough{w}, cancelled: cancelled}
				}
			}
		}
	}
	// A DELETE names a session: none is a bad request, and an unknown,
	// terminated or foreign one is 404 as for any other request (mcp-go
	// answers 200 for a session it does not know).
	if r.Method == http.MethodDelete && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) &&
		!f.ownSession(w, sid, agent, "Mcp-Session-Id header is required") {
		return
	}
	// mcp-go does not validate the session of a standalone GET stream, and
	// mints one when none is given: a GET could then listen on another
	// agent's session, or open sessions past the cap without initialize.
	// Clients of protocol 2026-07-28 have no GET stream; mcp-go answers them.
	if r.Method == http.MethodGet && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) &&
		!f.ownSession(w, sid, agent, "Mcp-Session-Id header is required: send initialize first") {
		return
	}
	f.stream.ServeHTTP(w, r)
}

// ownSession answers 400 when no session id is given and 404 when it is
// unknown, expired, terminated or another agent's, and reports whether the
// request may go on.
func (f *httpFrontend) ownSession(w http.ResponseWriter, sid, agent, missing string) bool {
	if sid == "" {
		writeJSONRPCError(w, http.StatusBadRequest, -32600, missing)
		return false
	}
	if terminated, err := f.sessions.validate(sid, agent, false); err != nil || terminated {
		writeJSONRPCError(w, http.StatusNotFound, -32600, "unknown, expired or terminated session")
		return false
	}
	return true
}

// msgHead is what the HTTP side reads of a message before mcp-go does.
type msgHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
		Meta      *mcp.Meta       `json:"_meta"`
	} `json:"params"`
}

// parseHead reads a single JSON-RPC message's head; a batch or invalid
// JSON is left to mcp-go.
func parseHead(body []byte) (msgHead, bool) {
	var h msgHead
	return h, json.Unmarshal(body, &h) == nil
}

func (h *msgHead) isRequest() bool {
	return h.Method != "" && len(h.ID) > 0 && string(h.ID) != "null"
}

// modern: the message uses protocol 2026-07-28 or later, as mcp-go decides.
func (h *msgHead) modern(hdr http.Header) bool {
	return mcp.IsModernProtocol(hdr.Get(mcp.HeaderProtocolVersion)) ||
		(h.Params.Meta != nil && mcp.IsModernProtocol(h.Params.Meta.ProtocolVersion()))
}

// unlessCancelled carries the answer to one POSTed request unless the client
// cancels the request first. A request must be answered with a JSON object
// or an event stream, so a cancelled one whose answer has not started gets
// an event stream that ends without it; mcp-go's writes of the answer (and
// of later notifications) are dropped. mcp-go serialises its writes.
type unlessCancelled struct {
	passThrough
	cancelled *atomic.Bool
	status    int // 0 until the header is written
}

func (u *unlessCancelled) WriteHeader(code int) {
	if u.status == 0 && code == http.StatusOK && u.cancelled.Load() {
		h := u.Header()
		if !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			h.Del("Content-Length")
		}
	}
	if u.status == 0 {
		u.status = code
	}
	u.ResponseWriter.WriteHeader(code)
}

func (u *unlessCancelled) Write(p []byte) (int, error) {
	if u.status == 0 {
		u.WriteHeader(http.StatusOK)
	}
	if u.status == http.StatusOK && u.cancelled.Load() {
		return len(p), nil
	}
	return u.ResponseWriter.Write(p)
}

// passThrough is the part of a wrapping ResponseWriter that only passes
// on: Flush keeps mcp-go's streaming (SSE) working, Unwrap lets
// http.ResponseController reach the connection (write deadlines).
type passThrough struct{ http.ResponseWriter }

func (p passThrough) Flush() {
	if fl, ok := p.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (p passThrough) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// sseSessionID registers a 2024-11-05 SSE session like a streamable one:
// counted against the cap and bound to the agent that opened the stream.
func (f *httpFrontend) sseSessionID(_ context.Context, r *http.Request) (string, error) {
	res := f.sessions.reserve()
	if res == nil {
		return "", fmt.Errorf("too many sessions (limit %d)", f.o.MaxSessions)
	}
	id := f.sessions.generateFor(AgentFrom(r.Context()), res)
	if a, ok := r.Context().Value(sseStreamKey{}).(*sseAnswers); ok {
		a.sid = id
	}
	return id, nil
}

// sseMessage admits a POST to /message only for a session the caller's
// agent opened, with the same body cap as /mcp, and tracks requests so that
// a cancelled one gets no answer on the stream.
func (f *httpFrontend) sseMessage(w http.ResponseWriter, r *http.Request) {
	sid := r.URL.Query().Get("sessionId")
	if terminated, err := f.sessions.validate(sid, AgentFrom(r.Context()), false); sid == "" || err != nil || terminated {
		writeJSONRPCError(w, http.StatusNotFound, -32600, "unknown, expired or terminated session")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.o.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSONRPCError(w, http.StatusRequestEntityTooLarge, -32600,
				fmt.Sprintf("request body larger than %d bytes", f.o.MaxBodyBytes))
		} else {
			writeJSONRPCError(w, http.StatusBadRequest, -32700, "could not read the request body")
		}
		return
	}
	if head, ok := parseHead(body); ok {
		switch {
		case isCancelNotification(head.Method):
			f.pending.cancel(sid, head.Params.RequestID)
		case head.isRequest() && head.Method != string(mcp.MethodInitialize):
			// Forgotten when the stream carries (or drops) the answer.
			f.pending.begin(sid, head.ID)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.sse.MessageHandler().ServeHTTP(w, r)
}

type sseStreamKey struct{}

// sseStream wraps a 2024-11-05 event stream so that the answer to a request
// the client cancelled is not sent (see pendingRequests).
func (f *httpFrontend) sseStream(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := &sseAnswers{passThrough: passThrough{w}, pending: f.pending}
		next.ServeHTTP(a, r.WithContext(context.WithValue(r.Context(), sseStreamKey{}, a)))
	})
}

// sseAnswers filters one SSE stream. mcp-go writes each event with one
// Write, on the handler's goroutine, which also names the session (in
// sseSessionID) before the first event.
type sseAnswers struct {
	passThrough
	pending *pendingRequests
	sid     string
}

var sseMessagePrefix = []byte("event: message\ndata: ")

func (a *sseAnswers) Write(p []byte) (int, error) {
	if data, ok := bytes.CutPrefix(p, sseMessagePrefix); ok && a.sid != "" {
		if id := responseID(data); id != nil && a.pending.done(a.sid, id) {
			return len(p), nil
		}
	}
	return a.ResponseWriter.Write(p)
}

// responseID returns the id of a JSON-RPC response (a message with a result
// or an error and no method), reading no further than it must: mcp-go puts
// the id before the result, which may be large.
func responseID(msg []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	answer := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		switch t {
		case "method":
			return nil
		case "id":
			if dec.Decode(&id) != nil {
				return nil
			}
		case "result", "error":
			answer = true
			if id != nil {
				return id
			}
			fallthrough
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		if answer && id != nil {
			return id
		}
	}
	return nil
}

func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg},
	})
}

// ServeHTTP listens on o.Addr until ctx ends, then shuts down gracefully:
// in-flight requests get up to grace to finish.
func (s *Server) ServeHTTP(ctx context.Context, o HTTPOptions, ready func(addr net.Addr)) error {
	h, shutdownMCP, err := s.HTTPHandler(o)
	if err != nil {
		return err
	}
	raw, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	ln := &onceCloseListener{Listener: raw}
	conns := &connTracker{conns: map[net.Conn]http.ConnState{}}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ConnState: conns.track}
	s.log.Info().Str("addr", ln.Addr().String()).Strs("tools", s.ToolNames()).Msg("serving streamable HTTP on /mcp")
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Stop accepting, then close the connections that never carried a
	// request: net/http's Shutdown counts such a connection as busy until it
	// is 5 s old, and clients keep spare ones open (Node's fetch, under the
	// TypeScript SDK, held every shutdown for 4 s). Requests in flight still
	// finish.
	_ = ln.Close()
	conns.closeUnused()
	err = errors.Join(shutdownMCP(sctx), srv.Shutdown(sctx))
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// connTracker follows the state of each connection (http.Server.ConnState).
type connTracker struct {
	mu    sync.Mutex
	conns map[net.Conn]http.ConnState
}

func (c *connTracker) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st == http.StateClosed || st == http.StateHijacked {
		delete(c.conns, conn)
		return
	}
	c.conns[conn] = st
}

// closeUnused closes the connections on which no request has started.
func (c *connTracker) closeUnused() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn, st := range c.conns {
		if st == http.StateNew {
			_ = conn.Close()
		}
	}
}

// onceCloseListener may be closed before http.Server.Shutdown closes it
// again; the second Close reports the first one's result.
type onceCloseListener struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *onceCloseListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}
