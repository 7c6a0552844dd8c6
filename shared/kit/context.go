package kit

import (
	"context"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

type ctxKey int

const agentKey ctxKey = iota

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

// CorrelationID returns the id the kit gave the current call; upstream
// clients send it on to make one call traceable across systems.
func CorrelationID(ctx context.Context) string { return logging.CorrelationID(ctx) }
