package kit

import (
	"context"

	"github.com/mcp-fleet/mcp-fleet/shared/logging"
)

type ctxKey int

const (
	agentKey ctxKey = iota
	stdioKey
	reservationKey
)

// WithAgent records the identity a call is made under. Transports set it:
// stdio from MCP_AGENT, HTTP from the bearer token. Tests use it with the
// in-process client.
func WithAgent(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, agentKey, agent)
}

// AgentFrom returns the caller's agent ("" when the server has no policy).
func AgentFrom(ctx context.Context) string {
	a, _ := ctx.Value(agentKey).(string)
	return a
}

func withStdio(ctx context.Context) context.Context { return context.WithValue(ctx, stdioKey, true) }

func isStdio(ctx context.Context) bool { b, _ := ctx.Value(stdioKey).(bool); return b }

func withCorrelation(ctx context.Context, id string) context.Context {
	return logging.WithCorrelationID(ctx, id)
}

// CorrelationID returns the id the kit gave the current call; upstream
// clients send it on to make one call traceable across systems.
func CorrelationID(ctx context.Context) string { return logging.CorrelationID(ctx) }
