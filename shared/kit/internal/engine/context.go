package engine

import (
	"context"
)

type ctxKey int

const (
	agentKey ctxKey = iota
	principalKey
)

// WithAgent records the identity a request is made under. The HTTP
// transport sets it from the bearer token; tests use it with handlers.
func WithAgent(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, agentKey, agent)
}

// AgentFrom returns the caller's agent ("" when the server has no policy).
func AgentFrom(ctx context.Context) string {
	a, _ := ctx.Value(agentKey).(string)
	return a
}

// Principal is who authenticated an HTTP request, beside the agent it acts
// as: the audit line names both. It holds validated claims only, never a
// token.
type Principal struct {
	// Auth is how: "token" (a static bearer token), "oauth" (an OAuth
	// access token), or "" (stdio, or HTTP without authentication).
	Auth string
	// Issuer and Subject identify an OAuth caller; HTTP sessions are bound
	// to them as well as to the agent.
	Issuer  string
	Subject string
	// ClientID is the OAuth client the token was issued to.
	ClientID string
	// Name is the email or preferred_username of the token, when it has one.
	Name string
}

// WithPrincipal records who authenticated the request.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey, p)
}

// PrincipalFrom returns who authenticated the request (zero when nobody).
func PrincipalFrom(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey).(Principal)
	return p
}
