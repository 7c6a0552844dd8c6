package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/rs/zerolog"
)

// Effect says what a tool does to the world. It is mandatory: the kit derives
// the MCP annotations from it (mcp-go's defaults call every tool destructive)
// and --read-only keeps only ReadOnly tools.
type Effect int

const (
	effectUnset Effect = iota
	// ReadOnly tools change nothing.
	ReadOnly
	// Additive tools create or append but never overwrite or remove.
	Additive
	// Destructive tools may overwrite or delete.
	Destructive
)

func (e Effect) String() string {
	switch e {
	case ReadOnly:
		return "read-only"
	case Additive:
		return "additive"
	case Destructive:
		return "destructive"
	}
	return "unset"
}

// Tool is one tool: its definition and its handler, side by side.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments; the kit validates every
	// call against it before the handler runs.
	InputSchema json.RawMessage
	// OutputSchema, when set, describes the structured result.
	OutputSchema json.RawMessage
	Effect       Effect
	// Idempotent: repeating the call with the same arguments has no further
	// effect. Ignored for ReadOnly tools, which always are.
	Idempotent bool
	// OpenWorld: the tool reaches systems outside this process's own state
	// (a remote API, the web).
	OpenWorld bool
	// Timeout bounds one call; zero means the server default.
	Timeout time.Duration
	// AuditOmit names top-level arguments whose values the audit line
	// replaces with their size: contents that are data, not intent (a file
	// body, a request body), and may hold secrets no key name reveals.
	AuditOmit []string
	Handler   Handler
}

// Handler does a tool's work. It returns a value that the kit sends as JSON
// (text and structuredContent), or an error; an *mcperr.Error reaches the
// client as is, anything else as INTERNAL_ERROR with its text kept in logs.
// A handler may also return a ready *mcp.CallToolResult.
type Handler func(ctx context.Context, call *Call) (any, error)

// Call is one invocation as a handler sees it.
type Call struct {
	Tool  string
	Agent string
	// Args are the raw JSON arguments, already validated against the schema.
	Args json.RawMessage
	// Log carries the correlation id, tool and agent.
	Log *zerolog.Logger
	req mcp.CallToolRequest
	srv *server.MCPServer
}

// Bind decodes the validated arguments into v.
func (c *Call) Bind(v any) error {
	if len(c.Args) == 0 {
		return nil
	}
	if err := json.Unmarshal(c.Args, v); err != nil {
		return mcperr.Invalid("arguments", nil, "arguments matching the tool's schema", "cannot decode arguments: %v", err)
	}
	return nil
}

// Progress sends notifications/progress when, and only when, the client
// asked for it with a progress token. Errors are ignored: progress is advice.
func (c *Call) Progress(ctx context.Context, progress, total float64, message string) {
	if c.srv == nil || c.req.Params.Meta == nil || c.req.Params.Meta.ProgressToken == nil {
		return
	}
	params := map[string]any{"progressToken": c.req.Params.Meta.ProgressToken, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	_ = c.srv.SendNotificationToClient(ctx, "notifications/progress", params)
}

// validToolName: a lowercase letter, then up to 63 of a-z 0-9 _. (By hand:
// a counted-repetition regexp costs start-up time in every server.)
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// check verifies a definition at registration, so a malformed tool is a
// start-up error and never a runtime surprise.
func (t *Tool) check() error {
	if !validToolName(t.Name) {
		return fmt.Errorf("tool %q: a name is a lowercase letter, then up to 63 of a-z 0-9 _", t.Name)
	}
	if t.Description == "" {
		return fmt.Errorf("tool %q: description is required", t.Name)
	}
	if t.Effect == effectUnset || t.Effect > Destructive {
		return fmt.Errorf("tool %q: Effect must be ReadOnly, Additive or Destructive", t.Name)
	}
	if t.Handler == nil {
		return fmt.Errorf("tool %q: no handler", t.Name)
	}
	var schema struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema.Type != "object" {
		return fmt.Errorf("tool %q: input schema must be a JSON object schema of type \"object\"", t.Name)
	}
	return nil
}

// Annotations returns the MCP hints derived from Effect, Idempotent and OpenWorld.
func (t *Tool) Annotations() mcp.ToolAnnotation {
	ro := t.Effect == ReadOnly
	destructive := t.Effect == Destructive
	idem := ro || t.Idempotent
	open := t.OpenWorld
	return mcp.ToolAnnotation{Title: t.Title, ReadOnlyHint: &ro, DestructiveHint: &destructive,
		IdempotentHint: &idem, OpenWorldHint: &open}
}

// Definition is the mcp.Tool sent in tools/list.
func (t *Tool) Definition() mcp.Tool {
	def := mcp.Tool{
		Name:           t.Name,
		Title:          t.Title,
		Description:    t.Description,
		RawInputSchema: t.InputSchema,
		Annotations:    t.Annotations(),
	}
	if len(t.OutputSchema) > 0 {
		def.RawOutputSchema = t.OutputSchema
	}
	return def
}
