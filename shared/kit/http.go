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
	stream   *server.StreamableHTTPServer
	sse      *server.SSEServer
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
		sessions: newSessions(o.MaxSessions, o.SessionIdle)}
	release := func(id string) { _, _ = f.sessions.terminate(id, "", true) }
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
		mux.Handle("/sse", f.guard(f.sse.SSEHandler()))
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

// mcp caps the body, enforces the session limit on initialize, then hands
// over to mcp-go.
func (f *httpFrontend) mcp(w http.ResponseWriter, r *http.Request) {
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
		// mcp-go mints a new session for every initialize, whatever
		// Mcp-Session-Id it carries, so the header must not skip the cap.
		if isInitialize(body) && !f.sessions.hasRoom() {
			writeJSONRPCError(w, http.StatusServiceUnavailable, -32000,
				fmt.Sprintf("too many sessions (limit %d); close one or retry later", f.o.MaxSessions))
			return
		}
	}
	// mcp-go does not validate the session of a standalone GET stream, and
	// mints one when none is given: a GET could then listen on another
	// agent's session, or open sessions past the cap without initialize.
	// Clients of protocol 2026-07-28 have no GET stream; mcp-go answers them.
	if r.Method == http.MethodGet && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		sid := r.Header.Get(server.HeaderKeySessionID)
		if sid == "" {
			writeJSONRPCError(w, http.StatusBadRequest, -32600, "Mcp-Session-Id header is required: send initialize first")
			return
		}
		if terminated, err := f.sessions.validate(sid, AgentFrom(r.Context()), false); err != nil || terminated {
			writeJSONRPCError(w, http.StatusNotFound, -32600, "unknown, expired or terminated session")
			return
		}
	}
	f.stream.ServeHTTP(w, r)
}

// sseSessionID registers a 2024-11-05 SSE session like a streamable one:
// counted against the cap and bound to the agent that opened the stream.
func (f *httpFrontend) sseSessionID(_ context.Context, r *http.Request) (string, error) {
	if !f.sessions.hasRoom() {
		return "", fmt.Errorf("too many sessions (limit %d)", f.o.MaxSessions)
	}
	return f.sessions.generate(AgentFrom(r.Context())), nil
}

// sseMessage admits a POST to /message only for a session the caller's
// agent opened, with the same body cap as /mcp.
func (f *httpFrontend) sseMessage(w http.ResponseWriter, r *http.Request) {
	sid := r.URL.Query().Get("sessionId")
	if terminated, err := f.sessions.validate(sid, AgentFrom(r.Context()), false); sid == "" || err != nil || terminated {
		writeJSONRPCError(w, http.StatusNotFound, -32600, "unknown, expired or terminated session")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, f.o.MaxBodyBytes)
	f.sse.MessageHandler().ServeHTTP(w, r)
}

func isInitialize(body []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
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
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
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
	err = errors.Join(shutdownMCP(sctx), srv.Shutdown(sctx))
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
