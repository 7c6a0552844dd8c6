package engine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
	"github.com/mcp-fleet/mcp-fleet/shared/urlrule"
)

// HTTPOptions configure the HTTP side: streamable HTTP at /mcp, /healthz,
// /metrics, and optionally the 2024-11-05 SSE transport.
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
	// SSE also serves the 2024-11-05 HTTP+SSE transport at /sse and /message.
	SSE bool
	// Health reports the process's health for /healthz; nil means always ok.
	Health func(w http.ResponseWriter, r *http.Request, extra map[string]any)
	// Grace bounds how long shutdown waits for requests in flight (10s).
	Grace time.Duration
	// OAuth, when set, also accepts OAuth access tokens (after the static
	// tokens), serves the Protected Resource Metadata, and answers
	// refusals with OAuth challenges.
	OAuth *oauth.Verifier
}

// httpFrontend is the HTTP side of a server.
type httpFrontend struct {
	s        *Server
	o        HTTPOptions
	loopback bool
	listen   string
	// authHash is sha256 of the single bearer token, compared in constant
	// time with the hash of what a request presents.
	authHash [32]byte
	// prm is the Protected Resource Metadata document (OAuth only).
	prm      []byte
	sessions *sessions
	// closingCtx ends at shutdown: event streams close, sessions end.
	closingCtx context.Context
	closeNow   context.CancelFunc
	// workCtx ends when the shutdown grace period is over: requests still
	// served on SSE streams are cancelled.
	workCtx    context.Context
	cancelWork context.CancelFunc
	// background counts requests being served — on a POST, or after their
	// POST was answered (the 2024-11-05 SSE transport) — so shutdown can let
	// them finish before it ends the sessions.
	background sync.WaitGroup
}

func isLoopbackHost(h string) bool { return urlrule.IsLoopbackHost(h) }

// CheckHTTPOptions refuses configurations that would expose tools without
// authentication.
func (s *Server) CheckHTTPOptions(o HTTPOptions) error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", o.Addr, err)
	}
	hasTokens := o.AuthToken != "" || (s.opts.Policy != nil && s.opts.Policy.HasTokens()) || o.OAuth != nil
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
		if o.OAuth != nil {
			return errors.New("--insecure-no-auth cannot be combined with OAuth (MCP_OAUTH_ISSUER): choose one")
		}
		return nil
	}
	if o.OAuth != nil && s.opts.Policy != nil && s.opts.Policy.IdentityRules() == 0 {
		return errors.New("OAuth (MCP_OAUTH_ISSUER) with an ACL policy needs identities: rules in the policy mapping token subjects, groups or scopes to agents; without them every OAuth caller would be refused")
	}
	if !hasTokens {
		return errors.New("the HTTP transport needs a bearer token: set MCP_AUTH_TOKEN (or MCP_AGENT_TOKENS with an ACL policy), or accept OAuth access tokens with MCP_OAUTH_ISSUER and MCP_OAUTH_RESOURCE; --insecure-no-auth is accepted on loopback only")
	}
	return nil
}

// HTTPHandler returns the full HTTP handler and a function that, at
// shutdown, ends its event streams, waits (until ctx ends) for requests
// answered on SSE streams, and ends its sessions.
func (s *Server) HTTPHandler(o HTTPOptions) (http.Handler, func(ctx context.Context), error) {
	if err := s.CheckHTTPOptions(o); err != nil {
		return nil, nil, err
	}
	host, _, _ := net.SplitHostPort(o.Addr)
	f := &httpFrontend{s: s, o: o, loopback: isLoopbackHost(host) || host == "", listen: host,
		sessions: newSessions(s, o.MaxSessions, o.SessionIdle)}
	f.authHash = sha256.Sum256([]byte(o.AuthToken))
	f.closingCtx, f.closeNow = context.WithCancel(context.Background())
	f.workCtx, f.cancelWork = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", f.health)
	if o.OAuth != nil {
		f.prm = oauth.PRM(o.OAuth.Config())
		for _, p := range prmPaths(o.OAuth.Config()) {
			mux.HandleFunc(p, f.servePRM)
		}
	}
	// Metrics are for the operator's scraper, which holds a static token;
	// OAuth tokens are for MCP clients and open the MCP endpoints only.
	mux.Handle("/metrics", f.guard(s.metrics.Handler(), false))
	mux.Handle("/mcp", f.guard(http.HandlerFunc(f.mcp), true))
	if o.SSE {
		mux.Handle("/sse", f.guard(http.HandlerFunc(f.sseStream), true))
		mux.Handle("/message", f.guard(http.HandlerFunc(f.sseMessage), true))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeHTTPError(w, http.StatusNotFound, "not found: the MCP endpoint is /mcp")
	})
	if o.SessionIdle > 0 {
		go func() {
			t := time.NewTicker(min(o.SessionIdle/2, time.Minute))
			defer t.Stop()
			for {
				select {
				case <-t.C:
					f.sessions.sweep()
				case <-f.closingCtx.Done():
					return
				}
			}
		}()
	}
	shutdown := func(ctx context.Context) {
		f.closeNow()
		done := make(chan struct{})
		go func() { f.background.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			// The grace period is over: cancel what still runs.
			f.cancelWork()
			f.sessions.closeAll()
			<-done
		}
		f.cancelWork()
		f.sessions.closeAll()
	}
	return mux, shutdown, nil
}

func (f *httpFrontend) health(w http.ResponseWriter, r *http.Request) {
	if !f.hostAllowed(r.Host) {
		writeHTTPError(w, http.StatusForbidden, "Forbidden: invalid Host header")
		return
	}
	extra := map[string]any{"server": f.s.info.Name, "version": f.s.info.Version,
		"tools": len(f.s.tools), "sessions": f.sessions.count()}
	if f.o.Health == nil {
		extra["status"] = "ok"
		body, _ := json.Marshal(extra)
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, body)
		return
	}
	f.o.Health(w, r, extra)
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

// writeRPCError answers with a JSON-RPC error and an HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id []byte, code int, msg string) {
	writeJSON(w, status, wire.AppendError(nil, id, code, msg, nil))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

var jsonContentType = []string{"application/json"}

// writeHTTPError answers outside JSON-RPC (routing, Host checks).
func writeHTTPError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// ServeHTTP listens on o.Addr until ctx ends, then shuts down gracefully:
// it stops accepting, ends event streams and sessions, and gives requests
// in flight up to o.Grace to finish. ready, when set, learns the address.
func (s *Server) ServeHTTP(ctx context.Context, o HTTPOptions, ready func(addr net.Addr)) error {
	h, endSessions, err := s.HTTPHandler(o)
	if err != nil {
		return err
	}
	raw, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	s.log.Info().Str("addr", raw.Addr().String()).Strs("tools", s.ToolNames()).Msg("serving streamable HTTP on /mcp")
	if ready != nil {
		ready(raw.Addr())
	}
	return ServeListener(ctx, raw, h, o.Grace, endSessions)
}

// ServeListener serves h on ln until ctx ends, then shuts down within grace.
func ServeListener(ctx context.Context, raw net.Listener, h http.Handler, grace time.Duration, beforeShutdown func(context.Context)) error {
	if grace <= 0 {
		grace = 10 * time.Second
	}
	ln := &onceCloseListener{Listener: raw}
	conns := &connTracker{conns: map[net.Conn]http.ConnState{}}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ConnState: conns.track, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// Stop accepting, end streams, then close the connections that never
	// carried a request: net/http's Shutdown counts such a connection as busy
	// until it is 5 s old, and clients keep spare ones open. Requests in
	// flight still finish. Serve reports each connection it accepted (as
	// new) before it accepts again, so once it has returned, every one is
	// tracked: one accepted just as the listener closed is closed too.
	_ = ln.Close()
	<-errc
	if beforeShutdown != nil {
		beforeShutdown(sctx)
	}
	conns.closeUnused()
	err := srv.Shutdown(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
		return fmt.Errorf("requests still running after the %s grace period were cut off", grace)
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
