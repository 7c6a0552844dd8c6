package kit

import (
	"context"
	"encoding/json"

	"github.com/mcp-fleet/mcp-fleet/shared/kit/internal/engine"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/rs/zerolog"
)

// Call is one tool invocation as a handler sees it: its validated
// arguments, its identity and logger, its result budget (Room), and the
// ways to reach the client while it runs — progress, log messages, and
// questions to the user (elicitation), to the client's model (sampling) or
// about its roots. These work the same on every transport and in both
// protocol eras: before 2026-07-28 the kit sends the client a request and
// waits for its answer; from 2026-07-28 it answers the call with an
// input-required result and runs the handler again when the client retries
// with the answers, so a handler asks before it acts and may run more than
// once. A Call made by hand (a unit test) reaches no client.
type Call struct {
	Tool  string
	Agent string
	// Args are the raw JSON arguments, already validated against the schema.
	Args json.RawMessage
	// Log carries the correlation id, tool and agent.
	Log *zerolog.Logger

	e *engine.Call
}

// Progress sends notifications/progress when, and only when, the client
// asked for it with a progress token. Errors are ignored: progress is advice.
func (c *Call) Progress(ctx context.Context, progress, total float64, message string) {
	c.e.Progress(ctx, progress, total, message)
}

// ClientLog sends a log message to the client, if it asked for messages of
// this level (debug, info, notice, warning, error…). data is any JSON value.
func (c *Call) ClientLog(level string, data any) { c.e.ClientLog(level, data) }

// Notifier returns the server's notifier, for tools that change resources.
func (c *Call) Notifier() *Notifier { return c.e.Notifier() }

// Can reports whether the client declared it can answer method
// ("elicitation/create", "sampling/createMessage" or "roots/list"). A tool
// that cannot work without the answer checks first and explains itself.
func (c *Call) Can(method string) bool { return c.e.Can(method) }

// ElicitResult is the user's answer to an elicitation.
type ElicitResult struct {
	// Action is "accept", "decline" or "cancel".
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Elicit asks the user, through the client, to answer message with a value
// matching schema (a flat JSON object schema; nil asks for a plain
// confirmation). See Call for how it behaves in each protocol era.
func (c *Call) Elicit(ctx context.Context, message string, schema json.RawMessage) (*ElicitResult, error) {
	if schema == nil {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	params, err := json.Marshal(struct {
		Mode            string          `json:"mode,omitempty"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}{"form", message, schema})
	if err != nil {
		return nil, mcperr.Wrap(err)
	}
	raw, err := c.e.Ask(ctx, "elicitation/create", params)
	if err != nil {
		return nil, err
	}
	var res ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Action == "" {
		return nil, mcperr.New(mcperr.Upstream, "the client's answer to the question is not an elicitation result").WithRetryable(false)
	}
	return &res, nil
}

// Sample asks the client's model for a completion; params are the
// sampling/createMessage params and the raw result is returned.
func (c *Call) Sample(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return c.e.Ask(ctx, "sampling/createMessage", params)
}

// Root is one of the client's roots.
type Root = engine.Root

// Roots returns the client's roots, or nil when the client declared none.
// Before protocol 2026-07-28 they are asked once per session and kept until
// the client says they changed.
func (c *Call) Roots(ctx context.Context) ([]Root, error) {
	return c.e.Roots(ctx)
}

// Untrusted is a handler result that carries content from outside (a web
// page, a mail body, rows anyone may have written). Its text part reaches the
// model fenced as data (package untrusted); structuredContent carries Value
// plain, for programs. Value is encoded once for both. Source says where
// the content came from: a URL, "mail", "rows of t". Value is a string
// (sent as text only) or a JSON value.
type Untrusted = engine.Untrusted
