package engine

import (
	"context"
	"encoding/json"
	"time"
)

// Tool is a tool as the engine serves it. The kit builds it from the
// author's definition, which it has already checked; the engine compiles
// the schemas, applies the policy and the caps, and runs Handler.
type Tool struct {
	Name        string
	Description string
	// Effect is "read-only", "additive" or "destructive"; --read-only keeps
	// only read-only tools.
	Effect     string
	Idempotent bool
	OpenWorld  bool
	// Def is the tool's tools/list entry, encoded once; Advertised is the
	// input schema as it shows there.
	Def        []byte
	Advertised json.RawMessage
	// InputSchema checks every call's arguments; OutputSchema, when set,
	// every result's structuredContent.
	InputSchema   json.RawMessage
	OutputSchema  json.RawMessage
	Paging        string
	Timeout       time.Duration
	MaxConcurrent int
	AuditOmit     []string
	// Handler returns a JSON-encodable value, a string, an Untrusted value,
	// json.RawMessage, or an error.
	Handler func(ctx context.Context, c *Call) (any, error)
}

// ReadOnly reports whether the tool changes nothing.
func (t *Tool) ReadOnly() bool { return t.Effect == "read-only" }

// Untrusted is a result whose content comes from outside: its text part
// reaches the model fenced as data; structuredContent carries Value plain.
type Untrusted struct {
	Source string
	Value  any
}
