package engine

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/wire"
	"github.com/mcp-fleet/mcp-fleet/shared/oauth"
)

// errBadStaticToken: a bearer token that is no static token, on a server
// without OAuth.
var errBadStaticToken = errors.New("unknown bearer token")

// guard applies, in order: Host and Origin checks (DNS rebinding), bearer
// authentication, and puts the caller's agent and principal in the
// request context. oauthOK: an OAuth access token is accepted too.
func (f *httpFrontend) guard(next http.Handler, oauthOK bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.hostAllowed(r.Host) {
			writeHTTPError(w, http.StatusForbidden, "Forbidden: invalid Host header")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !f.originAllowed(origin) {
			writeHTTPError(w, http.StatusForbidden, "Forbidden: invalid Origin header")
			return
		}
		agent, p, err := f.authenticate(r, oauthOK)
		if err != nil {
			f.refuse(w, r, p, err, oauthOK)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(WithAgent(r.Context(), agent), p)))
	})
}

// authenticate finds the agent a request acts as. Static tokens come
// first (a constant-time digest lookup), then an OAuth access token, whose
// identity the policy's identities rules map to an agent; without a policy
// a valid OAuth token gets every tool, as MCP_AUTH_TOKEN does. Only the
// header counts: a token in the query string is never read.
func (f *httpFrontend) authenticate(r *http.Request, oauthOK bool) (string, Principal, error) {
	if f.o.NoAuth {
		return "", Principal{}, nil
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", Principal{}, oauth.ErrNoToken
	}
	if agent, ok := f.staticToken(tok); ok {
		return agent, Principal{Auth: "token"}, nil
	}
	if f.o.OAuth == nil || !oauthOK {
		return "", Principal{}, errBadStaticToken
	}
	// The remote address names the caller for the per-client limit on
	// introspection calls (opaque tokens): a flood of made-up tokens from
	// one address cannot use up the calls everyone else needs.
	id, err := f.o.OAuth.Verify(oauth.WithClient(r.Context(), remoteIP(r)), tok)
	p := Principal{Auth: "oauth", Issuer: id.Issuer, Subject: id.Subject, ClientID: id.ClientID, Name: id.Name}
	if err != nil {
		return "", p, err
	}
	pol := f.s.opts.Policy
	if pol == nil {
		return "", p, nil
	}
	agent, ok := pol.AgentForIdentity(acl.Identity{Issuer: id.Issuer, Subject: id.Subject, ClientID: id.ClientID,
		Groups: id.Groups, Scopes: id.Scopes})
	if !ok {
		return "", p, oauth.ErrUnmapped
	}
	return agent, p, nil
}

// remoteIP is the host part of the request's remote address.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// staticToken looks tok up among the static tokens: the policy's, or the
// single MCP_AUTH_TOKEN.
func (f *httpFrontend) staticToken(tok string) (string, bool) {
	if p := f.s.opts.Policy; p != nil {
		return p.AgentForToken(tok)
	}
	if f.o.AuthToken == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte(tok))
	return "", subtle.ConstantTimeCompare(sum[:], f.authHash[:]) == 1
}

// refuse answers a request that failed authentication. With OAuth on, the
// status and WWW-Authenticate tell the client where the authorization
// server is and what to ask it for; the body stays a JSON-RPC error.
func (f *httpFrontend) refuse(w http.ResponseWriter, r *http.Request, p Principal, err error, oauthOK bool) {
	if f.o.OAuth == nil || !oauthOK {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-fleet"`)
		writeRPCError(w, http.StatusUnauthorized, nil, -32001, "unauthorized: a valid bearer token is required")
		return
	}
	status, challenge := oauth.Challenge(f.o.OAuth.Config(), err)
	if challenge != "" {
		w.Header().Set("WWW-Authenticate", challenge)
	}
	ev := f.s.log.Warn()
	if errors.Is(err, oauth.ErrNoToken) {
		// Every OAuth client's first request has no token: not news.
		ev = f.s.log.Debug()
	}
	ev = ev.Str("event", "auth_refused").Str("path", r.URL.Path).Int("status", status)
	var it *oauth.InvalidTokenError
	switch {
	case errors.As(err, &it):
		ev = ev.Str("reason", it.Reason)
		if it.Subject != "" {
			ev = ev.Str("sub", it.Subject)
		}
	case errors.Is(err, oauth.ErrInsufficientScope):
		ev = ev.Str("reason", "scope").Str("sub", p.Subject)
	case errors.Is(err, oauth.ErrUnmapped):
		ev = ev.Str("reason", "unmapped").Str("sub", p.Subject).Str("client_id", p.ClientID)
	case errors.Is(err, oauth.ErrUnavailable):
		ev = ev.Str("reason", "authorization server unavailable").Err(err)
	case errors.Is(err, oauth.ErrNoToken):
		ev = ev.Str("reason", "no token")
	default:
		ev = ev.Str("reason", "unknown token")
	}
	ev.Msg("request refused")
	var msg string
	code := -32001
	switch {
	case errors.Is(err, oauth.ErrInsufficientScope):
		msg = "forbidden: the token lacks a required scope"
	case errors.Is(err, oauth.ErrUnmapped):
		msg = "forbidden: this identity is mapped to no agent"
	case errors.Is(err, oauth.ErrUnavailable):
		w.Header().Set("Retry-After", "30")
		msg, code = "the token cannot be checked now: the authorization server is unavailable; retry shortly", wire.CodeServerBusy
	case it != nil:
		msg = "unauthorized: " + it.Description
	default:
		msg = "unauthorized: a valid bearer token is required"
	}
	writeRPCError(w, status, nil, code, msg)
}

// prmPaths are where the Protected Resource Metadata is served: the
// well-known URI of the /mcp endpoint, the root form clients fall back
// to, and the one derived from the configured resource when it differs.
func prmPaths(cfg oauth.Config) []string {
	paths := []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"}
	if p := oauth.MetadataPath(cfg); p != paths[0] && p != paths[1] {
		paths = append(paths, p)
	}
	return paths
}

// servePRM serves the Protected Resource Metadata: public (clients read
// it before they hold a token), so without authentication and readable
// from any origin, but still only under an allowed Host.
func (f *httpFrontend) servePRM(w http.ResponseWriter, r *http.Request) {
	if !f.hostAllowed(r.Host) {
		writeHTTPError(w, http.StatusForbidden, "Forbidden: invalid Host header")
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.Set("Cache-Control", "max-age=300")
		writeJSON(w, http.StatusOK, f.prm)
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET")
		h.Set("Access-Control-Allow-Headers", "*")
		h.Set("Access-Control-Max-Age", "3600")
		w.WriteHeader(http.StatusNoContent)
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		writeHTTPError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}
