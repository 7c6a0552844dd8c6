package logging

import "context"

type correlationKey struct{}

// WithCorrelationID records the id of the call in progress, so that logs and
// upstream requests made for it can be tied together.
func WithCorrelationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationKey{}, id)
}

// CorrelationID returns the id recorded by WithCorrelationID, or "".
func CorrelationID(ctx context.Context) string {
	id, _ := ctx.Value(correlationKey{}).(string)
	return id
}
